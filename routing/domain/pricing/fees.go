package pricing

import (
	"fmt"
	"math/big"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Reasons of a *quote.NoRoute, as the LI.FI per-tool errors name them.
const (
	ReasonAmountTooLow     = "AMOUNT_TOO_LOW"
	ReasonFeesHigher       = "FEES_HIGHER_THAN_AMOUNT"
	ReasonNoPossibleRoute  = "NO_POSSIBLE_ROUTE"
	ReasonInsufficientLiq  = "INSUFFICIENT_LIQUIDITY"
	ReasonUnsupportedRoute = "UNSUPPORTED_ROUTE"
)

// NoRoute builds the reasoned refusal of one provider tool.
func NoRoute(provider, tool, reason, format string, args ...any) *quote.NoRoute {
	return &quote.NoRoute{Provider: provider, Tool: tool, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// BlockSeconds is a chain's block time in whole seconds, at least one: the
// duration of a same-chain swap.
func BlockSeconds(c *registry.Chain) int {
	s := (c.BlockTimeMs + 999) / 1000
	if s < 1 {
		return 1
	}
	return s
}

// ApplyPartnerFee fills the route's amounts from the pre-fee output: the
// partner fee is split off with quote.SplitFee, the minimum follows slippage,
// and a "Partner fee" cost is listed when there is one.
func ApplyPartnerFee(r *quote.Route, req *quote.Request, preFee *big.Int, outPrice float64) {
	net, fee := quote.SplitFee(preFee, req.FeeBps)
	r.PreFeeToAmount = preFee
	r.ToAmount = net
	r.PartnerFee = fee
	r.ToAmountMin = quote.MinOut(net, req.Slippage)
	r.ToAmountUSD = USDOf(net, req.ToToken, outPrice)
	if req.FeeBps > 0 {
		r.FeeCosts = append(r.FeeCosts, PartnerFeeCost(req, fee, USDOf(fee, req.ToToken, outPrice)))
	}
}

// PartnerFeeCost lists the partner fee, in destination-token units.
func PartnerFeeCost(req *quote.Request, fee *big.Int, usd float64) quote.FeeCost {
	return quote.FeeCost{
		Name:        "Partner fee",
		Description: "Integrator fee, taken from the output",
		Amount:      fee,
		AmountUSD:   usd,
		Percentage:  float64(req.FeeBps) / 1e4,
		Token:       req.ToToken,
		Included:    true,
	}
}

// CheckGas refuses a route whose gas costs more than it delivers.
func CheckGas(provider, tool string, r *quote.Route) error {
	if g := r.GasUSD(); g > r.ToAmountUSD {
		return NoRoute(provider, tool, ReasonFeesHigher, "gas costs $%.2f, more than the $%.2f the route delivers", g, r.ToAmountUSD)
	}
	return nil
}

// AmountTooLow is the refusal of an input below a tool's floor; it names
// the floor and what the input is worth, so a client can fix the amount.
func AmountTooLow(provider string, req *quote.Request, t *tools.Tool, minUSD, inUSD float64) *quote.NoRoute {
	return NoRoute(provider, t.Key, ReasonAmountTooLow,
		"%s quotes inputs worth at least $%.2f; %s %s is worth $%.2f",
		t.Name, minUSD, formatUnits(req.FromAmount, req.FromToken.Decimals), req.FromToken.Symbol, inUSD)
}

// formatUnits renders base units as a decimal amount of whole tokens.
func formatUnits(units *big.Int, decimals uint8) string {
	f := new(big.Float).SetPrec(256).SetInt(units)
	f.Quo(f, new(big.Float).SetPrec(256).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	return f.Text('f', -1)
}
