package pulseroute

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// RPCChain reads the provider's chain state over JSON-RPC on the chains
// that have a node configured, and from the sandbox chain on the others, so
// that a deployment can point some chains at real nodes while the rest stay
// deterministic. Gas payments are read from the source chain's warp-route
// router, PulseX amounts from chain 369's PulseX router. It is immutable and
// safe for concurrent use.
type RPCChain struct {
	callers   map[uint64]Caller
	contracts *Contracts
	fallback  ChainState
}

var _ ChainState = (*RPCChain)(nil)

// DialRPC connects to the JSON-RPC URL of each chain in urls (keyed by chain
// id) and returns the reader; chains without a URL read the sandbox chain,
// built from the registry's reference prices.
func DialRPC(ctx context.Context, reg *registry.Registry, contracts *Contracts, urls map[uint64]string) (*RPCChain, error) {
	fb, err := NewSandboxChain(reg)
	if err != nil {
		return nil, err
	}
	callers := make(map[uint64]Caller, len(urls))
	for id, url := range urls {
		c, err := dialNode(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("pulseroute RPC for chain %d: %w", id, err)
		}
		callers[id] = c
	}
	return newRPCChain(callers, contracts, fb), nil
}

// newRPCChain builds the reader from connected callers.
func newRPCChain(callers map[uint64]Caller, contracts *Contracts, fallback ChainState) *RPCChain {
	return &RPCChain{callers: callers, contracts: contracts, fallback: fallback}
}

// QuoteGasPayment reads quoteGasPayment on the chain's warp-route router
// when the chain has a node and a warp route, and asks the sandbox chain
// otherwise.
func (r *RPCChain) QuoteGasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error) {
	c, ok := r.callers[chainID]
	w, okw := r.contracts.WarpRoute(chainID)
	if !ok || !okw {
		return r.fallback.QuoteGasPayment(ctx, chainID, destination)
	}
	return QuoteGasPayment(ctx, c, w.Router, destination)
}

// AmountsOut reads getAmountsOut on PulseX when chain 369 has a node, and
// asks the sandbox chain otherwise.
func (r *RPCChain) AmountsOut(ctx context.Context, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	c, ok := r.callers[quote.PulseChainID]
	if !ok {
		return r.fallback.AmountsOut(ctx, amountIn, path)
	}
	return GetAmountsOut(ctx, c, r.contracts.PulseX().Router, amountIn, path)
}
