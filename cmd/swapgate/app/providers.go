package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/routing/adapters/lifi"
	"github.com/swapgate/swapgate/routing/adapters/oneclick"
	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// ErrNoLiveUpstream refuses live mode without a single upstream: it would
// answer every quote NO_ROUTE_FOUND.
var ErrNoLiveUpstream = errors.New("live mode quotes only through configured upstreams and none is configured: " +
	"set --aggregator-url, --intents-url or --pulse-rpc 369=URL")

// CheckLiveUpstreams refuses a live configuration that names no upstream.
func CheckLiveUpstreams(c *Config) error {
	if c.Mode != ModeLive {
		return nil
	}
	if c.Quote.AggregatorURL == "" && c.Quote.IntentsURL == "" && pulseNodes(c.Quote)[quote.PulseChainID] == "" {
		return ErrNoLiveUpstream
	}
	return nil
}

// buildProviders makes the providers the engine races and the tool catalog
// they quote with, and fills in what the rest of the stack takes from them
// (status sources, the deposit notifier, pulseroute's chain state).
//
// Sandbox mode: the sandbox market's aggregator and intents, and pulseroute
// on the sandbox chain (or on the nodes --pulse-rpc names), each replaced by
// its real adapter where a base URL is configured; the catalog is the
// sandbox's.
//
// Live mode: only the configured upstreams; a provider without one is not
// built at all (a request it alone could serve is NO_ROUTE_FOUND saying
// so), and the catalog is what the upstreams list. No part of the
// simulator is built.
func buildProviders(ctx context.Context, mode string, cfg QuoteConfig, evmRPC map[uint64]string, reg *registry.Registry,
	ref *refdata.Service, contracts *pulseroute.Contracts, qs *quoteStack) ([]quote.Provider, error) {
	var (
		providers [3]quote.Provider // aggregator, intents, pulseroute
		live      []tools.Tool
		// agg is the live aggregator, which takes step 1 of live
		// multi-step pulseroute quotes.
		agg pulseroute.Aggregator
	)
	if cfg.AggregatorURL != "" {
		c, err := lifi.New(lifi.Config{BaseURL: cfg.AggregatorURL, APIKey: cfg.AggregatorKey, Timeout: cfg.UpstreamTimeout, Integrator: "swapgate"}, reg)
		if err != nil {
			return nil, fmt.Errorf("app: aggregator upstream: %w", err)
		}
		// Knowing which tool keys are bridges and which exchanges lets tool
		// filters go to the right LI.FI parameter; without it they go to both.
		var list []lifi.Tool
		err = loadCatalog(ctx, cfg.UpstreamTimeout, func(ctx context.Context) (err error) {
			list, err = c.Tools(ctx)
			return err
		})
		if err != nil {
			cfg.Logger.Warn("aggregator tool list not loaded; tool filters go to bridges and exchanges alike, and /v1/tools lists none of its tools", "err", err)
		}
		c.SetTools(list)
		live = append(live, aggregatorTools(reg, list)...)
		providers[0], agg = c, c
		qs.statusSources[registry.ProviderAggregator] = c
	}
	if cfg.IntentsURL != "" {
		c, err := oneclick.New(oneclick.Config{BaseURL: cfg.IntentsURL, APIKey: cfg.IntentsKey, Timeout: cfg.UpstreamTimeout, Integrator: "swapgate"}, reg)
		if err != nil {
			return nil, fmt.Errorf("app: intents upstream: %w", err)
		}
		// The upstream's own asset list maps tokens the id rules cannot
		// (non-EVM tokens); without it only those rules apply.
		if err := loadCatalog(ctx, cfg.UpstreamTimeout, c.LoadAssets); err != nil {
			cfg.Logger.Warn("intents asset list not loaded; asset ids derived from rules", "err", err)
		}
		live = append(live, intentsTool(reg))
		providers[1] = c
		qs.statusSources[registry.ProviderIntents] = c
		qs.depositNotifier = c
	}
	if mode == ModeLive {
		p, err := livePulseroute(ctx, cfg, evmRPC, reg, ref.Price, newGasPrices(ref, reg).price, agg)
		if err != nil {
			return nil, err
		}
		if p != nil {
			providers[2] = p
			live = append(live, pulserouteTools(reg)...)
		}
		if qs.catalog, err = tools.New(live); err != nil {
			return nil, fmt.Errorf("app: live tool catalog: %w", err)
		}
		return present(providers[:]), nil
	}

	var err error
	if qs.catalog, err = tools.Load(reg); err != nil {
		return nil, err
	}
	sandboxState, err := pulsesim.NewSandboxChain(reg)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	qs.pulseState = sandboxState
	if nodes := pulseNodes(cfg); len(nodes) > 0 {
		// Chains without a node keep reading the sandbox chain.
		if qs.pulseState, err = pulserpc.Dial(ctx, contracts, nodes, cfg.rpcTimeout, sandboxState); err != nil {
			return nil, fmt.Errorf("app: %w", err)
		}
	}
	market, err := sandbox.New(reg, qs.catalog, ref.Price, newGasPrices(ref, reg).price, sandbox.Config{Tools: cfg.SandboxTools})
	if err != nil {
		return nil, fmt.Errorf("app: sandbox market: %w", err)
	}
	if providers[2], err = pulsesim.NewProvider(reg, market, qs.pulseState, pulseroute.WithContracts(contracts)); err != nil {
		return nil, fmt.Errorf("app: sandbox market: %w", err)
	}
	if providers[0] == nil {
		providers[0] = market.Aggregator()
	}
	if providers[1] == nil {
		providers[1] = market.Intents()
	}
	return providers[:], nil
}

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

// present drops the providers that were not built.
func present(ps []quote.Provider) []quote.Provider {
	out := ps[:0]
	for _, p := range ps {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// aggregatorTools are the aggregator's bridges and exchanges as the
// catalog lists them, on the registry's chains only (the service quotes
// no other).
func aggregatorTools(reg *registry.Registry, list []lifi.Tool) []tools.Tool {
	out := make([]tools.Tool, 0, len(list))
	for _, t := range list {
		typ := tools.TypeBridge
		if t.Type == lifi.TypeDEX {
			typ = tools.TypeDEX
		}
		var chains []uint64
		for _, id := range t.SupportedChains {
			if _, ok := reg.Chain(id); ok {
				chains = append(chains, id)
			}
		}
		out = append(out, tools.Tool{Key: t.Key, Name: t.Name, Type: typ, Provider: registry.ProviderAggregator,
			LogoURI: t.LogoURI, SupportedChains: chains})
	}
	return out
}

// intentsTool is the intents provider's one tool: its solvers compete
// upstream, on every chain the registry maps to one of its blockchains.
func intentsTool(reg *registry.Registry) tools.Tool {
	var chains []uint64
	for _, ch := range reg.Chains() {
		if ch.IntentsBlockchain != "" {
			chains = append(chains, ch.ID)
		}
	}
	return tools.Tool{Key: oneclick.Tool, Name: "NEAR Intents", Type: tools.TypeIntents, Provider: registry.ProviderIntents,
		SupportedChains: chains}
}
