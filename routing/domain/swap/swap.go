// Package swap is the life of a swap after its quote: the tracked record,
// its status in the vocabulary integrators know from LI.FI's status API,
// the transitions a tracker may make, the webhook event each publishes, and
// the polling schedule with its give-up horizon. It is plain Go; the
// trackers in actors/ poll providers and persist what this package decides.
//
// Statuses: NOT_FOUND (never seen; answered as HTTP 200), INVALID (the hash
// is not a swap the service can follow), PENDING, DONE and FAILED. DONE and
// FAILED are terminal. Substatuses refine them: PENDING is
// WAIT_SOURCE_CONFIRMATIONS, WAIT_DESTINATION_TRANSACTION or UNKNOWN_ERROR
// (tracking gave up: see Horizon); DONE is COMPLETED, PARTIAL or REFUNDED;
// FAILED is INSUFFICIENT_ALLOWANCE, INSUFFICIENT_BALANCE, OUT_OF_GAS,
// EXPIRED, SLIPPAGE_EXCEEDED or UNKNOWN_FAILED_ERROR. Entering PENDING
// publishes swap.pending, DONE swap.completed, FAILED swap.failed.
package swap

import (
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// Statuses.
const (
	StatusNotFound = "NOT_FOUND"
	StatusInvalid  = "INVALID"
	StatusPending  = "PENDING"
	StatusDone     = "DONE"
	StatusFailed   = "FAILED"
)

// Substatuses.
const (
	WaitSourceConfirmations    = "WAIT_SOURCE_CONFIRMATIONS"
	WaitDestinationTransaction = "WAIT_DESTINATION_TRANSACTION"
	UnknownError               = "UNKNOWN_ERROR"
	Completed                  = "COMPLETED"
	Partial                    = "PARTIAL"
	Refunded                   = "REFUNDED"
	InsufficientAllowance      = "INSUFFICIENT_ALLOWANCE"
	InsufficientBalance        = "INSUFFICIENT_BALANCE"
	OutOfGas                   = "OUT_OF_GAS"
	Expired                    = "EXPIRED"
	SlippageExceeded           = "SLIPPAGE_EXCEEDED"
	UnknownFailedError         = "UNKNOWN_FAILED_ERROR"
)

// Leg is one side of a swap as the status shows it: the transaction, its
// chain, the amount and token moved, and when it was mined.
type Leg struct {
	TxHash    string `json:"txHash,omitempty"`
	ChainID   uint64 `json:"chainId"`
	Amount    string `json:"amount,omitempty"`
	Token     string `json:"token,omitempty"`
	Timestamp int64  `json:"timestamp,omitempty"`
}

// Swap is a tracked swap. ID is the source transaction hash (lower-case
// 0x hex): what a client knows after broadcasting, and what every status
// query names. QuoteID ties it to the quote (and, through the quote, to the
// partner whose webhooks hear of it); a swap first asked for by status
// without a quote has none.
type Swap struct {
	ID      string `json:"id"`
	QuoteID string `json:"quoteId,omitempty"`
	// QuoteIssuedAt is the quote's issue time: with the partner and the
	// quote id, the identity of the partner's activity record of the quote,
	// which follows the swap's status.
	QuoteIssuedAt time.Time `json:"quoteIssuedAt,omitzero"`
	PartnerID     string    `json:"partnerId,omitempty"`
	Provider      string    `json:"provider"`
	Tool          string    `json:"tool"`
	FromChain     uint64    `json:"fromChain"`
	ToChain       uint64    `json:"toChain"`
	FromToken     string    `json:"fromToken"`
	ToToken       string    `json:"toToken"`
	FromAmount    string    `json:"fromAmount"`
	ToAmount      string    `json:"toAmount"`
	FromAddress   string    `json:"fromAddress"`
	ToAddress     string    `json:"toAddress"`
	// RefundTo is the quote's refund address on the source chain, "" when
	// the quote named none: a refund then goes to FromAddress (see
	// RefundAddress).
	RefundTo string `json:"refundTo,omitempty"`
	// ExpectedDuration is the quote's execution duration in seconds.
	ExpectedDuration int       `json:"expectedDuration,omitempty"`
	Status           string    `json:"status"`
	Substatus        string    `json:"substatus"`
	SubstatusMessage string    `json:"substatusMessage"`
	Sending          Leg       `json:"sending"`
	Receiving        Leg       `json:"receiving"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
	// Polls counts the tracker's polls; NextPoll is when the next is due
	// (zero once the swap is terminal or tracking gave up).
	// DepositAddress is set on an intents deposit: a swap whose input was
	// sent to the intents provider's deposit address (and DepositMemo, in
	// MEMO mode). Its status is also shown in the provider's deposit
	// vocabulary (see DepositStatus), and it publishes deposit.* events
	// instead of swap.* ones.
	DepositAddress string    `json:"depositAddress,omitempty"`
	DepositMemo    string    `json:"depositMemo,omitempty"`
	Polls          int       `json:"polls"`
	NextPoll       time.Time `json:"nextPoll,omitzero"`
	// Scenario is the sandbox scenario of the swap's quote (see package
	// scenario): kept in the record so that the simulated provider plays
	// it on every poll, after a restart or on another node alike.
	Scenario scenario.Name `json:"scenario,omitempty"`

	// UpstreamRef is the quote's upstream reference (quote.Ticket's), what
	// the provider's status source asks about when the source hash is not
	// enough (Relay's request id); "" when the route had none and in
	// records written before it was kept.
	UpstreamRef string `json:"upstreamRef,omitempty"`
}

// NormalizeHash is the canonical form of a transaction hash: lower case.
func NormalizeHash(h string) string { return strings.ToLower(h) }

// MarkLine moves the partner's activity line of s's quote to the swap as
// it now stands: kind swap, its status, its sender and receiver (which list
// the line in each wallet's history) and its source and destination
// transactions ("" until known). The line's other fields (its figures, its
// earning) are the quote's and stay as stored.
func (s *Swap) MarkLine(a *account.Activity) {
	a.Kind, a.Status = account.ActivitySwap, s.Status
	a.FromAddress, a.ToAddress = s.FromAddress, s.ToAddress
	a.SendingTxHash, a.ReceivingTxHash = s.Sending.TxHash, s.Receiving.TxHash
}

// Terminal reports whether no further transition can happen.
func (s *Swap) Terminal() bool { return s.Status == StatusDone || s.Status == StatusFailed }

// Observation is what one poll of the provider found.
type Observation struct {
	Status           string
	Substatus        string
	SubstatusMessage string
	// Receiving is filled once the destination transaction is known.
	Receiving Leg
	// SendingTimestamp is when the source transaction was mined, if known.
	SendingTimestamp int64
}

// Apply moves s to what an observation shows, at now, and returns the
// events the transition publishes (none when the status did not change or
// the swap has no partner to tell). A swap seen for the first time already
// finished publishes its pending event before its final one, so that every
// receiver sees the same sequence however fast the provider was. A
// terminal swap never changes. An observation of NOT_FOUND leaves a swap
// as it is (the provider has not seen the transaction yet).
func Apply(s *Swap, o Observation, now time.Time) (events []string) {
	if s.Terminal() || o.Status == "" || o.Status == StatusNotFound {
		return nil
	}
	first := s.Status == ""
	changed := s.Status != o.Status
	s.Status, s.Substatus, s.SubstatusMessage = o.Status, o.Substatus, o.SubstatusMessage
	if o.Receiving.TxHash != "" {
		s.Receiving = o.Receiving
	}
	if o.SendingTimestamp != 0 {
		s.Sending.Timestamp = o.SendingTimestamp
	}
	s.UpdatedAt = now
	if !changed || s.PartnerID == "" {
		return nil
	}
	ev := eventOf(s)
	if ev == "" {
		return nil
	}
	if first && s.Terminal() {
		pending := webhook.SwapPending
		if s.DepositAddress != "" {
			pending = webhook.DepositReceived
		}
		return []string{pending, ev}
	}
	return []string{ev}
}

// eventOf is the event of s entering its current status.
func eventOf(s *Swap) string {
	if s.DepositAddress != "" {
		return depositEvent(s)
	}
	switch s.Status {
	case StatusPending:
		return webhook.SwapPending
	case StatusDone:
		return webhook.SwapCompleted
	case StatusFailed:
		return webhook.SwapFailed
	}
	return ""
}

// Schedule is how a tracker polls a swap: quickly at first, then backing
// off, and never past Horizon from the swap's creation.
type Schedule struct {
	// First is the delay before the first poll; each next delay doubles,
	// up to Max.
	First, Max time.Duration
	// Horizon is how long a swap is followed. Past it a pending swap stays
	// PENDING with substatus UNKNOWN_ERROR and a message saying tracking
	// stopped and why, so that it never waits silently.
	Horizon time.Duration
}

// DefaultSchedule polls after 2 s, backs off to once a minute, and follows
// a swap for 6 hours (bridges that take longer are rare, and intents
// deposits refund before that).
func DefaultSchedule() Schedule {
	return Schedule{First: 2 * time.Second, Max: time.Minute, Horizon: 6 * time.Hour}
}

// Next sets s.NextPoll after a poll at now (and counts it), or, past the
// horizon, gives up: it returns true when the swap's status message changed
// because tracking stopped.
func (sc Schedule) Next(s *Swap, now time.Time) (gaveUp bool) {
	s.Polls++
	if s.Terminal() {
		s.NextPoll = time.Time{}
		return false
	}
	if now.Sub(s.CreatedAt) >= sc.Horizon {
		s.NextPoll = time.Time{}
		s.Status, s.Substatus = StatusPending, UnknownError
		s.SubstatusMessage = "tracking stopped after " + sc.Horizon.String() +
			" without a destination transaction from the provider; the transfer may still complete: contact support with this transaction hash"
		s.UpdatedAt = now
		return true
	}
	d := sc.First
	for i := 1; i < s.Polls && d < sc.Max; i++ {
		d *= 2
	}
	s.NextPoll = now.Add(min(d, sc.Max))
	return false
}

// Event is the webhook event of a transition of s, with the payload fields
// of the specification.
func Event(name string, s *Swap, at time.Time) webhook.Event {
	if s.DepositAddress != "" {
		d := DepositData{TransactionID: s.TransactionID(), DepositAddress: s.DepositAddress, DepositMemo: s.DepositMemo,
			DepositTxHash: s.Sending.TxHash, FromChain: s.FromChain, ToChain: s.ToChain, FromToken: s.FromToken,
			ToToken: s.ToToken, FromAmount: s.FromAmount, ToAmount: s.receivedOrQuoted(), FromAddress: s.FromAddress,
			ToAddress: s.ToAddress, DestinationTxHash: s.Receiving.TxHash, Status: s.DepositStatus()}
		if s.Status == StatusFailed || s.Substatus == Refunded {
			d.Reason = s.SubstatusMessage
		}
		d.RefundedTo = s.RefundedTo()
		return webhook.Event{Name: name, Time: at, Data: d}
	}
	dur := int64(0)
	if s.Terminal() {
		dur = int64(s.UpdatedAt.Sub(s.CreatedAt).Seconds())
	}
	return webhook.Event{Name: name, Time: at, Data: webhook.SwapData{
		TransactionID: s.TransactionID(), FromChain: s.FromChain, ToChain: s.ToChain,
		FromToken: s.FromToken, ToToken: s.ToToken, FromAmount: s.FromAmount, ToAmount: s.receivedOrQuoted(),
		FromAddress: s.FromAddress, ToAddress: s.ToAddress, SourceTxHash: s.Sending.TxHash,
		DestinationTxHash: s.Receiving.TxHash, Status: s.Status, Tool: s.Tool, ExecutionDuration: dur,
		RefundedTo: s.RefundedTo(),
	}}
}

// TransactionID is the id receivers deduplicate on: the quote id when the
// swap came from one, its source hash otherwise.
func (s *Swap) TransactionID() string {
	if s.QuoteID != "" {
		return s.QuoteID
	}
	return s.ID
}

// receivedOrQuoted is the amount delivered once known, the quoted amount
// before.
func (s *Swap) receivedOrQuoted() string {
	if s.Receiving.Amount != "" {
		return s.Receiving.Amount
	}
	return s.ToAmount
}

// FromTicket is the swap a client reports by broadcasting an issued quote's
// transaction: the quote's parties, tokens and amounts, and the source
// transaction txHash on the quote's source chain.
func FromTicket(t *quote.Ticket, txHash string) *Swap {
	h := NormalizeHash(txHash)
	return &Swap{
		ID: h, QuoteID: t.ID, QuoteIssuedAt: t.IssuedAt, PartnerID: t.PartnerID, Provider: t.Provider, Tool: t.Tool,
		FromChain: t.FromChain, ToChain: t.ToChain, FromToken: t.FromToken, ToToken: t.ToToken,
		FromAmount: t.FromAmount, ToAmount: t.ToAmount, FromAddress: t.FromAddress, ToAddress: t.ToAddress, RefundTo: t.RefundTo,
		ExpectedDuration: t.ExecutionDuration, DepositAddress: t.DepositAddress, DepositMemo: t.DepositMemo, UpstreamRef: t.UpstreamRef,
		Sending:   Leg{TxHash: h, ChainID: t.FromChain, Amount: t.FromAmount, Token: t.FromToken},
		Receiving: Leg{ChainID: t.ToChain, Token: t.ToToken},
		Scenario:  t.Scenario,
	}
}

// RefundAddress is where a refund of the swap goes: the quote's refund
// address, or FromAddress when it named none. Every provider the swap can
// have come from pays its refunds there: the sandbox's bridges and intents
// deposits pay it, 1Click was sent it as refundTo, and a provider that
// cannot pay refunds elsewhere than fromAddress is not raced on a quote
// with another refund address.
func (s *Swap) RefundAddress() string {
	if s.RefundTo != "" {
		return s.RefundTo
	}
	return s.FromAddress
}

// RefundedTo is where the swap's input was refunded, "" unless it was
// (DONE with substatus REFUNDED).
func (s *Swap) RefundedTo() string {
	if s.Status == StatusDone && s.Substatus == Refunded {
		return s.RefundAddress()
	}
	return ""
}

// Shown is the status a client sees: a swap reported but not yet observed
// is PENDING, waiting for its source confirmations.
func (s *Swap) Shown() (status, substatus, message string) {
	if s.Status == "" {
		return StatusPending, WaitSourceConfirmations, "the source transaction has not been observed yet"
	}
	return s.Status, s.Substatus, s.SubstatusMessage
}

// Intents deposit statuses, the intents provider's own vocabulary.
const (
	DepositPending    = "PENDING_DEPOSIT"
	DepositKnownTx    = "KNOWN_DEPOSIT_TX"
	DepositIncomplete = "INCOMPLETE_DEPOSIT"
	DepositProcessing = "PROCESSING"
	DepositSuccess    = "SUCCESS"
	DepositRefunded   = "REFUNDED"
	DepositFailed     = "FAILED"
)

// DepositStatus is an intents deposit's status in the provider's
// vocabulary: a submitted transaction not yet seen is KNOWN_DEPOSIT_TX, one
// seen and being swapped PROCESSING, then SUCCESS, REFUNDED or FAILED.
func (s *Swap) DepositStatus() string {
	switch {
	case s.Status == StatusDone && s.Substatus == Refunded:
		return DepositRefunded
	case s.Status == StatusDone:
		return DepositSuccess
	case s.Status == StatusFailed:
		return DepositFailed
	case s.Status == StatusPending && s.Substatus == Partial:
		return DepositIncomplete
	case s.Status == StatusPending:
		return DepositProcessing
	}
	return DepositKnownTx
}

// depositEvent is the event of an intents deposit entering its current
// status: deposit.received on the first sighting of the deposit,
// deposit.completed on success, deposit.failed on failure or refund.
func depositEvent(s *Swap) string {
	switch s.DepositStatus() {
	case DepositProcessing, DepositIncomplete:
		return webhook.DepositReceived
	case DepositSuccess:
		return webhook.DepositCompleted
	case DepositRefunded, DepositFailed:
		return webhook.DepositFailed
	}
	return ""
}

// DepositData is the data object of deposit.* events of intents deposits.
// Receivers deduplicate on transactionId and event.
type DepositData struct {
	TransactionID     string `json:"transactionId"`
	DepositAddress    string `json:"depositAddress"`
	DepositMemo       string `json:"depositMemo,omitempty"`
	DepositTxHash     string `json:"depositTxHash"`
	FromChain         uint64 `json:"fromChain"`
	ToChain           uint64 `json:"toChain"`
	FromToken         string `json:"fromToken"`
	ToToken           string `json:"toToken"`
	FromAmount        string `json:"fromAmount"`
	ToAmount          string `json:"toAmount"`
	FromAddress       string `json:"fromAddress"`
	ToAddress         string `json:"toAddress"`
	DestinationTxHash string `json:"destinationTxHash,omitempty"`
	Status            string `json:"status"`
	Reason            string `json:"reason,omitempty"`
	// RefundedTo is where a REFUNDED deposit went back (the quote's
	// refundTo, or fromAddress).
	RefundedTo string `json:"refundedTo,omitempty"`
}
