package app

import (
	"github.com/swapgate/swapgate/actors/engine"
	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/tickets"
	"github.com/swapgate/swapgate/actors/tracker"
	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/persistence/postgres"
)

// The store's state is reached only through small interfaces, each
// declared by the package that uses it; this composition root is the one
// place that knows the concrete store. A second backend is a type that
// satisfies the same list (and passes the contract suites of
// persistence/storetest). By kind of state:
var (
	// Accounts and API keys: the operator's partner edits, and the
	// edge's authentication by key digest.
	_ admin.PartnerStore = (*persistence.Store)(nil)
	_ edge.PartnerFinder = (*persistence.Store)(nil)
	// Fee wallets: the account endpoints, and the quote path's lookup.
	_ edge.FeeWalletStore    = (*persistence.Store)(nil)
	_ engine.FeeWalletFinder = (*persistence.Store)(nil)
	// Ledger and earnings: the group commit's appends and the account
	// endpoints' reads.
	_ ledger.Appender   = (*persistence.Store)(nil)
	_ edge.LedgerReader = (*persistence.Store)(nil)
	// Settlement: read and applied by admin.Settle.
	_ admin.SettlementStore = (*persistence.Store)(nil)
	// Webhooks, the outbox and delivery records.
	_ edge.WebhookRegistrations = (*persistence.Store)(nil)
	_ webhookpool.Store         = (*persistence.Store)(nil)
	// Trackers: swaps and intents deposits, multi-step inbound deposits.
	_ tracker.Store     = (*persistence.Store)(nil)
	_ edge.DepositSwaps = (*persistence.Store)(nil)
	_ inboundrun.Store  = (*persistence.Store)(nil)
	// On-ramp orders.
	_ onrampdesk.Store = (*persistence.Store)(nil)
	// Idempotency records.
	_ edge.IdempotencyStore = (*persistence.Store)(nil)
	// Partners' hourly usage, flushed by the edge's rate limiter.
	_ edge.UsageStore = (*persistence.Store)(nil)
	// The partner portal's login codes and sessions, and the operator's
	// hook that ends them.
	_ edge.PortalStore     = (*persistence.Store)(nil)
	_ admin.PortalSessions = (*persistence.Store)(nil)
	// Issued-quote tickets: the ticket log, with the store's reference
	// index of multi-step quotes.
	_ tickets.Store = ticketHome{}
	_ quoteRefIndex = (*persistence.Store)(nil)
	// The sandbox chains' operation log, and the deliveries they made.
	_ sandboxchain.Store         = (*persistence.Store)(nil)
	_ sandboxchain.DeliveryStore = (*persistence.Store)(nil)
)

// The same list for the PostgreSQL backend, whose contract suites run in
// persistence/postgres. Tickets have no row here: they stay in the data
// directory's ticket log whichever backend keeps the rest.
var (
	_ edge.PortalStore           = (*postgres.Store)(nil)
	_ admin.PortalSessions       = (*postgres.Store)(nil)
	_ admin.PartnerStore         = (*postgres.Store)(nil)
	_ edge.PartnerFinder         = (*postgres.Store)(nil)
	_ edge.FeeWalletStore        = (*postgres.Store)(nil)
	_ engine.FeeWalletFinder     = (*postgres.Store)(nil)
	_ ledger.Appender            = (*postgres.Store)(nil)
	_ edge.LedgerReader          = (*postgres.Store)(nil)
	_ admin.SettlementStore      = (*postgres.Store)(nil)
	_ edge.WebhookRegistrations  = (*postgres.Store)(nil)
	_ webhookpool.Store          = (*postgres.Store)(nil)
	_ tracker.Store              = (*postgres.Store)(nil)
	_ edge.DepositSwaps          = (*postgres.Store)(nil)
	_ inboundrun.Store           = (*postgres.Store)(nil)
	_ onrampdesk.Store           = (*postgres.Store)(nil)
	_ edge.IdempotencyStore      = (*postgres.Store)(nil)
	_ edge.UsageStore            = (*postgres.Store)(nil)
	_ quoteRefIndex              = (*postgres.Store)(nil)
	_ sandboxchain.Store         = (*postgres.Store)(nil)
	_ sandboxchain.DeliveryStore = (*postgres.Store)(nil)
)
