package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/pulseroute"
	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
)

// Tool keys of the pulseroute provider and of the source-chain DEX its
// multi-step routes swap on.
const (
	ToolWarp    = "sbx-warp"
	ToolPulseX  = "sbx-pulsex"
	ToolStep1   = "sbx-uniflow"
	pulseDomain = uint32(pulseroute.PulseChainID)
)

// Pulseroute is the sandbox's "pulseroute" provider: every route to or from
// chain 369. Inbound routes from a warp-route chain are direct (Shape B) when
// they start from that chain's USDC and multi-step (Shape C) otherwise;
// outbound routes are the fee-free USDCh → USDC bridge (Shape B); swaps within
// 369 go through sbx-pulsex (Shape A).
type Pulseroute struct{ m *Market }

// Pulseroute returns the market's pulseroute provider.
func (m *Market) Pulseroute() *Pulseroute { return &Pulseroute{m: m} }

// Name is "pulseroute".
func (p *Pulseroute) Name() string { return registry.ProviderPulseroute }

// Legs is sbx-pulsex within chain 369 and sbx-warp for any pair across 369.
// The warp leg is offered even for pairs it cannot serve (369 to a chain
// without a warp route, or anything but USDCh out of 369), so that QuoteLeg
// answers with a reasoned no-route instead of a silent empty list.
func (p *Pulseroute) Legs(req *quote.Request) []string {
	from, to := req.From.ID, req.To.ID
	if from != pulseroute.PulseChainID && to != pulseroute.PulseChainID {
		return nil
	}
	key := ToolWarp
	if from == to {
		if strings.EqualFold(req.FromToken.Address, req.ToToken.Address) {
			return nil
		}
		key = ToolPulseX
	}
	if !req.ToolAllowed(key) {
		return nil
	}
	return []string{key}
}

// QuoteLeg prices one pulseroute leg in the variant the request calls for.
func (p *Pulseroute) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	const provider = registry.ProviderPulseroute
	t, ok := p.m.cat.Tool(leg)
	if !ok || t.Provider != provider {
		return nil, noRoute(provider, leg, ReasonUnsupportedRoute, "%q is not a pulseroute sandbox tool", leg)
	}
	if err := p.m.inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	from, to := req.From.ID, req.To.ID
	switch {
	case from == pulseroute.PulseChainID && to == pulseroute.PulseChainID:
		if leg != ToolPulseX {
			return nil, noRoute(provider, leg, ReasonUnsupportedRoute, "swaps within chain 369 go through %s", ToolPulseX)
		}
		return p.m.pulseSwapRoute(ctx, req, t)
	case leg != ToolWarp:
		return nil, noRoute(provider, leg, ReasonUnsupportedRoute, "routes across chain 369 go through %s", ToolWarp)
	case to == pulseroute.PulseChainID:
		w, ok := p.m.pulse.WarpRoute(from)
		if !ok || w.Synthetic {
			return nil, noRoute(provider, leg, ReasonUnsupportedRoute,
				"chain %d has no USDC warp route to chain 369; inbound routes start on chains %s", from, p.m.senderChainList())
		}
		if isToken(req.FromToken, w.Token) {
			return p.m.directInbound(ctx, req, t, w)
		}
		return p.m.multiStepInbound(ctx, req, t, w)
	default:
		return p.m.directOutbound(ctx, req, t)
	}
}

