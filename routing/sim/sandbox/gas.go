package sandbox

import (
	"math"
	"math/big"

	"github.com/holiman/uint256"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Gas figures. Quoted limits carry a 25% margin over the estimate because
// integrators' most common complaint is transactions reverting out of gas.
const (
	ApproveGas        = 46_000
	gasMarginNum      = 5
	gasMarginDen      = 4
	fallbackTipShare  = 0.10
	fallbackTipFloor  = 0.01e9
	nativeTransferGas = 21_000
)

// WithMargin is a gas limit with the sandbox's 25% margin over an estimate.
func WithMargin(estimate uint64) uint64 { return estimate * gasMarginNum / gasMarginDen }

// GasQuote is the gas side of a route: its costs and, for EVM sources, the
// price and send limit a transaction request carries.
type GasQuote struct {
	Costs     []quote.GasCost
	Price     *big.Int // nil where the chain has no gas price
	SendLimit uint64
}

// gasPlan is the gas side of a route before it is built: the USD figures
// ranking needs, and what costs turns into the route's cost list.
type gasPlan struct {
	price      *big.Int // nil where the chain has no gas price
	native     *registry.Token
	approve    bool
	sendGas    uint64
	sendLimit  uint64
	approveUSD float64
	sendUSD    float64
}

// usd is the sum of the plan's costs in USD, added in the order the cost
// list holds them, so that it equals the built route's GasUSD.
func (g *gasPlan) usd() float64 {
	var s float64
	if g.price == nil {
		return s
	}
	if g.approve {
		s += g.approveUSD
	}
	return s + g.sendUSD
}

// costs builds the plan's cost list: APPROVE (when the source needs one)
// and SEND.
func (g *gasPlan) costs() []quote.GasCost {
	if g.price == nil {
		return nil
	}
	cost := func(typ string, estimate uint64, usd float64) quote.GasCost {
		limit := WithMargin(estimate)
		amount := mulUint64(g.price, limit)
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

// quote is the plan built into a GasQuote.
func (g *gasPlan) quote() GasQuote {
	return GasQuote{Costs: g.costs(), Price: g.price, SendLimit: g.sendLimit}
}

// chainGasPrice is the price per gas unit on a chain: the gas function's
// standard tier; on an EVM chain it has no figure for yet, the registry's
// reference base fee plus the standard tip; on Solana and Sui, one base unit
// per catalog gas unit. Other chains have none.
func (m *Market) chainGasPrice(c *registry.Chain) (*big.Int, bool) {
	if p, ok := m.gasPrice(c.ID); ok && p != nil && p.Sign() > 0 {
		return p, true
	}
	if p, ok := m.fallbackGas[c.ID]; ok {
		return p, true
	}
	return fallbackGasPrice(c)
}

// ReferenceGasPrice is a chain's reference gas price in wei (EVM: the
// registry's base fee plus the standard tip), the figure quotes use before
// the gas function has one; the sandbox chain charges it. ok is false for a
// chain without gas prices.
func ReferenceGasPrice(c *registry.Chain) (*big.Int, bool) { return fallbackGasPrice(c) }

// fallbackGasPrice is the gas price of a chain the gas function has no
// figure for; Market precomputes it per chain, since it never changes.
func fallbackGasPrice(c *registry.Chain) (*big.Int, bool) {
	switch c.ChainType {
	case registry.EVM:
		wei := c.BaseFeeGwei*1e9*(1+fallbackTipShare) + fallbackTipFloor
		out, _ := big.NewFloat(math.Round(wei)).Int(nil)
		return out, true
	case registry.SVM, registry.MVM:
		return big.NewInt(1), true
	}
	return nil, false
}

// planGas prices a SEND of sendGas units on the source chain and, when
// approve is set, an APPROVE before it. The USD figures use the native coin's
// price; a chain without a native price is no route. It allocates nothing:
// amounts are worked out in uint256 and the cost list is built by costs.
func (m *Market) planGas(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (gasPlan, error) {
	price, ok := m.chainGasPrice(c)
	if !ok {
		return gasPlan{}, nil
	}
	native, ok := m.reg.Token(c.ID, "native")
	if !ok {
		return gasPlan{}, noRoute(provider, tool, ReasonNoPossibleRoute, "chain %d has no native token", c.ID)
	}
	np, ok := m.TokenPrice(native)
	if !ok {
		return gasPlan{}, noRoute(provider, tool, ReasonNoPossibleRoute, "no USD price for %s, the gas token of chain %d", native.Symbol, c.ID)
	}
	var p256 uint256.Int
	wide := p256.SetFromBig(price)
	usd := func(estimate uint64) float64 {
		limit := WithMargin(estimate)
		var amount, l uint256.Int
		l.SetUint64(limit)
		if _, overflow := amount.MulOverflow(&p256, &l); wide || overflow {
			return USDOf(new(big.Int).Mul(price, new(big.Int).SetUint64(limit)), native, np)
		}
		return usdOf256(&amount, native, np)
	}
	g := gasPlan{price: price, native: native, approve: approve, sendGas: sendGas, sendLimit: WithMargin(sendGas)}
	if approve {
		g.approveUSD = usd(ApproveGas)
	}
	g.sendUSD = usd(sendGas)
	return g, nil
}

// GasCosts is planGas with the cost list built, for routes priced and built
// in one go.
func (m *Market) GasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (GasQuote, error) {
	g, err := m.planGas(provider, tool, c, sendGas, approve)
	if err != nil {
		return GasQuote{}, err
	}
	return g.quote(), nil
}
