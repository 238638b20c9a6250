package sandbox

import (
	"math"
	"math/big"

	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
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

// gasQuote is the gas side of a route: its costs and, for EVM sources, the
// price and send limit a transaction request carries.
type gasQuote struct {
	costs     []quote.GasCost
	price     *big.Int // nil where the chain has no gas price
	sendLimit uint64
}

// chainGasPrice is the price per gas unit on a chain: the gas function's
// standard tier; on an EVM chain it has no figure for yet, the registry's
// reference base fee plus the standard tip; on Solana and Sui, one base unit
// per catalog gas unit. Other chains have none.
func (m *Market) chainGasPrice(c *registry.Chain) (*big.Int, bool) {
	if p, ok := m.gasPrice(c.ID); ok && p != nil && p.Sign() > 0 {
		return p, true
	}
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

// gasCosts prices a SEND of sendGas units on the source chain and, when
// approve is set, an APPROVE before it. The USD figures use the native coin's
// price; a chain without a native price is no route.
func (m *Market) gasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (gasQuote, error) {
	price, ok := m.chainGasPrice(c)
	if !ok {
		return gasQuote{}, nil
	}
	native, ok := m.reg.Token(c.ID, "native")
	if !ok {
		return gasQuote{}, noRoute(provider, tool, ReasonNoPossibleRoute, "chain %d has no native token", c.ID)
	}
	np, ok := m.tokenPrice(native)
	if !ok {
		return gasQuote{}, noRoute(provider, tool, ReasonNoPossibleRoute, "no USD price for %s, the gas token of chain %d", native.Symbol, c.ID)
	}
	cost := func(typ string, estimate uint64) quote.GasCost {
		limit := WithMargin(estimate)
		amount := new(big.Int).Mul(price, new(big.Int).SetUint64(limit))
		return quote.GasCost{
			Type: typ, Price: price, Estimate: estimate, Limit: limit,
			Amount: amount, AmountUSD: usdOf(amount, native, np), Token: native,
		}
	}
	g := gasQuote{price: price, sendLimit: WithMargin(sendGas)}
	if approve {
		g.costs = append(g.costs, cost("APPROVE", ApproveGas))
	}
	g.costs = append(g.costs, cost("SEND", sendGas))
	return g, nil
}
