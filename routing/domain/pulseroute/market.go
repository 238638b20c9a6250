package pulseroute

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Keys names the provider's two tools in a market: the warp-route leg of
// every route across chain 369 and the PulseX leg of swaps within it.
type Keys struct {
	Warp   string
	PulseX string
}

// Market is where the provider's figures come from, other than chain state:
// its tools, USD prices, the floor and gas of a leg, a tool's own fee, step
// 1 of a multi-step quote (a swap into USDC on the source chain) and the
// transaction of a swap within chain 369. Two implementations exist: the
// simulator's, which prices like every other sandbox route so that routes
// through 369 rank fairly against them, and the live one, which takes
// reference-data prices, the gas oracle's gas prices and the aggregator's
// step 1, and builds calls of the real PulseX router. The provider adds
// what is its own: chain state, the warp route, Swapgate's contracts and
// Shapes B and C.
type Market interface {
	// Keys names the provider's tools.
	Keys() Keys
	// Tool looks a tool up.
	Tool(key string) (*tools.Tool, bool)
	// Inject plays the tool's configured latency, hang, panic or failure
	// before the tool answers (the sandbox's; live has none).
	Inject(ctx context.Context, quoteID string, t *tools.Tool) error
	// TokenPrice is a token's USD price, if it has one.
	TokenPrice(t *registry.Token) (float64, bool)
	// InputUSD values the request's input on tool t and checks the tool's
	// floor. With priced set, an input without a USD price is refused
	// (NO_POSSIBLE_ROUTE) where the market needs one; otherwise it is worth 0.
	InputUSD(provider string, req *quote.Request, t *tools.Tool, priced bool) (float64, error)
	// GasCosts prices a transaction of sendGas units on a chain, with an
	// approval before it when approve is set.
	GasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (pricing.GasQuote, error)
	// ToolFeeCosts lists a tool's own fee on an input worth inUSD, if it
	// charges one.
	ToolFeeCosts(t *tools.Tool, req *quote.Request, inUSD float64) []quote.FeeCost
	// SwapToUSDC is step 1 of a multi-step inbound quote: req's input
	// swapped on its own chain into the chain's warp-route USDC, delivered
	// to receiver. warp is the route's own tool, for refusals and floors.
	SwapToUSDC(ctx context.Context, req *quote.Request, warp *tools.Tool, usdc *registry.Token, receiver common.Address) (*Step1, error)
	// CheckSwap369 refuses, with its reason, a swap within chain 369 that
	// the market cannot build.
	CheckSwap369(req *quote.Request, t *tools.Tool) error
	// Swap369 is the transaction of a swap within chain 369 along path
	// (from and to are the PulseX path's ends, WPLS for native PLS),
	// settling at preFee before the partner fee and at least minOut after
	// it; approval is the address an ERC-20 input is approved to.
	Swap369(req *quote.Request, s Swap369) (tx quote.TxRequest, err error)
	// Spender369 is the address an ERC-20 input of a swap within chain 369
	// is approved to.
	Spender369() common.Address
}

// Step1 is step 1 of a multi-step inbound quote as the market prices and
// (unless the request is indicative) builds it.
type Step1 struct {
	// InUSD is the input's USD value (0 without a price).
	InUSD float64
	// PreFee and Net are the USDC delivered to the inbound receiver before
	// and after the partner fee.
	PreFee, Net *big.Int
	// NetMin is the least USDC step 1's transaction delivers to the
	// inbound receiver (its minimum out); nil when not known. A deposit
	// registered for the quote is refused below it.
	NetMin *big.Int
	// GasCosts are step 1's gas costs.
	GasCosts []quote.GasCost
	// FeeCosts are step 1's fees; ListsPartnerFee says whether they list
	// the partner fee already (the aggregator's do), so that the route
	// does not list it twice.
	FeeCosts        []quote.FeeCost
	ListsPartnerFee bool
	// Duration is step 1's execution time in seconds.
	Duration int
	// ApprovalAddress is the ERC-20 spender step 1 needs ("" for a native
	// input).
	ApprovalAddress string
	// ToolName names the venue of step 1 for its description; "" leaves
	// it unnamed.
	ToolName string
	// Tx is step 1's transaction; nil for an indicative request.
	Tx *quote.TxRequest
}

// Swap369 is what Market.Swap369 builds a swap within chain 369 from.
type Swap369 struct {
	// From and To are the tokens of the call ("zero" for native PLS).
	From, To  common.Address
	Path      []common.Address
	MinOut    *big.Int
	PreFee    *big.Int
	Recipient common.Address
	Gas       pricing.GasQuote
}
