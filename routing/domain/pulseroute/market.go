package pulseroute

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// Market is what the provider takes from the sandbox market: its tool
// catalog and injected behaviour, USD prices, amount floors, gas and tool
// fees, and the sandbox router's calldata. Routes through chain 369 are
// priced with the same figures as every other sandbox route, so they rank
// fairly against them; the provider only adds what is its own (chain 369
// state, the warp route, Swapgate's contracts and Shapes B and C).
type Market interface {
	// Tool looks a tool up in the catalog the market prices with.
	Tool(key string) (*tools.Tool, bool)
	// Inject plays the tool's configured latency, hang, panic or failure
	// before the tool answers.
	Inject(ctx context.Context, quoteID string, t *tools.Tool) error
	// TokenPrice is a token's USD price, if it has one.
	TokenPrice(t *registry.Token) (float64, bool)
	// CheckFloor refuses, with AMOUNT_TOO_LOW, an input worth less than the
	// tool's floor.
	CheckFloor(provider string, req *quote.Request, t *tools.Tool, inUSD float64) error
	// PriceSwap prices the request on a tool as the aggregator would: the
	// input's USD value and the pre-fee output.
	PriceSwap(provider string, req *quote.Request, t *tools.Tool) (inUSD float64, preFee *big.Int, err error)
	// GasCosts prices a transaction of sendGas units on a chain, with an
	// approval before it when approve is set.
	GasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (sandbox.GasQuote, error)
	// ToolFeeCost lists a tool's own fee on an input worth inUSD.
	ToolFeeCost(t *tools.Tool, req *quote.Request, inUSD float64) quote.FeeCost
	// SwapCall builds the sandbox router's swap calldata for the request;
	// preFee is the quoted output before the partner fee, which the router
	// settles at.
	SwapCall(req *quote.Request, fromToken, toToken common.Address, minOut, preFee *big.Int, receiver common.Address) ([]byte, error)
}

// The sandbox market is the Market the service runs with.
var _ Market = (*sandbox.Market)(nil)
