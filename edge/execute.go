package edge

import (
	"context"
	"errors"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// QuoteTickets finds issued quotes by id; the quote engine is one. An
// expired quote is quote.ErrExpired, one never issued quote.ErrUnknown.
type QuoteTickets interface {
	Lookup(ctx context.Context, id string) (*quote.Ticket, error)
}

// SwapTracker follows swaps after their quote; the tracker actor is one.
// Swap reports an unknown hash with account.ErrNotFound.
type SwapTracker interface {
	Track(ctx context.Context, s *swap.Swap) (*swap.Swap, error)
	Swap(ctx context.Context, hash string) (*swap.Swap, error)
}

// Deposit modes of intents quotes: SIMPLE sends to a deposit address of
// its own; MEMO sends to a shared address with the memo that identifies
// the deposit (chains such as Stellar take only MEMO).
const (
	DepositSimple = "SIMPLE"
	DepositMemo   = "MEMO"
)

func (s *Server) executionRoutes() {
	s.Handle("POST", "/v1/execute", route{bucket: BucketHeavy, name: "execute", idempotent: true}, s.execute)
	s.Handle("GET", "/v1/status", route{bucket: BucketHeavy, name: "status"}, s.status)
	s.Handle("GET", "/v1/status/stream", route{bucket: BucketHeavy, name: routeStatusStream}, s.statusStream)
}

// executeBody is the body of POST /v1/execute.
type executeBody struct {
	QuoteID     *string `json:"quoteId"`
	TxHash      *string `json:"txHash"`
	DepositMode *string `json:"depositMode"`
}

// executeView is the answer of POST /v1/execute: what the wallet does next
// for the quote (sign its transactions, or deposit to the intents
// address), and, once a source transaction is reported, the swap's status.
type executeView struct {
	QuoteID   string `json:"quoteId"`
	Provider  string `json:"provider"`
	Tool      string `json:"tool"`
	ExpiresAt int64  `json:"expiresAt"`
	// Kind is "transaction" (sign transactionRequests, approving
	// approvalAddress first for an ERC-20 input) or "deposit" (send the
	// amount to the deposit address).
	Kind                string           `json:"kind"`
	ApprovalAddress     *string          `json:"approvalAddress"`
	TransactionRequests []quote.TicketTx `json:"transactionRequests,omitempty"`
	Deposit             *depositTarget   `json:"deposit,omitempty"`
	// Status is set once txHash was given: the swap is tracked from then
	// on, and its webhooks go to the partner whose key made the quote.
	Status *statusView `json:"status,omitempty"`
}

// depositTarget is where an intents quote's input goes.
type depositTarget struct {
	Address  string `json:"address"`
	Memo     string `json:"memo,omitempty"`
	Mode     string `json:"mode"`
	ChainID  uint64 `json:"chainId"`
	Token    string `json:"token"`
	Amount   string `json:"amount"`
	Deadline int64  `json:"deadline"`
}

// execute answers POST /v1/execute {quoteId, txHash?, depositMode?}.
func (s *Server) execute(r *Request) error {
	var body executeBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.QuoteID == nil || *body.QuoteID == "" {
		return apierr.Param("quoteId", "quoteId is required: the id of a quote from GET /v1/quote")
	}
	t, err := s.deps.Tickets.Lookup(r.Context(), *body.QuoteID)
	switch {
	case errors.Is(err, quote.ErrExpired):
		return apierr.Param("quoteId", "quote "+*body.QuoteID+" has expired; request a new quote").With("reason", "expired")
	case errors.Is(err, quote.ErrUnknown):
		return apierr.Param("quoteId", "no quote "+*body.QuoteID+" was issued").With("reason", "unknown")
	case err != nil:
		return apierr.From(err)
	}
	if t.Indicative {
		return apierr.Param("quoteId", "quote "+t.ID+" is indicative and carries no transaction; quote again with a toAddress on the destination chain").
			With("reason", "indicative")
	}
	v := executeView{QuoteID: t.ID, Provider: t.Provider, Tool: t.Tool, ExpiresAt: t.ExpiresAt.Unix()}
	if t.ApprovalAddress != "" {
		v.ApprovalAddress = &t.ApprovalAddress
	}
	intents := t.DepositAddress != ""
	if body.DepositMode != nil {
		switch {
		case !intents:
			return apierr.Param("depositMode", "depositMode applies to intents quotes only").With("provider", t.Provider)
		case *body.DepositMode != DepositSimple && *body.DepositMode != DepositMemo:
			return apierr.Param("depositMode", "depositMode must be SIMPLE or MEMO").With("value", *body.DepositMode)
		}
	}
	// An intents quote from an EVM chain also carries the transfer to its
	// deposit address as a transaction request.
	v.Kind, v.TransactionRequests = "transaction", t.Txs
	if intents {
		v.Kind = "deposit"
		v.Deposit = s.deposit(t, body.DepositMode)
	}
	if body.TxHash != nil {
		if !isTxHash(*body.TxHash) {
			return apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", *body.TxHash)
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		sw, err := s.deps.Swaps.Track(ctx, swap.FromTicket(t, *body.TxHash))
		if err != nil {
			return apierr.New(apierr.ServiceUnavailable, "could not start tracking the swap; retry").Wrap(err)
		}
		if sw.QuoteID != t.ID {
			return apierr.Param("txHash", "transaction "+sw.ID+" is already tracked for another quote").With("quoteId", sw.QuoteID)
		}
		st := statusOf(sw)
		v.Status = &st
	}
	writeJSON(r, statusOK, v)
	return nil
}

// deposit is an intents quote's deposit target under the requested mode
// (the origin chain's default without one).
func (s *Server) deposit(t *quote.Ticket, mode *string) *depositTarget {
	m := DepositSimple
	if c, ok := s.deps.Registry.Chain(t.FromChain); ok && defaultsToMemo(c) {
		m = DepositMemo
	}
	if mode != nil {
		m = *mode
	}
	d := &depositTarget{Address: t.DepositAddress, Mode: m, ChainID: t.FromChain, Token: t.FromToken,
		Amount: t.FromAmount, Deadline: t.ExpiresAt.Unix()}
	if m == DepositMemo {
		d.Memo = t.DepositMemo
		if d.Memo == "" {
			// The sandbox names the deposit by its quote; a real intents
			// quote carries the memo its provider chose.
			d.Memo = t.ID
		}
	}
	return d
}

// defaultsToMemo reports origin chains whose deposits need a memo.
func defaultsToMemo(c *registry.Chain) bool {
	return c.AddressFormat == "stellar" || c.AddressFormat == "xrp"
}

// isTxHash reports a 0x-prefixed 32-byte hex hash.
func isTxHash(h string) bool {
	if len(h) != 66 || h[0] != '0' || (h[1] != 'x' && h[1] != 'X') {
		return false
	}
	for i := 2; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// statusView is the answer of GET /v1/status, in LI.FI's shape.
type statusView struct {
	Status           string   `json:"status"`
	Substatus        string   `json:"substatus,omitempty"`
	SubstatusMessage string   `json:"substatusMessage,omitempty"`
	TransactionID    string   `json:"transactionId,omitempty"`
	QuoteID          string   `json:"quoteId,omitempty"`
	Tool             string   `json:"tool,omitempty"`
	FromAddress      string   `json:"fromAddress,omitempty"`
	ToAddress        string   `json:"toAddress,omitempty"`
	Sending          *legView `json:"sending,omitempty"`
	Receiving        *legView `json:"receiving,omitempty"`
}

// legView is one side of a swap.
type legView struct {
	TxHash    string `json:"txHash,omitempty"`
	ChainID   uint64 `json:"chainId"`
	Amount    string `json:"amount,omitempty"`
	Token     string `json:"token,omitempty"`
	Timestamp int64  `json:"timestamp,omitempty"`
}

func statusOf(sw *swap.Swap) statusView {
	st, sub, msg := sw.Shown()
	send, recv := legView(sw.Sending), legView(sw.Receiving)
	return statusView{Status: st, Substatus: sub, SubstatusMessage: msg, TransactionID: sw.TransactionID(), QuoteID: sw.QuoteID,
		Tool: sw.Tool, FromAddress: sw.FromAddress, ToAddress: sw.ToAddress, Sending: &send, Receiving: &recv}
}

// status answers GET /v1/status?txHash=…: the tracked swap's status, or
// NOT_FOUND (HTTP 200) for a transaction the service does not follow.
func (s *Server) status(r *Request) error {
	h, ok := query(r, "txHash")
	if !ok || h == "" {
		return apierr.Param("txHash", "txHash is required")
	}
	if !isTxHash(h) {
		return apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", h)
	}
	sw, err := s.deps.Swaps.Swap(r.Context(), h)
	if errors.Is(err, account.ErrNotFound) {
		writeJSON(r, statusOK, statusView{Status: swap.StatusNotFound,
			SubstatusMessage: "the service does not follow this transaction; report it with POST /v1/execute {quoteId, txHash}"})
		return nil
	}
	if err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, statusOf(sw))
	return nil
}
