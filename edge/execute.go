package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// QuoteRepricer prices an issued quote's route again for execute's price
// check, and issues the new quote when the price moved too far or below
// the quote's minimum; the quote engine is one (see its Reprice and Issue).
type QuoteRepricer interface {
	Reprice(ctx context.Context, req *quote.Request, p *account.Partner, provider, tool string) (*quote.Issued, error)
	Issue(ctx context.Context, is *quote.Issued, p *account.Partner) error
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
	// MaxPriceDriftBps is read raw, so that a value of the wrong type is
	// refused naming it (quote.ParseMaxPriceDrift).
	MaxPriceDriftBps json.RawMessage `json:"maxPriceDriftBps,omitempty"`
}

// priceCheckView is what execute's price check found: the route's output
// now, and how far it is below the quote's, in basis points (negative
// when it improved).
type priceCheckView struct {
	CurrentToAmount string `json:"currentToAmount"`
	DriftBps        int64  `json:"driftBps"`
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
	// PriceCheck is set when the route was priced again (an execute
	// without txHash): the quote's price held within maxPriceDriftBps,
	// and at or above its toAmountMin.
	PriceCheck *priceCheckView `json:"priceCheck,omitempty"`
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
	// RefundTo is where a deposit that cannot be swapped is returned, when
	// the quote named a refund address (fromAddress otherwise).
	RefundTo string `json:"refundTo,omitempty"`
}

// execute answers POST /v1/execute {quoteId, txHash?, depositMode?,
// maxPriceDriftBps?}: without txHash the quote's price is checked first
// (see priceCheck).
func (s *Server) execute(r *Request) error {
	var body executeBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.QuoteID == nil || *body.QuoteID == "" {
		return apierr.Param("quoteId", "quoteId is required: the id of a quote from GET /v1/quote")
	}
	maxDrift, perr := quote.ParseMaxPriceDrift(body.MaxPriceDriftBps)
	if perr != nil {
		return perr
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
	if body.TxHash != nil && !isTxHash(*body.TxHash) {
		return apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", *body.TxHash)
	}
	if body.TxHash == nil && s.deps.Repricer != nil {
		// Before the wallet signs: the price is checked. Once a
		// transaction is reported it is on its way, and its own minimum
		// output protects it, so no check could change anything.
		pc, err := s.priceCheck(r, t, maxDrift)
		if err != nil {
			return err
		}
		v.PriceCheck = pc
	}
	if body.TxHash != nil {
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

// priceCheck prices the ticket's route again (same provider and tool, same
// amounts and parties, its sandbox scenario) and judges its output
// (quote.Ticket.CheckPrice): below the quote's toAmountMin, where the
// signed transaction would revert on slippage, the answer is
// SLIPPAGE_ERROR, whatever maxDrift; beyond maxDrift but within the
// slippage it is PRICE_CHANGED. Either names the quote issued at the
// current price (see newQuote), kept and resolvable like any other. A
// re-pricing that fails refuses the execute with SERVICE_UNAVAILABLE
// (reason PRICE_CHECK_FAILED): a firm price that cannot be confirmed is not
// given, and the quote stays executable until its expiry, so a retry
// checks again. Only maxDrift 10000, which accepts any price, proceeds
// without a check when re-pricing fails.
func (s *Server) priceCheck(r *Request, t *quote.Ticket, maxDrift int) (*priceCheckView, error) {
	req, perr := quote.Parse(s.deps.Registry, s.deps.Tools, t.RepriceParams(), s.deps.Quotes.Deadline())
	if perr != nil {
		return nil, apierr.New(apierr.Internal, "internal error").Wrap(fmt.Errorf("edge: ticket %s no longer parses as a quote: %v", t.ID, perr))
	}
	req.Scenario = t.Scenario
	ctx, cancel := context.WithTimeout(r.Context(), s.deps.Quotes.Deadline()+ledgerGrace)
	defer cancel()
	is, err := s.deps.Repricer.Reprice(ctx, req, r.Partner, t.Provider, t.Tool)
	if err != nil {
		if maxDrift == quote.MaxPriceDriftBps {
			return nil, nil
		}
		cause := apierr.From(err)
		return nil, apierr.New(apierr.ServiceUnavailable, "could not confirm the quote's price ("+cause.Message+
			"); the quote stays valid until its expiresAt: retry, or quote again").
			With("reason", "PRICE_CHECK_FAILED").With("cause", cause.Code).With("quoteId", t.ID).Wrap(err)
	}
	pc, err := t.CheckPrice(is.Route.ToAmount, maxDrift)
	if err != nil {
		return nil, apierr.From(fmt.Errorf("edge: %w", err))
	}
	if pc.Verdict == quote.PriceHolds {
		return &priceCheckView{CurrentToAmount: pc.Current.String(), DriftBps: pc.DriftBps}, nil
	}
	fresh, err := s.newQuote(r, t, is)
	if err != nil {
		return nil, err
	}
	return nil, pc.Refusal(fresh.ID)
}

// newQuote issues the quote that replaces t once its price check failed:
// repriced, the route priced at the current price. An exact-output ticket
// is quoted again for its toAmount instead (quote.Ticket.
// RequoteExactParams), its input sized at the current price, so that the
// new quote still delivers what the client asked for; should that race
// fail, the repriced route (the same input, less output) is issued. The
// new quote leaves a price-drift scenario behind (it played). It has a
// race's time of its own, so that the re-pricing before it leaves the
// issue its whole budget.
func (s *Server) newQuote(r *Request, t *quote.Ticket, repriced *quote.Issued) (*quote.Issued, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.deps.Quotes.Deadline()+ledgerGrace)
	defer cancel()
	is := repriced
	if p, ok := t.RequoteExactParams(); ok {
		if req, perr := quote.Parse(s.deps.Registry, s.deps.Tools, p, s.deps.Quotes.Deadline()); perr == nil {
			req.Scenario = t.Scenario
			if exact, err := s.deps.Repricer.Reprice(ctx, req, r.Partner, t.Provider, t.Tool); err == nil {
				is = exact
			}
		}
	}
	is.Request.Scenario = t.Scenario.AfterReprice()
	if err := s.deps.Repricer.Issue(ctx, is, r.Partner); err != nil {
		return nil, err
	}
	return is, nil
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
		Amount: t.FromAmount, Deadline: t.ExpiresAt.Unix(), RefundTo: t.RefundTo}
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
	Status           string `json:"status"`
	Substatus        string `json:"substatus,omitempty"`
	SubstatusMessage string `json:"substatusMessage,omitempty"`
	TransactionID    string `json:"transactionId,omitempty"`
	QuoteID          string `json:"quoteId,omitempty"`
	Tool             string `json:"tool,omitempty"`
	FromAddress      string `json:"fromAddress,omitempty"`
	ToAddress        string `json:"toAddress,omitempty"`
	// RefundTo is the quote's refund address, when it named one;
	// RefundedTo where the input went back once the swap was refunded
	// (DONE, REFUNDED): RefundTo, or fromAddress without one.
	RefundTo   string   `json:"refundTo,omitempty"`
	RefundedTo string   `json:"refundedTo,omitempty"`
	Sending    *legView `json:"sending,omitempty"`
	Receiving  *legView `json:"receiving,omitempty"`
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
		Tool: sw.Tool, FromAddress: sw.FromAddress, ToAddress: sw.ToAddress, RefundTo: sw.RefundTo, RefundedTo: sw.RefundedTo(),
		Sending: &send, Receiving: &recv}
}
