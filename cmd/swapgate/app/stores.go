package app

import (
	"github.com/swapgate/swapgate/actors/engine"
	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/tickets"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/actors/txm"
	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
	"github.com/swapgate/swapgate/store/postgres"
)

// Stores is the open store as the service hands it out: one value per kind
// of state, typed as package store's interface for it, and each consumer
// given the one its own small interface is cut from. There is no interface
// of everything: a consumer sees only its kind of state, and a backend is
// held to each kind separately (its compile-time guards, and the contract
// suites of internal/storecontract).
type Stores struct {
	Partners   store.Partners
	FeeWallets store.FeeWallets
	Ledger     store.Ledger
	Settlement store.Settlement
	// Payouts are on-chain settlement's transfers (admin.PayoutStore with
	// Settlement).
	Payouts     store.Payouts
	Webhooks    store.Webhooks
	Swaps       store.Swaps
	Inbound     store.Inbound
	Onramp      store.Onramp
	Idempotency store.Idempotency
	Usage       store.Usage
	Portal      store.Portal
	QuoteRefs   store.QuoteRefs
	ChainLog    store.ChainLog
	TxIntents   store.TxIntents
	// Health is the readiness check, the caches' figures and the close.
	store.Health

	// backend is the concrete store, for what only one backend offers
	// (Backend).
	backend any
}

// Backend is the concrete store (*pebblestore.Store or *postgres.Store),
// for the capabilities only one backend has, asked for by type assertion
// against an interface the asker declares: Pebble's WAL sync figures,
// PostgreSQL's partner change notices, and a cluster's shared tables
// (tickets, partner epochs, idempotency claims).
func (s *Stores) Backend() any { return s.backend }

// pebbleStores hands out the Pebble store by kind of state.
func pebbleStores(s *pebblestore.Store) *Stores {
	return &Stores{Partners: s, FeeWallets: s, Ledger: s, Settlement: s, Webhooks: s, Swaps: s, Inbound: s,
		Onramp: s, Idempotency: s, Usage: s, Portal: s, QuoteRefs: s, ChainLog: s, TxIntents: s, Health: s, backend: s, Payouts: s}
}

// postgresStores hands out the PostgreSQL store by kind of state.
func postgresStores(s *postgres.Store) *Stores {
	return &Stores{Partners: s, FeeWallets: s, Ledger: s, Settlement: s, Webhooks: s, Swaps: s, Inbound: s,
		Onramp: s, Idempotency: s, Usage: s, Portal: s, QuoteRefs: s, ChainLog: s, TxIntents: s, Health: s, backend: s, Payouts: s}
}

// Which kind of state each consumer takes: its own small interface, cut
// from the store's interface for that kind (a consumer's method that the
// store does not promise fails the build here, not at run time).
var (
	// Accounts and API keys: the operator's partner edits, and the
	// edge's authentication by key digest.
	_ admin.PartnerStore = store.Partners(nil)
	_ edge.PartnerFinder = store.Partners(nil)
	// Fee wallets: the account endpoints, and the quote path's lookup.
	_ edge.FeeWalletStore    = store.FeeWallets(nil)
	_ engine.FeeWalletFinder = store.FeeWallets(nil)
	// Ledger and earnings: the group commit's appends and the account
	// endpoints' reads.
	_ ledger.Appender   = store.Ledger(nil)
	_ edge.LedgerReader = store.Ledger(nil)
	// Settlement: read and applied by admin.Settle.
	_ admin.SettlementStore = store.Settlement(nil)
	// Payouts: planned, sent and finished by admin.SettlePayouts and the
	// transaction manager's payout hook, with the settlement's reads.
	_ admin.PayoutStore = payoutStore{}
	// Webhooks, the outbox and delivery records.
	_ edge.WebhookRegistrations = store.Webhooks(nil)
	_ webhookpool.Store         = store.Webhooks(nil)
	// Trackers: swaps and intents deposits, multi-step inbound deposits.
	_ tracker.Store     = store.Swaps(nil)
	_ edge.DepositSwaps = store.Swaps(nil)
	_ edge.QuoteSwaps   = store.Swaps(nil)
	_ inboundrun.Store  = store.Inbound(nil)
	// On-ramp orders.
	_ onrampdesk.Store = store.Onramp(nil)
	// Idempotency records.
	_ edge.IdempotencyStore = store.Idempotency(nil)
	// Partners' hourly usage, flushed by the edge's rate limiter.
	_ edge.UsageStore = store.Usage(nil)
	// The partner portal's login codes and sessions, and the operator's
	// hook that ends them.
	_ edge.PortalStore     = store.Portal(nil)
	_ admin.PortalSessions = store.Portal(nil)
	// Issued-quote tickets: the ticket log, with the store's reference
	// index of multi-step quotes.
	_ tickets.Store = ticketHome{}
	_ quoteRefIndex = store.QuoteRefs(nil)
	// The sandbox chains' operation log, and the deliveries they made.
	_ sandboxchain.Store         = store.ChainLog(nil)
	_ sandboxchain.DeliveryStore = store.ChainLog(nil)
	// The transaction manager's intents: the manager's own reads and
	// writes, the operator's `swapgate tx` readings, and the sealed
	// operator key.
	_ txm.Store            = store.TxIntents(nil)
	_ admin.TxIntentReader = store.TxIntents(nil)
	_ OperatorKeys         = store.TxIntents(nil)
)

// accountStore is the account endpoints' store (edge.AccountStore), which
// spans two kinds of state: fee wallets, and the ledger's reads. (Embedded
// under other names: store.FeeWallets's own name is one of its methods.)
type accountStore struct {
	wallets
	ledgerReads
}

type (
	wallets     = store.FeeWallets
	ledgerReads = store.Ledger
)

var _ edge.AccountStore = accountStore{}
