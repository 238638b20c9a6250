package app

import (
	"context"
	"time"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/adapters/lifi"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// lifiUpstream is LI.FI as the aggregator (--aggregator-url): quotes, its
// bridges and exchanges as tools, token prices (GET /v1/tokens), swap
// status, and step 1 of live multi-step pulseroute quotes. In sandbox mode
// it replaces the sandbox market's aggregator.
func lifiUpstream() Upstream {
	return Upstream{
		Name:     "lifi",
		Provider: registry.ProviderAggregator,
		Serves:   aggregatorPair,
		Switch:   "--aggregator-url",
		Settings: []Setting{
			{Flag: "aggregator-url", Usage: "LI.FI API base URL for the aggregator provider (empty: sandbox)", Kind: SettingURL,
				Get: func(q *QuoteConfig) string { return q.AggregatorURL }, Set: func(q *QuoteConfig, v string) { q.AggregatorURL = v }},
			{Flag: "aggregator-key", Usage: "LI.FI API key", Kind: SettingCredential,
				Get: func(q *QuoteConfig) string { return q.AggregatorKey }, Set: func(q *QuoteConfig, v string) { q.AggregatorKey = v }},
		},
		On: func(_ string, q QuoteConfig) bool { return q.AggregatorURL != "" },
		Open: func(o *openEnv) (any, error) {
			c, err := lifi.New(lifi.Config{BaseURL: o.cfg.AggregatorURL, APIKey: o.cfg.AggregatorKey, Timeout: o.cfg.UpstreamTimeout,
				Integrator: "swapgate"}, o.reg)
			if err != nil {
				return nil, err
			}
			return &lifiClient{c: c, reg: o.reg}, nil
		},
	}
}

// lifiClient is the LI.FI adapter in every role it serves.
type lifiClient struct {
	c    *lifi.Client
	reg  *registry.Registry
	list []lifi.Tool
}

// provider loads the tool list: knowing which tool keys are bridges and
// which exchanges lets tool filters go to the right LI.FI parameter;
// without it they go to both.
func (l *lifiClient) provider(ctx context.Context, b *buildEnv) (quote.Provider, error) {
	err := loadCatalog(ctx, b.cfg.UpstreamTimeout, func(ctx context.Context) (err error) {
		l.list, err = l.c.Tools(ctx)
		return err
	})
	if err != nil {
		b.cfg.Logger.Warn("aggregator tool list not loaded; tool filters go to bridges and exchanges alike, and /v1/tools lists none of its tools", "err", err)
	}
	l.c.SetTools(l.list)
	return l.c, nil
}

func (l *lifiClient) tools() []tools.Tool                            { return aggregatorTools(l.reg, l.list) }
func (l *lifiClient) priceSource(now func() time.Time) prices.Source { return l.c.PriceSource(now) }
func (l *lifiClient) statusSource() tracker.Source                   { return l.c }
func (l *lifiClient) stepOne() pulseroute.Aggregator                 { return l.c }
func (l *lifiClient) network() bool                                  { return true }

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
