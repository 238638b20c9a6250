package store

import (
	"context"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/portal"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// The interfaces below are each backend's promise, one per kind of state:
// both backends implement every one of them (their compile-time guards say
// so), the contract suites of internal/storecontract hold them to the same
// promises, and the composition root hands each consumer the one its own
// small interface is cut from. None is everything: a kind of state that
// grows past 20 methods is split (internal/archtest counts them).

// Partners is partners' accounts and API keys: the operator's edits
// (admin.PartnerStore) and the edge's authentication by key digest
// (edge.PartnerFinder). A write is durable when acknowledged; a partner's
// read-modify-write runs under the store's partner lock.
type Partners interface {
	CreatePartner(ctx context.Context, p *account.Partner) error
	ListPartners(ctx context.Context) ([]*account.Partner, error)
	UpdatePartner(ctx context.Context, id string, fn func(*account.Partner) error) (*account.Partner, error)
	PartnerByKeyDigest(ctx context.Context, digest [32]byte) (*account.Partner, error)
}

// FeeWallets is partners' fee wallets: the account endpoints'
// (edge.FeeWalletStore) and the quote path's lookup
// (engine.FeeWalletFinder), which a backend may answer from a cache its
// writes refresh. A write is durable when acknowledged.
type FeeWallets interface {
	FeeWallets(ctx context.Context, partnerID string) ([]account.FeeWallet, error)
	PutFeeWallet(ctx context.Context, partnerID, ecosystem, address string) error
	DeleteFeeWallet(ctx context.Context, partnerID, ecosystem string) error
	FeeWallet(ctx context.Context, partnerID, ecosystem string) (addr string, ok bool, err error)
}

// Ledger is partner quotes' activity records and earnings: the group
// commit's appends (ledger.Appender), which never overwrite a quote
// already recorded, and the account endpoints' reads (edge.LedgerReader).
type Ledger interface {
	RecordQuotes(ctx context.Context, recs []EncodedQuote, d Durability) ([]bool, error)
	Earnings(ctx context.Context, partnerID string) (*account.Earnings, error)
	Activities(ctx context.Context, partnerID string, q account.ActivityQuery) ([]*account.Activity, string, error)
	Stats(ctx context.Context, partnerID string, from, to time.Time) (*account.Stats, error)
}

// Settlement is what admin.Settle reads and applies
// (admin.SettlementStore): pending earnings by ecosystem, applied all or
// nothing.
type Settlement interface {
	// FeeWalletsIn returns partner ID → fee wallet address in ecosystem.
	FeeWalletsIn(ctx context.Context, ecosystem string) (map[string]string, error)
	// PendingEarnings calls fn with a copy of the record of every earning
	// pending in ecosystem, stopping at fn's first error.
	PendingEarnings(ctx context.Context, ecosystem string, fn func(*account.Activity) error) error
	// ApplySettlement stores paid records, drops paid and forgotten ones
	// from the pending set and records batch (when it has an ID), all or
	// nothing, durably; a record no longer pending fails it with
	// account.ErrSettlementConflict and nothing applied.
	ApplySettlement(ctx context.Context, ecosystem string, batch *account.SettlementBatch, paid, forgotten []*account.Activity) error
}

// Payouts is the transfers on-chain settlement runs plan (admin.Settle's
// PayoutStore and the payout hook's): a plan stored whole with its
// earnings out of the pending set, and each transfer finished once, its
// earnings settled with it or pending again. Every write is durable when
// acknowledged.
type Payouts interface {
	// PlanPayouts stores transfers (each new, in an open state) and takes
	// every earning they name out of ecosystem's pending set, drops the
	// forgotten records from it and records batch (when it has an ID), all
	// or nothing; an earning no longer pending, or a transfer ID already
	// stored, fails it with account.ErrSettlementConflict and nothing
	// applied.
	PlanPayouts(ctx context.Context, ecosystem string, batch *account.SettlementBatch, transfers []*account.Transfer, forgotten []*account.Activity) error
	// Payout is the stored transfer id, or ErrNotFound.
	Payout(ctx context.Context, id string) (*account.Transfer, error)
	// Payouts lists ecosystem's transfers in state (every state when ""),
	// oldest first.
	Payouts(ctx context.Context, ecosystem, state string) ([]*account.Transfer, error)
	// FinishPayout stores t, which the caller moved to a final state, while
	// the stored transfer is still open (else ErrStale, nothing written):
	// settled, each of its earnings is marked settled by it
	// (account.SettleEarning); failed, each returns to the pending set of
	// t's ecosystem. All in one durable write.
	FinishPayout(ctx context.Context, t *account.Transfer) error
}

// Webhooks is webhook registrations, the outbox of events owed to them
// and their delivery records: the partner's endpoints
// (edge.WebhookRegistrations) and the delivery pool (actors/webhook's
// Store). A registration and an event are durable when acknowledged; an
// outbox entry leaves only in the write that records its outcome.
type Webhooks interface {
	CreateWebhook(ctx context.Context, w *webhook.Registration) error
	Webhooks(ctx context.Context, partnerID string) ([]*webhook.Registration, error)
	DeleteWebhook(ctx context.Context, partnerID, id string) error
	Deliveries(ctx context.Context, partnerID, webhookID string, limit int) ([]*webhook.DeliveryRecord, error)
	DueDeliveries(ctx context.Context, from, now time.Time, skip func(due time.Time, deliveryID, webhookID []byte) bool, fn func(*webhook.OutboxEntry) bool) error
	// OutboxEntries reads again entries a scan left in the outbox, by key;
	// NextDue is the due time of the first entry due after a time.
	OutboxEntries(ctx context.Context, keys []OutboxKey, fn func(i int, e *webhook.OutboxEntry)) error
	NextDue(ctx context.Context, after time.Time) (time.Time, bool, error)
	WebhookByID(ctx context.Context, id string) (*webhook.Registration, error)
	FinishAttempts(ctx context.Context, outs []webhook.AttemptOutcome) error
	DropDelivery(ctx context.Context, e *webhook.OutboxEntry) error
	Publish(ctx context.Context, partnerID string, ev webhook.Event) ([]*webhook.OutboxEntry, error)
	PublishTo(ctx context.Context, w *webhook.Registration, ev webhook.Event) (*webhook.OutboxEntry, error)
	Webhook(ctx context.Context, partnerID, id string) (*webhook.Registration, error)
	// ResendDelivery owes a failed delivery again with its original payload
	// and returns the entry it owed (nil when none: the delivery was not
	// failed, or its retry is imminent) and its history row.
	ResendDelivery(ctx context.Context, partnerID, webhookID, deliveryID string, now time.Time) (*webhook.OutboxEntry, *webhook.DeliveryRecord, error)
	// CountOutbox counts the deliveries owed, due by now and due later,
	// reading at most limit entries; metrics call it at scrape time.
	CountOutbox(ctx context.Context, now time.Time, limit int) (due, scheduled int, err error)
}

// Swaps is tracked swaps and intents deposits: the tracker's
// (actors/tracker's Store) and the deposit status endpoint's lookup
// (edge.DepositSwaps). Each transition is written with its events in one
// durable write.
type Swaps interface {
	CreateSwap(ctx context.Context, t *swap.Swap) (*swap.Swap, bool, error)
	SaveSwap(ctx context.Context, t *swap.Swap, events []webhook.Event) error
	Swap(ctx context.Context, hash string) (*swap.Swap, error)
	EachOpenSwap(ctx context.Context, fn func(*swap.Swap) bool) error
	SwapByDeposit(ctx context.Context, address, memo string) (*swap.Swap, error)
	// SwapByQuote is the swap tracked for a quote (the latest, should one
	// quote have been reported with several transactions), or ErrNotFound.
	SwapByQuote(ctx context.Context, quoteID string) (*swap.Swap, error)
}

// Inbound is multi-step inbound deposits (actors/inbound's Store), each
// step written with its events in one durable write, and the reference
// index of multi-step quotes their step-1 transaction names.
type Inbound interface {
	InboundDepositByHash(ctx context.Context, txHash string) (*inbound.Record, error)
	CreateInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) (*inbound.Record, bool, error)
	SaveInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) error
	EachOpenInboundDeposit(ctx context.Context, fn func(*inbound.Record) bool) error
	QuoteByRef(ctx context.Context, ref [32]byte) (string, error)
}

