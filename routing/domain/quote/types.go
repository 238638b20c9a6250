// Package quote is the domain of GET /v1/quote and /v1/routes: the typed,
// validated request; the candidate routes providers answer with; the rules
// that pick providers for a pair; scoring by order; partner fees and
// slippage; the issued quote and the response shapes (A, B and C) it is
// rendered in, with their encoding. It is plain Go: the actor topology that
// races providers lives in actors/engine, and HTTP in edge, which writes
// what AppendResponse and AppendShapeA make.
package quote

import (
	"context"
	"math"
	"math/big"
	"time"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// Order is how the best route is chosen.
type Order string

// Orders of the specification.
const (
	Recommended Order = "RECOMMENDED"
	Fastest     Order = "FASTEST"
	Cheapest    Order = "CHEAPEST"
)

// Request is a validated quote request. Every field is checked before a
// provider sees it: chains and tokens are known, amounts fit in uint256,
// addresses are valid for their chains.
type Request struct {
	// ID is the quote id the engine assigned; providers use it in calldata
	// and deposit references so a quote can be traced end to end.
	ID        string
	From, To  *registry.Chain
	FromToken *registry.Token
	ToToken   *registry.Token
	// FromAmount is the input. On an exact-output request (ToAmount set)
	// it is nil as parsed: each provider sizes the input its route needs
	// and answers it as the route's FromAmount (see ExactOutput).
	FromAmount *big.Int
	// ToAmount, when set, makes the request an exact-output one: the route
	// must deliver at least ToAmount after every fee and the slippage, so
	// that its ToAmountMin >= ToAmount.
	ToAmount    *big.Int
	FromAddress string
	// ToAddress is the recipient; it equals FromAddress on a dry quote.
	ToAddress string
	// RefundTo is the source-chain address a refund is paid to, "" when
	// the client gave none: refunds then go to FromAddress (RefundAddress).
	RefundTo string
	// Dry is set when the client gave no toAddress: the route is computed
	// with fromAddress as recipient and the answer says isDryQuote.
	Dry bool
	// Indicative is set when the recipient cannot receive on the destination
	// chain (a dry quote across ecosystems): routes carry no transaction.
	Indicative bool
	// Slippage is a fraction (0.005 = 0.5%).
	Slippage float64
	// AllowTools restricts the tools considered (nil: all); DenyTools
	// excludes tools; PreferredTool wins ties and near-ties.
	AllowTools    map[string]bool
	DenyTools     map[string]bool
	PreferredTool string
	Order         Order
	// Strategy is the request's own timing parameters, overriding the
	// server's default strategy (see Strategy).
	Strategy StrategyParams
	// FeeBps is the partner (or anonymous default) fee in basis points;
	// FeeRecipient the partner's fee wallet in the settlement ecosystem, ""
	// for the anonymous tier (the platform collects it).
	FeeBps       int
	FeeRecipient string
	PartnerID    string
	Now          time.Time
	// Scenario is the sandbox scenario the quote plays (see package
	// scenario), "" for none; it travels in the quote's ticket.
	Scenario scenario.Name
	// ApprovalMax asks for unlimited approvals (approvalAmount=max): the
	// quote's approvals allow the spender 2^256-1 rather than the exact
	// input (see PlanPreflight).
	ApprovalMax bool
	// Repricing is set when an execute prices an issued quote's route
	// again (see RepriceRequest), the moment a price-drift scenario moves
	// the price.
	Repricing bool
}

// ToolAllowed reports whether the request's tool filters admit a tool.
func (r *Request) ToolAllowed(key string) bool {
	if r.DenyTools[key] {
		return false
	}
	return r.AllowTools == nil || r.AllowTools[key]
}

// TxRequest is a transaction a wallet signs. Data is raw calldata; the
// edge renders numbers as hex strings as LI.FI does.
//
// A non-EVM source's transaction (Solana, Sui) is not an EVM call: it is a
// serialized transaction the upstream built whole, which the wallet signs
// as it is. Such a TxRequest has Encoding set (EncodingBase64), Data the
// decoded bytes, ChainID the source chain, and no To, From, Value or gas:
// the quote shows it as {chainId, encoding, data}, data in that encoding.
type TxRequest struct {
	To       string
	From     string
	Data     []byte
	Value    *big.Int
	ChainID  uint64
	GasLimit uint64
	GasPrice *big.Int
	// Encoding is "" for an EVM transaction, or the encoding in which a
	// non-EVM source's serialized transaction is shown.
	Encoding string
}

// EncodingBase64 is the encoding of a serialized Solana or Sui
// transaction: standard base64 with padding, as the aggregator answers it
// and as those chains' wallets take it.
const EncodingBase64 = "base64"

// NoUSD is a USD figure that is not known: the price it would be valued at
// is absent (never observed, or older than the service's maximum age). It
// is NaN, so that a sum or a product carrying it is unknown too; the
// encoders omit a field that holds it rather than show 0 or a guess.
func NoUSD() float64 { return math.NaN() }

// KnownUSD reports whether a USD figure is known (not NoUSD).
func KnownUSD(v float64) bool { return !math.IsNaN(v) }

// GasCost is one gas expense of a route, in the source chain's native coin.
type GasCost struct {
	Type      string // SEND, APPROVE, FEE, SUM
	Price     *big.Int
	Estimate  uint64
	Limit     uint64
	Amount    *big.Int
	AmountUSD float64
	Token     *registry.Token
}

// FeeCost is one fee taken from a route. Percentage is a fraction.
type FeeCost struct {
	Name        string
	Description string
	Amount      *big.Int
	AmountUSD   float64
	Percentage  float64
	Token       *registry.Token
	Included    bool
}

// Shape says which of the specification's response shapes a route takes.
type Shape uint8

// The three quote shapes of the specification.
const (
	ShapeStandard  Shape = iota // Shape A: aggregator and intents routes
	ShapeDirect                 // Shape B: pulseroute direct (and direct outbound)
	ShapeMultiStep              // Shape C: pulseroute multi-step
)

// Route is one candidate answer. ToAmount is net of every fee, the partner
// fee included; PreFeeToAmount is what the route would deliver without the
// partner fee, so that ToAmount + partner fee == PreFeeToAmount.
type Route struct {
	Provider       string
	Tool           string
	ToolName       string
	StepType       string // swap, cross, intents, lifi
	FromAmount     *big.Int
	ToAmount       *big.Int
	ToAmountMin    *big.Int
	PreFeeToAmount *big.Int
	PartnerFee     *big.Int // in ToToken units; zero when none
	// The USD figures of a route (these, the costs' AmountUSD) are NoUSD
	// where their price is not known.
	FromAmountUSD     float64
	ToAmountUSD       float64
	GasCosts          []GasCost
	FeeCosts          []FeeCost
	ExecutionDuration int
	// ApprovalAddress is the ERC-20 spender ("" for native inputs).
	ApprovalAddress string
	// Tx is nil on indicative quotes.
	Tx *TxRequest
	// DepositAddress and DepositMemo are set on intents routes.
	DepositAddress string
	DepositMemo    string
	// UpstreamRef is the upstream's own name for the quoted route when
	// following its swap needs it ("" otherwise): Relay's request id, which
	// its status endpoint is asked with. It travels in the ticket to the
	// tracked swap.
	UpstreamRef string
	// Shape says how the route is rendered. Shapes B and C carry their
	// data.quote, built by the provider: Direct for ShapeDirect, MultiStep
	// for ShapeMultiStep; Shape A is rendered from the fields above.
	Shape     Shape
	Direct    *DirectQuote
	MultiStep *MultiStepQuote
	// Step1AmountMin is, on a multi-step route, the least intermediate
	// token (USDC) step 1 delivers to the inbound receiver; nil when not
	// known. The ticket keeps it for the deposit's registration.
	Step1AmountMin *big.Int
	// Pending, when set, marks a route priced but not yet built: the
	// amounts in big.Int, the cost lists, the approval address and the
	// transaction are filled in by Complete. Until then PricedGasUSD and
	// PricedFeeUSD stand in for the sums of the cost lists, so that the
	// route ranks exactly as its built form would.
	Pending      Builder
	PricedGasUSD float64
	PricedFeeUSD float64
}

// GasUSD sums the route's gas costs in USD.
func (r *Route) GasUSD() float64 {
	if r.Pending != nil {
		return r.PricedGasUSD
	}
	var s float64
	for _, g := range r.GasCosts {
		s += g.AmountUSD
	}
	return s
}

// FeeUSD sums the route's fee costs in USD.
func (r *Route) FeeUSD() float64 {
	if r.Pending != nil {
		return r.PricedFeeUSD
	}
	var s float64
	for _, f := range r.FeeCosts {
		s += f.AmountUSD
	}
	return s
}

// Provider is one upstream: the sandbox market, or a real adapter. A
// provider splits a request into independent legs (the sandbox: one per
// tool; real adapters: a single leg, "", since the upstream picks the tool)
// so that the engine can race legs and drop late ones.
type Provider interface {
	Name() string
	Legs(req *Request) []string
	QuoteLeg(ctx context.Context, req *Request, leg string) (*Route, error)
}
