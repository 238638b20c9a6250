package edge

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// QuoteSwaps finds the swap tracked for a quote; the store is one
// (store.Swaps). An untracked quote is account.ErrNotFound.
type QuoteSwaps interface {
	SwapByQuote(ctx context.Context, quoteID string) (*swap.Swap, error)
}

// RetainedTickets returns the ticket of an issued quote whether or not it
// expired, for as long as it is retained; the quote engine is one. A quote
// never issued, or no longer retained, is quote.ErrUnknown.
type RetainedTickets interface {
	Ticket(ctx context.Context, id string) (*quote.Ticket, error)
}

// SourceTxs reads a transaction back from its source chain and finds the
// quote whose transaction request carried its calldata; the composition
// root joins the chains' readers (the sandbox chain, or the --evm-rpc
// node) and the quotes' call-reference index.
type SourceTxs interface {
	// Reads reports whether chainID's transactions can be read: the
	// sandbox chains all can, a live chain only with a node.
	Reads(chainID uint64) bool
	// SourceTx is what chainID shows of hash: nil when the chain does not
	// know it, or holds it pending (pending true); an error is a read that
	// failed or timed out.
	SourceTx(ctx context.Context, chainID uint64, hash string) (tx *swap.SourceTx, pending bool, err error)
	// QuoteByCallRef is the id of the quote whose transaction's calldata
	// hashes to ref (quote.CallRef), or account.ErrNotFound.
	QuoteByCallRef(ctx context.Context, ref [32]byte) (string, error)
}

// notFollowed is NOT_FOUND's reason for a hash nothing tracks, asked
// without fromChain.
const notFollowed = "the service does not follow this transaction; give fromChain to let it find the transaction on its source chain, " +
	"or report it with POST /v1/execute {quoteId, txHash}"

// sourceReadTimeout bounds GET /v1/status's read of a source chain: the
// node's answer is a couple of calls, and a client polling status would
// rather be told to retry than wait.
const sourceReadTimeout = 5 * time.Second

// status answers GET /v1/status with exactly one of txHash (and optionally
// fromChain) or quoteId: the tracked swap's status, or NOT_FOUND (HTTP
// 200) with the reason in substatusMessage. A txHash the service does not
// follow is looked for on fromChain, when given, and tracked from then on
// if it is the transaction of a quote the service issued (see
// trackFromChain).
func (s *Server) status(r *Request) error {
	h, hasHash := query(r, "txHash")
	qid, hasQuote := query(r, "quoteId")
	switch {
	case hasHash && hasQuote:
		return apierr.Param("quoteId", "give txHash or quoteId, not both")
	case hasQuote:
		if _, ok := query(r, "fromChain"); ok {
			return apierr.Param("fromChain", "fromChain goes with txHash, not quoteId")
		}
		return s.statusOfQuote(r, qid)
	case !hasHash || h == "":
		return apierr.Param("txHash", "txHash (or quoteId) is required")
	case !isTxHash(h):
		return apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", h)
	}
	from, err := s.sourceChainParam(r)
	if err != nil {
		return err
	}
	sw, err := s.deps.Swaps.Swap(r.Context(), h)
	switch {
	case err == nil:
		writeJSON(r, statusOK, statusOf(sw))
		return nil
	case !errors.Is(err, account.ErrNotFound):
		return apierr.From(err)
	case from == nil:
		return notFound(r, "", notFollowed)
	}
	ctx, cancel := context.WithTimeout(r.Context(), sourceReadTimeout)
	defer cancel()
	sw, qid, why, err := s.trackFromChain(ctx, from.ID, h)
	switch {
	case err != nil:
		return err
	case sw == nil:
		return notFound(r, qid, why)
	}
	writeJSON(r, statusOK, statusOf(sw))
	return nil
}

// sourceChainParam reads fromChain, the source chain a transaction nobody
// reported is looked for on (GET /v1/status, GET /v1/status/stream): nil
// when not given; refused, naming it, when it is not an EVM chain whose
// transactions this server can read.
func (s *Server) sourceChainParam(r *Request) (*registry.Chain, error) {
	v, ok := query(r, "fromChain")
	if !ok {
		return nil, nil
	}
	c, perr := s.chainParam("fromChain", v)
	if perr != nil {
		return nil, perr
	}
	if c.ChainType != registry.EVM {
		return nil, apierr.Param("fromChain", "chain "+v+" is not an EVM chain: its transactions are not read back; report the transaction with POST /v1/execute {quoteId, txHash}").
			With("value", v)
	}
	if s.deps.SourceTxs == nil || s.deps.RetainedTickets == nil || !s.deps.SourceTxs.Reads(c.ID) {
		return nil, apierr.Param("fromChain", "this server reads no node of chain "+v+"; report the transaction with POST /v1/execute {quoteId, txHash}").
			With("value", v)
	}
	return c, nil
}

