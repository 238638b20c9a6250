package app

import (
	"context"
	"time"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/oneclick"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// oneClickUpstream is 1Click (NEAR Intents) as the intents provider
// (--intents-url): quotes with deposit addresses, its one tool, token
// prices (GET /v0/tokens) for the assets LI.FI does not list, swap status,
// and the deposits users report. In sandbox mode it replaces the sandbox
// market's intents provider.
func oneClickUpstream() Upstream {
	return Upstream{
		Name:     "oneclick",
		Provider: registry.ProviderIntents,
		Serves:   intentsPair,
		Switch:   "--intents-url",
		Settings: []Setting{
			{Flag: "intents-url", Usage: "1Click API base URL for the intents provider (empty: sandbox)", Kind: SettingURL,
				Get: func(q *QuoteConfig) string { return q.IntentsURL }, Set: func(q *QuoteConfig, v string) { q.IntentsURL = v }},
			{Flag: "intents-key", Usage: "1Click API JWT", Kind: SettingCredential,
				Get: func(q *QuoteConfig) string { return q.IntentsKey }, Set: func(q *QuoteConfig, v string) { q.IntentsKey = v }},
		},
		On: func(_ string, q QuoteConfig) bool { return q.IntentsURL != "" },
		Open: func(o *openEnv) (any, error) {
			c, err := oneclick.New(oneclick.Config{BaseURL: o.cfg.IntentsURL, APIKey: o.cfg.IntentsKey, Timeout: o.cfg.UpstreamTimeout,
				Integrator: "swapgate"}, o.reg)
			if err != nil {
				return nil, err
			}
			return &oneClickClient{c: c, reg: o.reg}, nil
		},
	}
}

// oneClickClient is the 1Click adapter in every role it serves.
type oneClickClient struct {
	c   *oneclick.Client
	reg *registry.Registry
}

// provider loads the upstream's own asset list, which maps tokens the id
// rules cannot (non-EVM tokens); without it only those rules apply.
func (o *oneClickClient) provider(ctx context.Context, b *buildEnv) (quote.Provider, error) {
	if err := loadCatalog(ctx, b.cfg.UpstreamTimeout, o.c.LoadAssets); err != nil {
		b.cfg.Logger.Warn("intents asset list not loaded; asset ids derived from rules", "err", err)
	}
	return o.c, nil
}

func (o *oneClickClient) tools() []tools.Tool                            { return []tools.Tool{intentsTool(o.reg)} }
func (o *oneClickClient) priceSource(now func() time.Time) prices.Source { return o.c.PriceSource(now) }
func (o *oneClickClient) statusSource() tracker.Source                   { return o.c }
func (o *oneClickClient) depositNotifier() edge.DepositNotifier          { return o.c }
func (o *oneClickClient) network() bool                                  { return true }

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
