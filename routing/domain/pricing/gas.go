package pricing

import (
	"math/big"

	"github.com/holiman/uint256"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Gas figures. Quoted limits carry a 25% margin over the estimate because
// integrators' most common complaint is transactions reverting out of gas.
const (
	ApproveGas   = 46_000
	gasMarginNum = 5
	gasMarginDen = 4
)

// WithMargin is a gas limit with the 25% margin over an estimate.
func WithMargin(estimate uint64) uint64 { return estimate * gasMarginNum / gasMarginDen }

// GasQuote is the gas side of a route: its costs and, for EVM sources, the
// price and send limit a transaction request carries.
type GasQuote struct {
	Costs     []quote.GasCost
	Price     *big.Int // nil where the chain has no gas price
	SendLimit uint64
}

// GasPlan is the gas side of a route before it is built: the USD figures
// ranking needs, and what Costs turns into the route's cost list.
type GasPlan struct {
	price      *big.Int // nil where the chain has no gas price
	native     *registry.Token
	approve    bool
	sendGas    uint64
	sendLimit  uint64
	approveUSD float64
	sendUSD    float64
}

// PlanGas prices a SEND of sendGas units at price per unit and, when
// approve is set, an APPROVE of ApproveGas before it, each at its limit
// (WithMargin) in the chain's native coin valued at nativePrice. A nil
// price is a chain without gas prices: an empty plan. It allocates nothing:
// amounts are worked out in uint256 and the cost list is built by Costs.
func PlanGas(price *big.Int, native *registry.Token, nativePrice float64, sendGas uint64, approve bool) GasPlan {
	if price == nil {
		return GasPlan{}
	}
	var p256 uint256.Int
	wide := p256.SetFromBig(price)
	usd := func(estimate uint64) float64 {
		limit := WithMargin(estimate)
		var amount, l uint256.Int
		l.SetUint64(limit)
		if _, overflow := amount.MulOverflow(&p256, &l); wide || overflow {
			return USDOf(new(big.Int).Mul(price, new(big.Int).SetUint64(limit)), native, nativePrice)
		}
		return USDOf256(&amount, native, nativePrice)
	}
	g := GasPlan{price: price, native: native, approve: approve, sendGas: sendGas, sendLimit: WithMargin(sendGas)}
	if approve {
		g.approveUSD = usd(ApproveGas)
	}
	g.sendUSD = usd(sendGas)
	return g
}

// USD is the sum of the plan's costs in USD, added in the order the cost
// list holds them, so that it equals the built route's GasUSD.
func (g *GasPlan) USD() float64 {
	var s float64
	if g.price == nil {
		return s
	}
	if g.approve {
		s += g.approveUSD
	}
	return s + g.sendUSD
}

// Costs builds the plan's cost list: APPROVE (when the source needs one)
// and SEND.
func (g *GasPlan) Costs() []quote.GasCost {
	if g.price == nil {
		return nil
	}
	cost := func(typ string, estimate uint64, usd float64) quote.GasCost {
		limit := WithMargin(estimate)
		amount := MulUint64(g.price, limit)
		return quote.GasCost{
			Type: typ, Price: g.price, Estimate: estimate, Limit: limit,
			Amount: amount, AmountUSD: usd, Token: g.native,
		}
	}
	out := make([]quote.GasCost, 0, 2)
	if g.approve {
		out = append(out, cost("APPROVE", ApproveGas, g.approveUSD))
	}
	return append(out, cost("SEND", g.sendGas, g.sendUSD))
}

// Quote is the plan built into a GasQuote.
func (g *GasPlan) Quote() GasQuote {
	return GasQuote{Costs: g.Costs(), Price: g.price, SendLimit: g.sendLimit}
}
