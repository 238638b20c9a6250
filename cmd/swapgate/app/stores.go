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
	pebblestore "github.com/swapgate/swapgate/store/pebble"
	"github.com/swapgate/swapgate/store/postgres"
)

// The store's state is reached only through small interfaces, each
// declared by the package that uses it; this composition root is the one
// place that knows the concrete store. A second backend is a type that
// satisfies the same list (and passes the contract suites of
// internal/storecontract). By kind of state:
var (
	// Accounts and API keys: the operator's partner edits, and the
	// edge's authentication by key digest.
	_ admin.PartnerStore = (*pebblestore.Store)(nil)
	_ edge.PartnerFinder = (*pebblestore.Store)(nil)
	// Fee wallets: the account endpoints, and the quote path's lookup.
	_ edge.FeeWalletStore    = (*pebblestore.Store)(nil)
	_ engine.FeeWalletFinder = (*pebblestore.Store)(nil)
	// Ledger and earnings: the group commit's appends and the account
	// endpoints' reads.
	_ ledger.Appender   = (*pebblestore.Store)(nil)
	_ edge.LedgerReader = (*pebblestore.Store)(nil)
	// Settlement: read and applied by admin.Settle.
	_ admin.SettlementStore = (*pebblestore.Store)(nil)
	// Webhooks, the outbox and delivery records.
	_ edge.WebhookRegistrations = (*pebblestore.Store)(nil)
	_ webhookpool.Store         = (*pebblestore.Store)(nil)
	// Trackers: swaps and intents deposits, multi-step inbound deposits.
	_ tracker.Store     = (*pebblestore.Store)(nil)
	_ edge.DepositSwaps = (*pebblestore.Store)(nil)
	_ inboundrun.Store  = (*pebblestore.Store)(nil)
	// On-ramp orders.
	_ onrampdesk.Store = (*pebblestore.Store)(nil)
	// Idempotency records.
	_ edge.IdempotencyStore = (*pebblestore.Store)(nil)
	// Partners' hourly usage, flushed by the edge's rate limiter.
	_ edge.UsageStore = (*pebblestore.Store)(nil)
	// The partner portal's login codes and sessions, and the operator's
	// hook that ends them.
	_ edge.PortalStore     = (*pebblestore.Store)(nil)
	_ admin.PortalSessions = (*pebblestore.Store)(nil)
	// Issued-quote tickets: the ticket log, with the store's reference
	// index of multi-step quotes.
	_ tickets.Store = ticketHome{}
	_ quoteRefIndex = (*pebblestore.Store)(nil)
	// The sandbox chains' operation log, and the deliveries they made.
	_ sandboxchain.Store         = (*pebblestore.Store)(nil)
	_ sandboxchain.DeliveryStore = (*pebblestore.Store)(nil)
)

// The same list for the PostgreSQL backend, whose contract suites run in
// store/postgres. Tickets have no row here: they stay in the data
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
