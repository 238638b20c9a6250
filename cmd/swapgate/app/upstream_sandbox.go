package app

import (
	"context"
	"fmt"

	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// sandboxUpstream is the sandbox market's provider named provider: in
// sandbox mode, the fallback of a provider no configured upstream answers
// as. The three share one market (buildEnv.sandboxMarket); the sandbox's
// pulseroute reads chain 369 and the warp routes from the sandbox chain,
// or from the nodes --pulse-rpc names.
func sandboxUpstream(provider string) Upstream {
	serves := map[string]func(from, to *registry.Chain) bool{
		registry.ProviderAggregator: aggregatorPair,
		registry.ProviderIntents:    intentsPair,
		registry.ProviderPulseroute: pulseroutePair,
	}[provider]
	return Upstream{
		Name:     "sandbox-" + provider,
		Provider: provider,
		Serves:   serves,
		Fallback: true,
		Open: func(o *openEnv) (any, error) {
			return sandboxProvider{name: provider, onNodes: provider == registry.ProviderPulseroute && len(pulseNodes(o.cfg)) > 0}, nil
		},
	}
}

// sandboxProvider makes the sandbox market's provider of its name;
// onNodes is set on its pulseroute when --pulse-rpc names nodes.
type sandboxProvider struct {
	name    string
	onNodes bool
}

func (s sandboxProvider) provider(ctx context.Context, b *buildEnv) (quote.Provider, error) {
	market, err := b.sandboxMarket()
	if err != nil {
		return nil, err
	}
	switch s.name {
	case registry.ProviderAggregator:
		return market.Aggregator(), nil
	case registry.ProviderIntents:
		return market.Intents(), nil
	}
	sandboxState, err := pulsesim.NewSandboxChain(b.reg)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	b.qs.pulseState = sandboxState
	nodes := pulseNodes(b.cfg)
	if len(nodes) > 0 {
		// Chains without a node keep reading the sandbox chain.
		if b.qs.pulseState, err = pulserpc.Dial(ctx, b.contracts, nodes, b.cfg.rpcTimeout, sandboxState); err != nil {
			return nil, fmt.Errorf("app: %w", err)
		}
	}
	// The chain-369 leg is priced from the PulseX pools' reserves: those
	// of --pulse-rpc's chain-369 node where it names one, the sandbox
	// chain's otherwise.
	priced := b.qs.pulseState
	if url := nodes[quote.PulseChainID]; url != "" {
		priced, err = b.qs.pulseReserves(ctx, b.cfg, url, b.reg, b.contracts, b.qs.pulseState)
	} else {
		priced, err = b.qs.sandboxPulseReserves(ctx, b.cfg, b.reg, b.contracts, b.qs.pulseState)
	}
	if err != nil {
		return nil, err
	}
	p, err := pulsesim.NewProvider(b.reg, market, priced, pulseroute.WithContracts(b.contracts))
	if err != nil {
		return nil, fmt.Errorf("app: sandbox market: %w", err)
	}
	return p, nil
}

// network: the sandbox's pulseroute legs wait on the nodes --pulse-rpc
// names, where it names any.
func (s sandboxProvider) network() bool { return s.onNodes }

// sandboxMarket is the sandbox market the fallbacks share, made once.
func (b *buildEnv) sandboxMarket() (*sandbox.Market, error) {
	if b.market != nil {
		return b.market, nil
	}
	m, err := sandbox.New(b.reg, b.qs.catalog, b.ref.Price, b.gasPrice(), sandbox.Config{Tools: b.cfg.SandboxTools})
	if err != nil {
		return nil, fmt.Errorf("app: sandbox market: %w", err)
	}
	b.market = m
	return m, nil
}
