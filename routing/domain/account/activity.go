package account

import (
	"errors"
	"slices"
	"time"
)

// Activity kinds: what a line of a partner's history began as or became.
const (
	ActivityQuote  = "quote"
	ActivitySwap   = "swap"
	ActivityOnramp = "onramp"
)

// ActivityQuoted is the status of a quote that has not (yet) become a swap.
const ActivityQuoted = "QUOTED"

// Earning states. An earning is pending from its quote until a settlement
// run pays it, and settled from then on; it never goes back.
const (
	EarningPending = "pending"
	EarningSettled = "settled"
)

// Activity paging limits of GET /v1/partner/transactions: 50 lines a page
// unless the caller asks for another size, at most 500.
const (
	DefaultActivityLimit = 50
	MaxActivityLimit     = 500
)

// ErrBadCursor means a paging cursor was not one the store handed out.
var ErrBadCursor = errors.New("malformed cursor")

// Activity is one line of a partner's history, and the one record a partner
// quote leaves. ID is the quote id (or the order id of an on-ramp order).
// It is written at quote time and rewritten under the same identity
// (partner, CreatedAt, ID) when its status changes or its earning settles,
// so CreatedAt stays the original time and a rewrite starts from the stored
// record. USD figures are integer micro-USD so that sums are exact; amounts
// are decimal strings of base units.
type Activity struct {
	PartnerID      string    `json:"partnerId"`
	ID             string    `json:"id"`
	Kind           string    `json:"kind"`
	Status         string    `json:"status"`
	Provider       string    `json:"provider"`
	Tool           string    `json:"tool"`
	FromChain      uint64    `json:"fromChain"`
	ToChain        uint64    `json:"toChain"`
	FromToken      string    `json:"fromToken"`
	ToToken        string    `json:"toToken"`
	FromAmount     string    `json:"fromAmount"`
	ToAmount       string    `json:"toAmount"`
	FeeMicroUSD    int64     `json:"feeMicroUsd"`
	VolumeMicroUSD int64     `json:"volumeMicroUsd"`
	CreatedAt      time.Time `json:"createdAt"`
	// FeeUSDUnknown and VolumeUSDUnknown mark a figure that could not be
	// valued (its price was absent or too old): the figure is then zero,
	// counts for nothing in sums and is not shown as a USD amount.
	FeeUSDUnknown    bool `json:"feeUsdUnknown,omitempty"`
	VolumeUSDUnknown bool `json:"volumeUsdUnknown,omitempty"`
	// Earning is set when the quote carried a partner fee: it is the
	// partner's ledger row for that fee.
	Earning *Earning `json:"earning,omitempty"`
	// FromAddress and ToAddress are the swap's sender and receiver,
	// SendingTxHash and ReceivingTxHash its source and destination
	// transactions: set, as they become known, on a line that became a
	// swap (kind swap), from the tracked swap; "" before, and on lines of
	// other kinds. A line with addresses is listed under each of its
	// Wallets (see ActivityQuery.Wallet).
	FromAddress     string `json:"fromAddress,omitempty"`
	ToAddress       string `json:"toAddress,omitempty"`
	SendingTxHash   string `json:"sendingTxHash,omitempty"`
	ReceivingTxHash string `json:"receivingTxHash,omitempty"`
}

// Earning is a partner fee earned on one quote: the ecosystem it settles
// in, the fee in base units of FeeToken, the USD price of one whole
// FeeToken it was valued at, and its settlement state. The settlement
// fields are set when it settles.
type Earning struct {
	Ecosystem string `json:"ecosystem"`
	FeeToken  string `json:"feeToken"`
	FeeAmount string `json:"feeAmount"`
	// PriceUSD is the decimal USD price of one whole FeeToken that the
	// activity's FeeMicroUSD was valued at, kept so that the figure can be
	// explained later whatever the price did since; "" when the fee could
	// not be valued (and on records written before it was kept).
	PriceUSD     string    `json:"priceUsd,omitempty"`
	State        string    `json:"state"`
	SettledBatch string    `json:"settledBatch,omitempty"`
	SettledTo    string    `json:"settledTo,omitempty"`
	SettledAt    time.Time `json:"settledAt,omitzero"`
	// SettledChainID and SettledTx name the transaction that paid the
	// earning, when a transfer paid it (see Transfer); earnings settled
	// before payouts went on-chain have neither.
	SettledChainID uint64 `json:"settledChainId,omitempty"`
	SettledTx      string `json:"settledTx,omitempty"`
}

// CheckNew refuses a record that cannot be a new partner quote: one without
// identity or time, or one whose earning is not pending in a valid
// ecosystem.
func (a *Activity) CheckNew() error {
	if err := a.CheckIdentity(); err != nil {
		return err
	}
	if e := a.Earning; e != nil && (!ValidID(e.Ecosystem) || e.State != EarningPending) {
		return &RecordError{ID: a.ID, Reason: "earning must be pending in a valid ecosystem, not " + e.State + " in " + e.Ecosystem}
	}
	return nil
}

// CheckIdentity refuses a record whose identity (partner, id, creation
// time: what storage keys it by) is not well formed.
func (a *Activity) CheckIdentity() error {
	if !ValidID(a.PartnerID) || !ValidID(a.ID) {
		return &RecordError{ID: a.ID, Reason: "invalid partner " + a.PartnerID + " or id"}
	}
	if a.CreatedAt.IsZero() {
		return &RecordError{ID: a.ID, Reason: "zero CreatedAt"}
	}
	return nil
}

// RecordError describes an activity record that breaks the model's rules.
type RecordError struct {
	ID     string
	Reason string
}

func (e *RecordError) Error() string { return "activity " + e.ID + ": " + e.Reason }

// ActivityQuery selects and pages a partner's history. Zero values select
// everything.
type ActivityQuery struct {
	// Limit is the page size: 0 means DefaultActivityLimit; larger than
	// MaxActivityLimit is capped.
	Limit int
	// Cursor continues after the last record of a previous page.
	Cursor string
	// Status keeps records with exactly this status.
	Status string
	// Chain keeps records whose source or destination chain is this id.
	Chain uint64
	// MinFeeMicroUSD, when not nil, keeps fee-bearing records (fee > 0)
	// whose fee is at least this much: the per-swap earnings breakdown
	// ("feeUsd > 0") is MinFeeMicroUSD = 0.
	MinFeeMicroUSD *int64
	// Wallet, a WalletKey, keeps swaps (kind swap) whose sender or
	// receiver is this wallet. Backends serve it from an index of the
	// swaps' wallets, not by reading the partner's whole history.
	Wallet string
}

// PageSize is the query's page size after defaults and the cap.
func (q *ActivityQuery) PageSize() int {
	if q.Limit <= 0 {
		return DefaultActivityLimit
	}
	return min(q.Limit, MaxActivityLimit)
}

// Match reports whether a passes the query's filters.
func (q *ActivityQuery) Match(a *Activity) bool {
	if q.Status != "" && a.Status != q.Status {
		return false
	}
	if q.Chain != 0 && a.FromChain != q.Chain && a.ToChain != q.Chain {
		return false
	}
	if q.MinFeeMicroUSD != nil && (a.FeeMicroUSD <= 0 || a.FeeMicroUSD < *q.MinFeeMicroUSD) {
		return false
	}
	if q.Wallet != "" && (a.Kind != ActivitySwap || !slices.Contains(a.Wallets(), q.Wallet)) {
		return false
	}
	return true
}