// notFound answers NOT_FOUND with why.
func notFound(r *Request, quoteID, why string) error {
	writeJSON(r, statusOK, statusView{Status: swap.StatusNotFound, QuoteID: quoteID, SubstatusMessage: why})
	return nil
}

// trackFromChain finds a transaction nobody reported on its source chain
// and, when it is the transaction a quote handed the wallet (its calldata
// finds the quote, swap.MatchTicket checks the rest), tracks it exactly as
// POST /v1/execute with txHash does: the same swap, its webhooks to the
// partner whose key made the quote. A reverted transaction is the quote's
// too: tracked, its swap fails as the tracker reports a failed source.
// Otherwise sw is nil and why says what the chain showed (with the quote's
// id, when one was found); err is a read that failed.
func (s *Server) trackFromChain(ctx context.Context, chainID uint64, h string) (sw *swap.Swap, quoteID, why string, err error) {
	chain := strconv.FormatUint(chainID, 10)
	tx, pending, err := s.deps.SourceTxs.SourceTx(ctx, chainID, h)
	switch {
	case err != nil:
		return nil, "", "", apierr.New(apierr.ServiceUnavailable, "could not read the transaction from chain "+chain+"; retry").
			With("fromChain", chainID).Wrap(err)
	case tx == nil && pending:
		return nil, "", "the transaction is pending on chain " + chain + ", not mined yet; ask again once it is", nil
	case tx == nil:
		return nil, "", "chain " + chain + " does not show this transaction (not on chain yet, or another chain's); ask again once it is mined", nil
	}
	id, err := s.deps.SourceTxs.QuoteByCallRef(ctx, tx.CallRef)
	if errors.Is(err, account.ErrNotFound) {
		return nil, "", "the transaction on chain " + chain + " is not the transaction of any quote this service issued", nil
	}
	if err != nil {
		return nil, "", "", apierr.From(err)
	}
	t, err := s.deps.RetainedTickets.Ticket(ctx, id)
	if errors.Is(err, quote.ErrUnknown) {
		return nil, id, "the transaction is quote " + id + "'s, which is no longer retained " + s.retained(), nil
	}
	if err != nil {
		return nil, "", "", apierr.From(err)
	}
	if ok, why := swap.MatchTicket(t, *tx); !ok {
		return nil, "", "the transaction on chain " + chain + " is not the transaction of any quote this service issued: " + why, nil
	}
	if sw, err = s.deps.Swaps.Track(ctx, swap.FromTicket(t, h)); err != nil {
		return nil, "", "", apierr.New(apierr.ServiceUnavailable, "could not start tracking the swap; retry").Wrap(err)
	}
	return sw, t.ID, "", nil
}

// statusOfQuote answers GET /v1/status?quoteId=: the swap of the quote
// once its transaction is known (reported by execute, or found by
// trackFromChain), NOT_FOUND with the reason before.
func (s *Server) statusOfQuote(r *Request, id string) error {
	at, ok := quote.IssuedAt(id)
	if !ok {
		return apierr.Param("quoteId", "quoteId must be the id of a quote from GET /v1/quote").With("value", id)
	}
	if s.deps.QuoteSwaps == nil || s.deps.RetainedTickets == nil {
		return apierr.Param("quoteId", "this server answers status by txHash only")
	}
	sw, err := s.deps.QuoteSwaps.SwapByQuote(r.Context(), id)
	if err == nil {
		writeJSON(r, statusOK, statusOf(sw))
		return nil
	}
	if !errors.Is(err, account.ErrNotFound) {
		return apierr.From(err)
	}
	_, err = s.deps.RetainedTickets.Ticket(r.Context(), id)
	switch {
	case err == nil:
		return notFound(r, id, "quote "+id+" is known, but no transaction of it was reported: report it with POST /v1/execute {quoteId, txHash}, "+
			"or ask GET /v1/status?txHash=&fromChain= once it is broadcast")
	case !errors.Is(err, quote.ErrUnknown):
		return apierr.From(err)
	case r.Now.After(at.Add(quote.TTL + s.deps.QuoteRetention)):
		return notFound(r, id, "quote "+id+" expired and is no longer retained "+s.retained())
	}
	return notFound(r, id, "no quote "+id+" was issued")
}

// retained says how long quotes are kept past their expiry.
func (s *Server) retained() string {
	return "(quotes are kept " + s.deps.QuoteRetention.String() + " past their expiry)"
}
