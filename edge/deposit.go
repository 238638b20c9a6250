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

// DepositQuotes finds intents quotes by their deposit target and returns
// their tickets even past expiry; the ticket keeper and the quote engine
// serve them. An unknown target is account.ErrNotFound.
type DepositQuotes interface {
	QuoteByDeposit(ctx context.Context, address, memo string) (string, error)
	Ticket(ctx context.Context, id string) (*quote.Ticket, error)
}

// DepositSwaps finds the tracked swap of an intents deposit; the store is
// one. An unknown target is account.ErrNotFound.
type DepositSwaps interface {
	SwapByDeposit(ctx context.Context, address, memo string) (*swap.Swap, error)
}

// DepositNotifier tells the intents provider of a deposit transaction; the
// live 1Click adapter is one. It is optional: trackers notice deposits
// without it, later.
type DepositNotifier interface {
	SubmitDeposit(ctx context.Context, txHash, depositAddress, memo string) error
}

// maxDepositMemo bounds a deposit memo: the intents provider's memos (and
// the sandbox's, a quote id) are far shorter; nothing longer, or
// unprintable, is looked up.
const maxDepositMemo = 128

func (s *Server) depositRoutes() {
	s.Handle("POST", "/v1/execute/deposit/submit", route{bucket: BucketHeavy, name: "deposit-submit", idempotent: true}, s.submitDeposit)
	s.Handle("GET", "/v1/execute/deposit/status", route{bucket: BucketHeavy, name: "deposit-status"}, s.depositStatus)
}

// depositSubmitBody is the body of POST /v1/execute/deposit/submit.
type depositSubmitBody struct {
	TxHash         *string `json:"txHash"`
	DepositAddress *string `json:"depositAddress"`
	Memo           *string `json:"memo"`
}

// depositStatusView is an intents deposit in the intents provider's
// vocabulary: PENDING_DEPOSIT (nothing reported yet), KNOWN_DEPOSIT_TX,
// INCOMPLETE_DEPOSIT, PROCESSING, then SUCCESS, REFUNDED or FAILED.
type depositStatusView struct {
	Status         string `json:"status"`
	DepositAddress string `json:"depositAddress"`
	DepositMemo    string `json:"depositMemo,omitempty"`
	QuoteID        string `json:"quoteId"`
	TxHash         string `json:"txHash,omitempty"`
	Message        string `json:"message,omitempty"`
	UpdatedAt      int64  `json:"updatedAt,omitempty"`
	// RefundTo is the quote's refund address, when it named one;
	// RefundedTo where the deposit went back once it was REFUNDED:
	// RefundTo, or the quote's fromAddress without one.
	RefundTo    string       `json:"refundTo,omitempty"`
	RefundedTo  string       `json:"refundedTo,omitempty"`
	SwapDetails *swapDetails `json:"swapDetails,omitempty"`
}

// swapDetails mirrors the intents provider's swapDetails.
type swapDetails struct {
	AmountIn                 string   `json:"amountIn"`
	AmountOut                string   `json:"amountOut,omitempty"`
	OriginChainTxHashes      []string `json:"originChainTxHashes"`
	DestinationChainTxHashes []string `json:"destinationChainTxHashes"`
	RefundReason             string   `json:"refundReason,omitempty"`
}

func depositStatusOf(sw *swap.Swap) depositStatusView {
	v := depositStatusView{Status: sw.DepositStatus(), DepositAddress: sw.DepositAddress, DepositMemo: sw.DepositMemo,
		QuoteID: sw.QuoteID, TxHash: sw.Sending.TxHash, Message: sw.SubstatusMessage, UpdatedAt: sw.UpdatedAt.Unix(),
		RefundTo: sw.RefundTo, RefundedTo: sw.RefundedTo()}
	d := &swapDetails{AmountIn: sw.FromAmount, OriginChainTxHashes: []string{sw.Sending.TxHash}, DestinationChainTxHashes: []string{}}
	if sw.Receiving.TxHash != "" {
		d.AmountOut = sw.Receiving.Amount
		d.DestinationChainTxHashes = append(d.DestinationChainTxHashes, sw.Receiving.TxHash)
	}
	if v.Status == swap.DepositRefunded || v.Status == swap.DepositFailed {
		d.RefundReason = sw.SubstatusMessage
	}
	v.SwapDetails = d
	return v
}

