package app

import (
	"context"
	"slices"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// pulserouteUpstream is live mode's pulseroute on Swapgate's own contracts
// and chain 369's node (--pulse-rpc 369=URL; see livePulseroute). Sandbox
// mode's pulseroute is the sandbox market's (sandboxUpstream), reading the
// nodes --pulse-rpc names there too.
func pulserouteUpstream() Upstream {
	return Upstream{
		Name:     "pulseroute",
		Provider: registry.ProviderPulseroute,
		Serves:   pulseroutePair,
		Switch:   "--pulse-rpc 369=URL",
		On: func(mode string, q QuoteConfig) bool {
			return mode == ModeLive && pulseNodes(q)[quote.PulseChainID] != ""
		},
		Open: func(o *openEnv) (any, error) { return livePulse{reg: o.reg}, nil },
	}
}

// livePulse makes live pulseroute; its legs read chains over JSON-RPC.
type livePulse struct{ reg *registry.Registry }

func (livePulse) provider(ctx context.Context, b *buildEnv) (quote.Provider, error) {
	// The chain-369 leg is priced from PulseX reserves where
	// --pulse-reserves-max-age allows.
	wrap := func(ctx context.Context, url string, contracts *pulseroute.Contracts, next pulseroute.ChainState) (pulseroute.ChainState, error) {
		return b.qs.pulseReserves(ctx, b.cfg, url, b.reg, contracts, next)
	}
	p, err := livePulserouteOn(ctx, b.cfg, b.evmRPC, b.reg, b.price, b.gasPrice(), b.stepOne, wrap)
	if err != nil || p == nil {
		return nil, err
	}
	return p, nil
}

func (livePulse) network() bool { return true }

func (l livePulse) tools() []tools.Tool { return pulserouteTools(l.reg) }

// pulserouteTools are live pulseroute's tools with their chains: the warp
// route between 369 and every chain that lists pulseroute, PulseX on 369.
func pulserouteTools(reg *registry.Registry) []tools.Tool {
	var warp []uint64
	for _, ch := range reg.Chains() {
		if slices.Contains(ch.Providers, registry.ProviderPulseroute) {
			warp = append(warp, ch.ID)
		}
	}
	var out []tools.Tool
	for _, t := range pulseroute.LiveTools() {
		t.SupportedChains = []uint64{quote.PulseChainID}
		if t.Type == tools.TypeBridge {
			t.SupportedChains = warp
		}
		out = append(out, *t)
	}
	return out
}
