package sandbox

import (
	"math"
	"math/big"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Fallback gas figures of a chain the gas function has no price for yet.
const (
	fallbackTipShare  = 0.10
	fallbackTipFloor  = 0.01e9
	nativeTransferGas = 21_000
)

// ApproveGas is the estimate of an ERC-20 approval (pricing.ApproveGas).
const ApproveGas = pricing.ApproveGas

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
// approve is set, an APPROVE before it (pricing.PlanGas). The USD figures use
// the native coin's price; a chain without a native price is no route.
func (m *Market) planGas(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (pricing.GasPlan, error) {
	price, ok := m.chainGasPrice(c)
	if !ok {
		return pricing.GasPlan{}, nil
	}
	native, ok := m.reg.Token(c.ID, "native")
	if !ok {
		return pricing.GasPlan{}, pricing.NoRoute(provider, tool, pricing.ReasonNoPossibleRoute, "chain %d has no native token", c.ID)
	}
	np, ok := m.TokenPrice(native)
	if !ok {
		return pricing.GasPlan{}, pricing.NoRoute(provider, tool, pricing.ReasonNoPossibleRoute, "no USD price for %s, the gas token of chain %d", native.Symbol, c.ID)
	}
	return pricing.PlanGas(price, native, np, sendGas, approve), nil
}

// GasCosts is planGas with the cost list built, for routes priced and built
// in one go.
func (m *Market) GasCosts(provider, tool string, c *registry.Chain, sendGas uint64, approve bool) (pricing.GasQuote, error) {
	g, err := m.planGas(provider, tool, c, sendGas, approve)
	if err != nil {
		return pricing.GasQuote{}, err
	}
	return g.Quote(), nil
}
