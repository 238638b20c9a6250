package sandbox

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/holiman/uint256"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
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

// legPricing is the priced core of a standard (Shape A) route. Its amounts
// are uint256 values so that pricing a leg allocates nothing; big.Int forms
// are made only when a route is built.
type legPricing struct {
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
func (p *legPricing) preFeeBig() *big.Int { return p.preFee.ToBig() }

// legPrices is one reading of a leg's two USD prices, its input token's and
// its output token's. A leg reads them once and prices everything from
// that reading: the price source may move between two reads (the sandbox's
// wave, a live token list refreshed), and an exact-output leg's input is
// sized on one reading, so its route must be priced on the same one or the
// output it answers is not the output that was verified.
type legPrices struct{ in, out float64 }

// readPrices reads the request's two prices, or refuses the leg as
// NO_POSSIBLE_ROUTE naming the token without one.
func (m *Market) readPrices(provider string, req *quote.Request, t *tools.Tool) (legPrices, error) {
	pin, ok := m.TokenPrice(req.FromToken)
	if !ok {
		return legPrices{}, pricing.NoRoute(provider, t.Key, pricing.ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.FromToken.Symbol, req.From.ID)
	}
	pout, ok := m.TokenPrice(req.ToToken)
	if !ok {
		return legPrices{}, pricing.NoRoute(provider, t.Key, pricing.ReasonNoPossibleRoute, "no USD price for %s on chain %d", req.ToToken.Symbol, req.To.ID)
	}
	return legPrices{in: pin, out: pout}, nil
}

// priceLeg prices the request on a fresh reading of its prices (priceAt).
func (m *Market) priceLeg(provider string, req *quote.Request, t *tools.Tool, hop bool) (legPricing, error) {
	px, err := m.readPrices(provider, req, t)
	if err != nil {
		return legPricing{}, err
	}
	return m.priceAt(provider, req, t, hop, px)
}

// priceAt values the request's input at px, checks the tool's floor, runs
// the tool's pool and converts the output into the destination token's
// units. It reads nothing that moves: the same request at the same px
// prices the same.
func (m *Market) priceAt(provider string, req *quote.Request, t *tools.Tool, hop bool, px legPrices) (legPricing, error) {
	tc := m.toolConfig(t)
	pin, pout := px.in, px.out
	inUSD := pricing.USDOf(req.FromAmount, req.FromToken, pin)
	if inUSD < tc.MinAmountUSD {
		return legPricing{}, pricing.AmountTooLow(provider, req, t, tc.MinAmountUSD, inUSD)
	}
	outUSD := afterPool(inUSD, t.FeeBps, tc.LiquidityUSD)
	if hop {
		outUSD *= 1 - float64(HopFeeBps)/1e4
	}
	// A price-drift scenario's price has moved by the time of the execute.
	outUSD *= priceMove(req)
	preFee, ok := quote.ToUnits256(outUSD/pout, req.ToToken.Decimals)
	if !ok {
		return legPricing{}, pricing.NoRoute(provider, t.Key, pricing.ReasonNoPossibleRoute, "the output does not fit in 256 bits of %s", req.ToToken.Symbol)
	}
	if preFee.IsZero() {
		return legPricing{}, pricing.NoRoute(provider, t.Key, pricing.ReasonAmountTooLow, "the output rounds to zero %s", req.ToToken.Symbol)
	}
	p := legPricing{inUSD: inUSD, outUSD: outUSD, inPrice: pin, outPrice: pout, preFee: preFee, hop: hop}
	p.net, p.fee = quote.SplitFee256(&p.preFee, req.FeeBps)
	p.toUSD = pricing.USDOf256(&p.net, req.ToToken, pout)
	if req.FeeBps > 0 {
		p.feeUSD = pricing.USDOf256(&p.fee, req.ToToken, pout)
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
		return pricing.AmountTooLow(provider, req, t, tc.MinAmountUSD, inUSD)
	}
	return nil
}

// fillAmounts sets a built route's amounts from its legPricing: the same
// figures pricing.ApplyPartnerFee computes, from the split pricing already made.
func fillAmounts(r *quote.Route, req *quote.Request, p *legPricing) {
	a := new(pricing.RouteAmounts)
	r.PreFeeToAmount = a.Set(0, &p.preFee)
	r.ToAmount = a.Set(1, &p.net)
	r.PartnerFee = a.Set(2, &p.fee)
	r.ToAmountMin = quote.MinOut(r.ToAmount, req.Slippage)
	r.ToAmountUSD = p.toUSD
	if req.FeeBps > 0 {
		r.FeeCosts = append(r.FeeCosts, pricing.PartnerFeeCost(req, r.PartnerFee, p.feeUSD))
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
		Amount:      pricing.BpsOf(req.FromAmount, t.FeeBps),
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
		Amount:      pricing.BpsOf(req.FromAmount, HopFeeBps),
		AmountUSD:   hopFeeUSD(inUSD),
		Percentage:  HopFeeBps / 1e4,
		Token:       req.FromToken,
		Included:    true,
	}
}

// exactInput answers an exact-output request with the input it needs on
// tool t at the prices px: the least input whose route's ToAmountMin
// (priceAt's output after the tool's fee, the destination hop and the
// partner fee, less the slippage) reaches req.ToAmount. priceAt's output
// never decreases as the input grows (the pool's curve rises, and every
// rounding is downward), so quote.SizeInput finds that input by search,
// starting from the input the tokens' prices alone would suggest; the
// input it returns was priced and reached the target at px, and the caller
// prices the route at the same px, so the route delivers at least
// toAmount, not about it. An input under the tool's floor, or whose output
// rounds to nothing, falls short. A request for a given input is returned
// as it is.
func (m *Market) exactInput(provider string, req *quote.Request, t *tools.Tool, hop bool, px legPrices) (*quote.Request, error) {
	if !req.ExactOutput() {
		return req, nil
	}
	guess := quote.ToUnits(pricing.USDOf(req.ToAmount, req.ToToken, px.out)/px.in, req.FromToken.Decimals)
	trial := *req
	in, err := quote.SizeInput(req.ToAmount, guess, func(amount *big.Int) (bool, error) {
		trial.FromAmount = amount
		p, err := m.priceAt(provider, &trial, t, hop, px)
		if err != nil {
			var nr *quote.NoRoute
			if errors.As(err, &nr) && nr.Reason == pricing.ReasonAmountTooLow {
				return false, nil
			}
			return false, err
		}
		return quote.MinOut(p.net.ToBig(), req.Slippage).Cmp(req.ToAmount) >= 0, nil
	})
	if errors.Is(err, quote.ErrOutputUnreachable) {
		return nil, pricing.NoRoute(provider, t.Key, pricing.ReasonInsufficientLiq,
			"no input delivers %s %s on %s: the pool is not deep enough", req.ToAmount, req.ToToken.Symbol, t.Name)
	}
	if err != nil {
		return nil, err
	}
	return req.WithFromAmount(in), nil
}