// Onramp is on-ramp orders (actors/onrampdesk's Store), each transition
// written with its events in one durable write.
type Onramp interface {
	OnrampOrder(ctx context.Context, uid string) (*onramp.Order, error)
	SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error
	EachOpenOnrampOrder(ctx context.Context, fn func(*onramp.Order) bool) error
}

// Idempotency is the answers remembered for Idempotency-Key
// (edge.IdempotencyStore), durable before they are sent.
type Idempotency interface {
	IdempotentAnswer(ctx context.Context, k idempotency.Key) (*idempotency.Record, error)
	RememberAnswer(ctx context.Context, k idempotency.Key, rec *idempotency.Record) error
}

// Usage is partners' hourly request counts (edge.UsageStore): the rate
// limiter's flushes add up, whichever node makes them.
type Usage interface {
	AddUsage(ctx context.Context, counts []account.UsageCount) error
	UsageSince(ctx context.Context, partnerID string, since time.Time) ([]account.UsageCount, error)
}

// Portal is the partner portal's sign-in state (edge.PortalStore): login
// codes, sessions, the sign-in limits' counters and key rotation dates,
// with the key its login codes are digested with.
type Portal interface {
	// PartnerByEmail is the partner signing in with email: of several with
	// that address, the oldest enabled one.
	PartnerByEmail(ctx context.Context, email string) (*account.Partner, error)
	Partner(ctx context.Context, id string) (*account.Partner, error)
	// PutLoginCode replaces the address's latest code.
	PutLoginCode(ctx context.Context, c *portal.LoginCode) error
	// UpdateLoginCode applies fn to the address's code under a lock and
	// stores it as fn left it, whatever fn returns; it returns fn's error.
	UpdateLoginCode(ctx context.Context, email string, fn func(*portal.LoginCode) error) error
	CreateSession(ctx context.Context, s *portal.Session) error
	Session(ctx context.Context, digest string) (*portal.Session, error)
	// UpdateSession stores fn's changes to the last-seen time and the key
	// fingerprint.
	UpdateSession(ctx context.Context, digest string, fn func(*portal.Session)) error
	DeleteSession(ctx context.Context, digest string) error
	// EndPartnerSessions removes every session of the partner but except's.
	EndPartnerSessions(ctx context.Context, partnerID, except string) (int, error)
	// UpdateSignInCounts applies fn to the sign-in limits' counters of
	// keys (in their order; a zero portal.Counter for a key not counted)
	// under a lock that every node sharing the store respects, and keeps
	// them as fn left them when fn returns nil; it returns fn's error. So
	// the limits are the cluster's, not each node's.
	UpdateSignInCounts(ctx context.Context, now time.Time, keys []string, fn func([]portal.Counter) error) error
	RecordKeyRotation(ctx context.Context, partnerID string, at time.Time) error
	// KeyRotatedAt is the zero time when the key was never rotated.
	KeyRotatedAt(ctx context.Context, partnerID string) (time.Time, error)
	// PortalCodeKey keys the portal's login code digests: derived from
	// secrets.key, so the same on every node of a cluster.
	PortalCodeKey() []byte
}

