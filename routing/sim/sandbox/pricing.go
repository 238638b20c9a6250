package sandbox

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/holiman/uint256"

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

// HopFeeBps is the fee of the destination DEX hop an aggregator bridge route
// pays when it also changes the asset (USDC on one chain to WETH on another):
// a real aggregator bridges and then swaps, and the swap costs a DEX fee.
const HopFeeBps = 30

// stableCoins are the coin keys of USD stablecoins, which stable-only tools
// (sbx-curveline) accept on both sides.
var stableCoins = map[string]bool{
	"USDC": true, "USDT": true, "DAI": true, "FRXUSD": true,
	"USDB": true, "CUSD": true, "HONEY": true,
}

// isStablecoin reports whether a token is a USD stablecoin by its coin key.
func isStablecoin(t *registry.Token) bool { return stableCoins[strings.ToUpper(t.CoinKey)] }

// sameAsset reports whether two tokens are the same asset (same coin key), so
// that a bridge carries it without a swap.
func sameAsset(a, b *registry.Token) bool {
	return a.CoinKey != "" && strings.EqualFold(a.CoinKey, b.CoinKey)
}

// noRoute builds the reasoned refusal every sandbox leg answers with.
func noRoute(provider, tool, reason, format string, args ...any) *quote.NoRoute {
	return &quote.NoRoute{Provider: provider, Tool: tool, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// TokenPrice looks a token up in the price function by its lower-case
// address.
func (m *Market) TokenPrice(t *registry.Token) (float64, bool) {
	p, ok := m.price(t.ChainID, m.lowerAddress(t))
	if !ok || !(p > 0) || math.IsInf(p, 0) {
		return 0, false
	}
	return p, true
}

// afterPool is what a constant-product pool of depth liquidity returns, in
// USD, for inUSD after a fee of feeBps: the fee is taken first, and the price
// impact grows with the input's share of the pool.
func afterPool(inUSD float64, feeBps int, liquidity float64) float64 {
	return inUSD * (1 - float64(feeBps)/1e4) * liquidity / (liquidity + inUSD)
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

// USDOf values an amount of token units.
func USDOf(amount *big.Int, t *registry.Token, price float64) float64 {
	return quote.FromUnits(amount, t.Decimals) * price
}

// usdOf256 values an amount of token units held in a uint256; it equals
// USDOf of the same amount.
func usdOf256(amount *uint256.Int, t *registry.Token, price float64) float64 {
	return quote.FromUnits256(amount, t.Decimals) * price
}

// BpsOf takes bps basis points of an amount, rounded down. Amounts and
// rates that fit uint256 are worked out there, with a 512-bit product, so
// that the result is the only allocation; anything else, negatives
// included, takes big.Int arithmetic.
func BpsOf(amount *big.Int, bps int) *big.Int {
	var a uint256.Int
	if amount.Sign() >= 0 && bps >= 0 && !a.SetFromBig(amount) {
		var out uint256.Int
		if _, overflow := out.MulDivOverflow(&a, uint256.NewInt(uint64(bps)), uint256.NewInt(10_000)); !overflow {
			return newBig(&out)
		}
	}
	out := new(big.Int).Mul(amount, big.NewInt(int64(bps)))
	return out.Quo(out, big.NewInt(10_000))
}

// pricing is the priced core of a standard (Shape A) route. Its amounts
// are uint256 values so that pricing a leg allocates nothing; big.Int forms
// are made only when a route is built.
type pricing struct {
	inUSD, outUSD float64
	inPrice       float64
	outPrice      float64
	preFee        uint256.Int
	hop           bool
	// net and fee are preFee split by the request's fee; toUSD and feeUSD
	// value them (feeUSD is zero without a fee).
	net, fee      uint256.Int
	toUSD, feeUSD float64
}

// preFeeBig is the pre-fee output as a big.Int.
func (p *pricing) preFeeBig() *big.Int { return p.preFee.ToBig() }

// priceLeg values the request's input, checks the tool's floor, runs the
// tool's pool and converts the output into the destination token's units.
func (m *Market) priceLeg(provider string, req *quote.Request, t *tools.Tool, hop bool) (pricing, error) {
	tc := m.toolConfig(t)
	pin, ok := m.TokenPrice(req.FromToken)
	if !ok {
		return pricing{}, noRoute(provider, t.Key, ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.FromToken.Symbol, req.From.ID)
	}
	pout, ok := m.TokenPrice(req.ToToken)
	if !ok {
		return pricing{}, noRoute(provider, t.Key, ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.ToToken.Symbol, req.To.ID)
	}
	inUSD := USDOf(req.FromAmount, req.FromToken, pin)
	if inUSD < tc.MinAmountUSD {
		return pricing{}, amountTooLow(provider, req, t, tc.MinAmountUSD, inUSD)
	}
	outUSD := afterPool(inUSD, t.FeeBps, tc.LiquidityUSD)
	if hop {
		outUSD *= 1 - float64(HopFeeBps)/1e4
	}
	preFee, ok := quote.ToUnits256(outUSD/pout, req.ToToken.Decimals)
	if !ok {
		return pricing{}, noRoute(provider, t.Key, ReasonNoPossibleRoute, "the output does not fit in 256 bits of %s", req.ToToken.Symbol)
	}
	if preFee.IsZero() {
		return pricing{}, noRoute(provider, t.Key, ReasonAmountTooLow, "the output rounds to zero %s", req.ToToken.Symbol)
	}
	p := pricing{inUSD: inUSD, outUSD: outUSD, inPrice: pin, outPrice: pout, preFee: preFee, hop: hop}
	p.net, p.fee = quote.SplitFee256(&p.preFee, req.FeeBps)
	p.toUSD = usdOf256(&p.net, req.ToToken, pout)
	if req.FeeBps > 0 {
		p.feeUSD = usdOf256(&p.fee, req.ToToken, pout)
	}
	return p, nil
}

// PriceSwap prices the request on one tool as the aggregator does, without
// the destination hop, and answers with the input's USD value and the
// pre-fee output in destination-token units. pulseroute prices its
// multi-step step 1 (a swap into USDC on the source chain) with it, so that
// step agrees with what the aggregator would quote for the same swap.
func (m *Market) PriceSwap(provider string, req *quote.Request, t *tools.Tool) (inUSD float64, preFee *big.Int, err error) {
	p, err := m.priceLeg(provider, req, t, false)
	if err != nil {
		return 0, nil, err
	}
	return p.inUSD, p.preFeeBig(), nil
}

// CheckFloor refuses, with AMOUNT_TOO_LOW, an input worth less than the
// tool's MinAmountUSD, the floor every sandbox tool keeps whichever provider
// prices on it.
func (m *Market) CheckFloor(provider string, req *quote.Request, t *tools.Tool, inUSD float64) error {
	if tc := m.toolConfig(t); inUSD < tc.MinAmountUSD {
		return amountTooLow(provider, req, t, tc.MinAmountUSD, inUSD)
	}
	return nil
}

// amountTooLow is the refusal of an input below a tool's floor; it names
// the floor and what the input is worth, so a client can fix the amount.
func amountTooLow(provider string, req *quote.Request, t *tools.Tool, minUSD, inUSD float64) error {
	return noRoute(provider, t.Key, ReasonAmountTooLow,
		"%s quotes inputs worth at least $%.2f; %s %s is worth $%.2f",
		t.Name, minUSD, formatUnits(req.FromAmount, req.FromToken.Decimals), req.FromToken.Symbol, inUSD)
}

// formatUnits renders base units as a decimal amount of whole tokens.
func formatUnits(units *big.Int, decimals uint8) string {
	f := new(big.Float).SetPrec(256).SetInt(units)
	f.Quo(f, new(big.Float).SetPrec(256).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	return f.Text('f', -1)
}

// fillAmounts sets a built route's amounts from its pricing: the same
// figures ApplyPartnerFee computes, from the split pricing already made.
func fillAmounts(r *quote.Route, req *quote.Request, p *pricing) {
	a := new(routeAmounts)
	r.PreFeeToAmount = a.set(0, &p.preFee)
	r.ToAmount = a.set(1, &p.net)
	r.PartnerFee = a.set(2, &p.fee)
	r.ToAmountMin = quote.MinOut(r.ToAmount, req.Slippage)
	r.ToAmountUSD = p.toUSD
	if req.FeeBps > 0 {
		r.FeeCosts = append(r.FeeCosts, PartnerFeeCost(req, r.PartnerFee, p.feeUSD))
	}
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

// toolFeeUSD is the USD value of a tool's fee on an input worth inUSD.
func toolFeeUSD(t *tools.Tool, inUSD float64) float64 { return inUSD * float64(t.FeeBps) / 1e4 }

// hopFeeUSD is the USD value of the destination hop's fee.
func hopFeeUSD(inUSD float64) float64 { return inUSD * HopFeeBps / 1e4 }

// ToolFeeCost is the tool's own fee, in source-token units.
func (m *Market) ToolFeeCost(t *tools.Tool, req *quote.Request, inUSD float64) quote.FeeCost {
	ft := m.toolFeeText(t)
	return quote.FeeCost{
		Name:        ft.name,
		Description: ft.description,
		Amount:      BpsOf(req.FromAmount, t.FeeBps),
		AmountUSD:   toolFeeUSD(t, inUSD),
		Percentage:  float64(t.FeeBps) / 1e4,
		Token:       req.FromToken,
		Included:    true,
	}
}

// hopFeeCost is the destination swap fee of a bridge route that changes
// asset, in source-token units.
func hopFeeCost(req *quote.Request, inUSD float64) quote.FeeCost {
	return quote.FeeCost{
		Name:        "Destination swap fee",
		Description: fmt.Sprintf("DEX hop after the bridge, %d bps", HopFeeBps),
		Amount:      BpsOf(req.FromAmount, HopFeeBps),
		AmountUSD:   hopFeeUSD(inUSD),
		Percentage:  HopFeeBps / 1e4,
		Token:       req.FromToken,
		Included:    true,
	}
}

// CheckGas refuses a route whose gas costs more than it delivers.
func CheckGas(provider, tool string, r *quote.Route) error {
	if g := r.GasUSD(); g > r.ToAmountUSD {
		return noRoute(provider, tool, ReasonFeesHigher, "gas costs $%.2f, more than the $%.2f the route delivers", g, r.ToAmountUSD)
	}
	return nil
}