// senderChainList names the warp-route chains, for refusals.
func (m *Market) senderChainList() string {
	ids := m.pulse.SenderChains()
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// isToken reports whether a registry token is the given contract.
func isToken(t *registry.Token, addr common.Address) bool {
	return !t.IsNative() && common.IsHexAddress(t.Address) && common.HexToAddress(t.Address) == addr
}

// pulseToken is a 369 token's address in PulseX paths: WPLS for native PLS.
func (m *Market) pulseToken(t *registry.Token) common.Address {
	if t.IsNative() {
		return m.pulse.PulseX().WPLS
	}
	return common.HexToAddress(t.Address)
}

// pulsePath is the PulseX path between two 369 tokens: direct when either is
// USDCh, through USDCh otherwise (every pool is paired with it).
func (m *Market) pulsePath(from, to common.Address) []common.Address {
	usdch := m.pulse.USDCh().Token
	if from == usdch || to == usdch {
		return []common.Address{from, to}
	}
	return []common.Address{from, usdch, to}
}

// amountsOut reads PulseX and keeps the last amount; a missing pair is a
// reasoned no-route, any other failure a chain-state error.
func (m *Market) amountsOut(ctx context.Context, tool string, amount *big.Int, path []common.Address) (*big.Int, error) {
	if amount.Sign() == 0 {
		return new(big.Int), nil
	}
	out, err := m.chain.AmountsOut(ctx, amount, path)
	if err != nil {
		if errors.Is(err, ErrNoPair) {
			return nil, noRoute(registry.ProviderPulseroute, tool, ReasonNoPossibleRoute, "PulseX has no pool for this pair on chain 369")
		}
		return nil, chainStateError("PulseX getAmountsOut", err)
	}
	last := out[len(out)-1]
	if last.Sign() <= 0 {
		return nil, noRoute(registry.ProviderPulseroute, tool, ReasonInsufficientLiq, "PulseX returns nothing for this amount")
	}
	return last, nil
}

// gasPayment reads the warp route's interchain gas payment.
func (m *Market) gasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error) {
	v, err := m.chain.QuoteGasPayment(ctx, chainID, destination)
	if err != nil {
		return nil, chainStateError("warp route quoteGasPayment", err)
	}
	return v, nil
}

// chainStateError keeps an *apierr.Error from an RPC-backed reader (an
// RPC_FAILURE) and makes any other failure one.
func chainStateError(what string, err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	return apierr.New(apierr.RPCFailure, what+" failed").Wrap(err)
}

// messagingCost lists the warp route's interchain gas payment as a FEE gas
// cost in the source chain's native coin.
func (m *Market) messagingCost(c *registry.Chain, payment *big.Int) quote.GasCost {
	native, _ := m.reg.Token(c.ID, "native")
	g := quote.GasCost{Type: "FEE", Amount: payment, Token: native}
	if native != nil {
		if p, ok := m.tokenPrice(native); ok {
			g.AmountUSD = usdOf(payment, native, p)
		}
	}
	return g
}

// evmRecipient parses the request's recipient, which every pulseroute chain
// takes in EVM form.
func evmRecipient(req *quote.Request) (common.Address, error) {
	if !common.IsHexAddress(req.ToAddress) {
		return common.Address{}, apierr.Param("toAddress", "recipient on chain "+fmt.Sprint(req.To.ID)+" must be an EVM address")
	}
	return common.HexToAddress(req.ToAddress), nil
}

// usdOrZero values an amount at the token's price, 0 when it has none:
// pulseroute amounts come from chain state, so a missing price only blanks
// the USD figure.
func (m *Market) usdOrZero(amount *big.Int, t *registry.Token) float64 {
	if p, ok := m.tokenPrice(t); ok {
		return usdOf(amount, t, p)
	}
	return 0
}

// checkFloor refuses inputs below the tool's floor.
func (m *Market) checkFloor(req *quote.Request, toolKey string, inUSD float64) error {
	t, _ := m.cat.Tool(toolKey)
	tc := m.toolConfig(t)
	if inUSD < tc.MinAmountUSD {
		return noRoute(registry.ProviderPulseroute, toolKey, ReasonAmountTooLow,
			"%s quotes inputs worth at least $%.2f; %s %s is worth $%.2f",
			t.Name, tc.MinAmountUSD, formatUnits(req.FromAmount, req.FromToken.Decimals), req.FromToken.Symbol, inUSD)
	}
	return nil
}
