package pulserpc

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Chain reads pulseroute's chain state over JSON-RPC on the chains that
// have a node: the interchain gas payment from the source chain's
// warp-route router (chain 369's synthetic USDCh router for outbound
// transfers), PulseX amounts from chain 369's PulseX router. A read on a
// chain without a node goes to the fallback when there is one (the sandbox
// chain, so that a sandbox deployment can point some chains at real nodes)
// and is pulseroute.ErrNoNode otherwise (live mode, where nothing is made
// up). It is immutable and safe for concurrent use.
type Chain struct {
	callers   map[uint64]Caller
	contracts *pulseroute.Contracts
	fallback  pulseroute.ChainState
	// timeout bounds each node read (noderead.Bound).
	timeout time.Duration
}

var (
	_ pulseroute.ChainState      = (*Chain)(nil)
	_ pulseroute.AmountsInReader = (*Chain)(nil)
)

// Dial connects to the JSON-RPC URL of each chain in urls (keyed by chain
// id) and returns the reader, each node read bounded by timeout
// (--rpc-timeout); fallback, which may be nil, answers for the chains
// without a URL.
func Dial(ctx context.Context, contracts *pulseroute.Contracts, urls map[uint64]string, timeout time.Duration, fallback pulseroute.ChainState) (*Chain, error) {
	callers := make(map[uint64]Caller, len(urls))
	for id, url := range urls {
		c, err := dialNode(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("pulseroute RPC for chain %d: %w", id, err)
		}
		callers[id] = c
	}
	r := New(callers, contracts, fallback)
	r.timeout = timeout
	return r, nil
}

// New builds the reader from connected callers, its reads under the
// caller's deadline only: the service's reader comes from Dial.
func New(callers map[uint64]Caller, contracts *pulseroute.Contracts, fallback pulseroute.ChainState) *Chain {
	return &Chain{callers: callers, contracts: contracts, fallback: fallback}
}

// QuoteGasPayment reads quoteGasPayment on the chain's warp-route router
// when the chain has a node and a warp route.
func (r *Chain) QuoteGasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error) {
	c, ok := r.callers[chainID]
	w, okw := r.contracts.WarpRoute(chainID)
	if !ok || !okw {
		if r.fallback == nil {
			return nil, fmt.Errorf("quoteGasPayment on chain %d: %w", chainID, pulseroute.ErrNoNode)
		}
		return r.fallback.QuoteGasPayment(ctx, chainID, destination)
	}
	ctx, cancel := noderead.Bound(ctx, r.timeout)
	defer cancel()
	return QuoteGasPayment(ctx, c, w.Router, destination)
}

// AmountsOut reads getAmountsOut on PulseX when chain 369 has a node.
func (r *Chain) AmountsOut(ctx context.Context, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	c, ok := r.callers[quote.PulseChainID]
	if !ok {
		if r.fallback == nil {
			return nil, fmt.Errorf("getAmountsOut on chain %d: %w", quote.PulseChainID, pulseroute.ErrNoNode)
		}
		return r.fallback.AmountsOut(ctx, amountIn, path)
	}
	ctx, cancel := noderead.Bound(ctx, r.timeout)
	defer cancel()
	return GetAmountsOut(ctx, c, r.contracts.PulseX().Router, amountIn, path)
}

// AmountsIn reads getAmountsIn on PulseX when chain 369 has a node; without
// one, the fallback answers if it reads PulseX backwards too.
func (r *Chain) AmountsIn(ctx context.Context, amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	c, ok := r.callers[quote.PulseChainID]
	if !ok {
		if fb, ok := r.fallback.(pulseroute.AmountsInReader); ok {
			return fb.AmountsIn(ctx, amountOut, path)
		}
		return nil, fmt.Errorf("getAmountsIn on chain %d: %w", quote.PulseChainID, pulseroute.ErrNoNode)
	}
	ctx, cancel := noderead.Bound(ctx, r.timeout)
	defer cancel()
	return GetAmountsIn(ctx, c, r.contracts.PulseX().Router, amountOut, path)
}