// submitDeposit answers POST /v1/execute/deposit/submit {txHash,
// depositAddress, memo?}: the deposit to an intents quote's address is
// tracked from its transaction on.
func (s *Server) submitDeposit(r *Request) error {
	var body depositSubmitBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	switch {
	case body.TxHash == nil || *body.TxHash == "":
		return apierr.Param("txHash", "txHash is required: the deposit transaction")
	case body.DepositAddress == nil || *body.DepositAddress == "":
		return apierr.Param("depositAddress", "depositAddress is required")
	}
	memo := ""
	if body.Memo != nil {
		memo = *body.Memo
		if err := textParam("memo", memo, maxDepositMemo); err != nil {
			return err
		}
	}
	id, err := s.deps.DepositQuotes.QuoteByDeposit(r.Context(), *body.DepositAddress, memo)
	if errors.Is(err, account.ErrNotFound) {
		return apierr.Param("depositAddress", "no intents quote deposits to this address (and memo)").With("depositAddress", *body.DepositAddress)
	}
	if err != nil {
		return apierr.From(err)
	}
	t, err := s.deps.DepositQuotes.Ticket(r.Context(), id)
	if errors.Is(err, quote.ErrUnknown) {
		return apierr.Param("depositAddress", "the quote of this deposit address is no longer kept; ask the status by deposit address").
			With("quoteId", id)
	}
	if err != nil {
		return apierr.From(err)
	}
	if c, ok := s.deps.Registry.Chain(t.FromChain); ok && c.ChainType == registry.EVM && !isTxHash(*body.TxHash) {
		return apierr.Param("txHash", "txHash must be 0x and 64 hex digits on an EVM chain").With("value", *body.TxHash)
	}
	if len(*body.TxHash) > 128 {
		return apierr.Param("txHash", "txHash is too long").With("value", (*body.TxHash)[:128])
	}
	sw := swap.FromTicket(t, *body.TxHash)
	sw.DepositMemo = memo
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	tracked, err := s.deps.Swaps.Track(ctx, sw)
	if err != nil {
		return apierr.New(apierr.ServiceUnavailable, "could not start tracking the deposit; retry").Wrap(err)
	}
	if tracked.DepositAddress != *body.DepositAddress {
		return apierr.Param("txHash", "transaction "+tracked.ID+" is already tracked for another deposit").With("quoteId", tracked.QuoteID)
	}
	if n := s.deps.DepositNotifier; n != nil {
		// The deposit is tracked whatever the provider answers: a failed
		// notice only means the provider notices the deposit by itself.
		if err := n.SubmitDeposit(ctx, *body.TxHash, *body.DepositAddress, memo); err != nil {
			s.log.Warn("intents deposit submit", "txHash", *body.TxHash, "err", err)
		}
	}
	writeJSON(r, statusOK, depositStatusOf(tracked))
	return nil
}

// depositStatus answers GET /v1/execute/deposit/status?depositAddress=…
// (&depositMemo= in MEMO mode).
func (s *Server) depositStatus(r *Request) error {
	addr, _ := query(r, "depositAddress")
	if addr == "" {
		return apierr.Param("depositAddress", "depositAddress is required")
	}
	memo, _ := query(r, "depositMemo")
	if err := textParam("depositMemo", memo, maxDepositMemo); err != nil {
		return err
	}
	sw, err := s.deps.DepositSwaps.SwapByDeposit(r.Context(), addr, memo)
	if err == nil {
		writeJSON(r, statusOK, depositStatusOf(sw))
		return nil
	}
	if !errors.Is(err, account.ErrNotFound) {
		return apierr.From(err)
	}
	id, err := s.deps.DepositQuotes.QuoteByDeposit(r.Context(), addr, memo)
	if errors.Is(err, account.ErrNotFound) {
		e := apierr.Param("depositAddress", "no intents deposit is known at this address (and memo)").With("depositAddress", addr)
		e.Status = 404
		return e
	}
	if err != nil {
		return apierr.From(err)
	}
	v := depositStatusView{Status: swap.DepositPending, DepositAddress: addr, DepositMemo: memo, QuoteID: id,
		Message: "no deposit reported yet: send the amount, then POST /v1/execute/deposit/submit with its transaction"}
	// The quote's refund address, while its ticket is kept (a ticket
	// already swept only leaves it out).
	if t, err := s.deps.DepositQuotes.Ticket(r.Context(), id); err == nil {
		v.RefundTo = t.RefundTo
	}
	writeJSON(r, statusOK, v)
	return nil
}