// QuoteRefs is the reference index of multi-step quotes: the ticket
// keeper's writes (a multi-step quote's step-1 transaction names it only
// by its reference) and the inbound runner's lookups.
type QuoteRefs interface {
	PutQuoteRefs(ctx context.Context, ts []EncodedTicket) error
	// QuoteByRef returns the id of the multi-step quote with reference
	// ref, or of the quote whose transaction's calldata hashes to ref
	// (EncodedTicket.CallRef), or ErrNotFound.
	QuoteByRef(ctx context.Context, ref [32]byte) (string, error)
	// SweepQuoteRefs drops the call references of quotes other than
	// multi-step ones issued before before (whole hours of them at a time:
	// some may stay up to an hour longer); multi-step quotes' references
	// stay, since a deposit may be registered after its quote is gone.
	SweepQuoteRefs(ctx context.Context, before time.Time) error
}

// ChainLog is the sandbox chains' operation log and the deliveries they
// made (actors/sandboxchain's Store and DeliveryStore): an operation is
// durable before it is answered.
type ChainLog interface {
	AppendChainOp(ctx context.Context, chainID, seq uint64, rec []byte) error
	ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, rec []byte) error) error
	SandboxDelivery(ctx context.Context, ref string) (string, error)
	PutSandboxDelivery(ctx context.Context, ref, txHash string) error
}

