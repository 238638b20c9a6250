package edge

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// WalletReader reads what a quote's pre-flight checks need of a wallet
// (its coin, its input token and the allowance the route's spender has of
// it) in one read of the source chain: over JSON-RPC where --evm-rpc names
// a node for the chain, from the sandbox chain otherwise in sandbox mode.
type WalletReader interface {
	ReadWallet(ctx context.Context, q quote.WalletQuery) (quote.WalletState, error)
	Serves(chainID uint64) bool
}

// withPreflight is is, or a copy of it carrying its route's checks when
// the route takes them (preflight): what GET /v1/quote and the quote
// stream's best event answer.
func (s *Server) withPreflight(ctx context.Context, by time.Time, req *quote.Request, is *quote.Issued) *quote.Issued {
	pf := s.preflight(ctx, by, req, is.Route)
	if pf == nil {
		return is
	}
	shown := *is
	shown.Preflight = pf
	return &shown
}

// preflight reads the chosen route's wallet and answers its checks,
// approvals and calls (quote.PlanPreflight), or nil for a route that takes
// none (not from an EVM source, no EVM transaction). Choices where the
// contract is silent:
//   - Only the quote answered is checked, once, for its route: GET
//     /v1/quote's and the best event of /v1/quote/stream. /v1/routes and
//     the stream's route events list many routes, most never sent, and a
//     read per route would cost each of them a node's round trip.
//   - The read ends at the quote's deadline (by, counted from the start of
//     the race) or --rpc-timeout, whichever comes first. A chain without a
//     node, a failed read, or one the deadline cut short answers checks
//     null and checksError with the reason; the quote is answered anyway,
//     without approvals or calls (whether they are needed is not known).
func (s *Server) preflight(ctx context.Context, by time.Time, req *quote.Request, rt *quote.Route) *quote.Preflight {
	q, ok := quote.PreflightQuery(req, rt)
	if !ok {
		return nil
	}
	chain := strconv.FormatUint(q.ChainID, 10)
	if s.deps.Wallets == nil || !s.deps.Wallets.Serves(q.ChainID) {
		return quote.PreflightFailed("no node reads chain " + chain + ": the wallet's allowance and balances are not checked")
	}
	if time.Until(by) <= 0 {
		return quote.PreflightFailed("the quote's deadline passed before the wallet could be read on chain " + chain)
	}
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	w, err := s.deps.Wallets.ReadWallet(ctx, q)
	switch {
	case errors.Is(err, noderead.ErrTimeout):
		return quote.PreflightFailed("the node of chain " + chain + " did not answer within --rpc-timeout")
	case err != nil && ctx.Err() != nil:
		return quote.PreflightFailed("the quote's deadline passed before the node of chain " + chain + " answered")
	case err != nil:
		if s.deps.Logger != nil {
			s.deps.Logger.Warn("quote: wallet checks", "chainId", q.ChainID, "err", err)
		}
		// A node's JSON-RPC error is its own words; any other failure is
		// not shown, as it may name the node's URL (and a key in it).
		var rpcErr interface {
			error
			ErrorCode() int
		}
		if errors.As(err, &rpcErr) {
			return quote.PreflightFailed("the node of chain " + chain + " refused the wallet's read: " + rpcErr.Error())
		}
		return quote.PreflightFailed("the node of chain " + chain + " could not be read")
	}
	return quote.PlanPreflight(req, rt, w)
}
