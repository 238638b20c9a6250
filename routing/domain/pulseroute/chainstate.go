package pulseroute

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// ChainState is the chain state the pulseroute provider reads: the native
// payment a Hyperlane warp-route transfer from a chain to a destination
// domain needs (quoteGasPayment), and what a PulseX swap along a path yields
// (getAmountsOut). It is the one way the provider reads chain 369 and the
// warp routes; the simulator's deterministic chain answers it in sandbox
// mode, a JSON-RPC reader of the real contracts in live mode.
type ChainState interface {
	QuoteGasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error)
	AmountsOut(ctx context.Context, amountIn *big.Int, path []common.Address) ([]*big.Int, error)
}

// AmountsInReader is chain state that also reads PulseX backwards: the
// input a swap along path needs to yield amountOut (getAmountsIn, one
// amount per path token, the last being amountOut). pulseroute sizes the
// input of an exact-output direct route that swaps on PulseX with it; chain
// state without it leaves those routes out of exact-output races. A path
// whose pools cannot yield amountOut answers ErrNoPair.
type AmountsInReader interface {
	AmountsIn(ctx context.Context, amountOut *big.Int, path []common.Address) ([]*big.Int, error)
}

// ErrNoPair is what a ChainState answers for a PulseX hop without a pool;
// the provider turns it into a reasoned no-route.
var ErrNoPair = errors.New("PulseX has no pair")

// ErrNoNode is what a ChainState answers for a chain it has no JSON-RPC
// node for (and nothing to fall back on); the provider turns it into a
// reasoned no-route naming the chain, since nothing about the route can be
// known without reading it.
var ErrNoNode = errors.New("no JSON-RPC node configured for the chain")