// Health is what the process itself needs of its store: a readiness
// check, its caches' statistics for the metrics, and a close.
type Health interface {
	// Ping reports whether the store can serve (the readiness probe).
	Ping(ctx context.Context) error
	// CacheStats reports the store's caches for the metrics.
	CacheStats(visit func(cache string, hits, misses uint64))
	// Close releases the store; it is not used again.
	Close() error
}

// TxIntents is the transaction manager's intents (actors/txm's Store) and
// its accounts' nonces. Every write is synced before it returns, since an
// intent is promised durable before it is signed and a signed one's bytes
// before they are broadcast.
type TxIntents interface {
	// PutTxIntent stores a new intent, once per Key ever: when one with
	// in.Key exists it is returned with created false and nothing written.
	PutTxIntent(ctx context.Context, in *txintent.Intent) (stored *txintent.Intent, created bool, err error)
	// TxIntent and TxIntentByKey return ErrNotFound when there is none.
	TxIntent(ctx context.Context, id string) (*txintent.Intent, error)
	TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error)
	// ListTxIntents returns the intents q selects in ID order (creation
	// order), at most q.Limit (all when 0).
	ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error)
	// UpdateTxIntents stores ins, each read at its Version, all or
	// nothing in one synced write (a worker stores a run of intents it
	// signed at once): when a stored intent's version differs nothing is
	// written and ErrStale is returned; otherwise each Version is
	// advanced. For an intent with a Nonce the account's next nonce
	// (NextNonce of its ChainID and From) is raised to *Nonce+1 in the
	// same write, so that a nonce is allocated exactly when the intent
	// holding it is stored. Allocation is compare-and-set too: an intent
	// given its nonce by this write (stored without one) must hold one at
	// or above the account's next nonce as stored, or ErrStale is returned
	// and nothing written, so that two writers never allocate one nonce.
	UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error
	// NextNonce is the account's next nonce as stored (0 when none).
	NextNonce(ctx context.Context, chainID uint64, account string) (uint64, error)
	// RaiseNonce sets the account's next nonce to n when n is higher (the
	// node's pending count read at start) and returns the stored value.
	RaiseNonce(ctx context.Context, chainID uint64, account string, n uint64) (uint64, error)
	// MarkTxIntentHandled records that a final intent's completion hooks
	// returned: it is no longer listed by a query with Unhandled set.
	MarkTxIntentHandled(ctx context.Context, id string) error
	// OperatorKey returns the operator's signing key stored under name
	// (the store opens what it sealed with secrets.key), or ErrNotFound.
	OperatorKey(ctx context.Context, name string) ([]byte, error)
	// CreateOperatorKey stores key under name, sealed, unless one is
	// stored already: it returns the stored key and whether it is key.
	// Every node sharing the store reads the same key.
	CreateOperatorKey(ctx context.Context, name string, key []byte) (stored []byte, created bool, err error)
}
