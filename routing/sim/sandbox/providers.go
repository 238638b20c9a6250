package sandbox

import (
	"context"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Providers answer for the market under the specification's provider names.
var (
	_ quote.Provider = (*Aggregator)(nil)
	_ quote.Provider = (*Intents)(nil)
	_ quote.Pricer   = (*Aggregator)(nil)
	_ quote.Pricer   = (*Intents)(nil)

	_ quote.ExactOutputQuoter = (*Aggregator)(nil)
	_ quote.ExactOutputQuoter = (*Intents)(nil)
	_ quote.RefundToQuoter    = (*Aggregator)(nil)
	_ quote.RefundToQuoter    = (*Intents)(nil)
)

// RefundToUnsupported is "": a sandbox bridge that fails refunds its input
// to the quote's refund address (see Bridging).
func (a *Aggregator) RefundToUnsupported(*quote.Request) string { return "" }

// RefundToUnsupported is "": a sandbox intents deposit that fails is
// refunded to the quote's refund address (see Bridging).
func (i *Intents) RefundToUnsupported(*quote.Request) string { return "" }

// ExactOutputUnsupported is "": every aggregator tool sizes the input of an
// exact-output request exactly (see Market.exactInput).
func (a *Aggregator) ExactOutputUnsupported(*quote.Request) string { return "" }

// ExactOutputUnsupported is "": every intents tool sizes the input of an
// exact-output request exactly (see Market.exactInput).
func (i *Intents) ExactOutputUnsupported(*quote.Request) string { return "" }

// catalogLegs lists the provider's tools that connect the request's chains
// and that its filters admit; stable-only tools need stablecoins on both
// sides. A same-chain request for the token it starts from has no legs.
func (m *Market) catalogLegs(provider string, req *quote.Request) []string {
	if req.From.ID == req.To.ID && strings.EqualFold(req.FromToken.Address, req.ToToken.Address) {
		return nil
	}
	var keys []string
	for _, t := range m.cat.All() {
		if t.Provider != provider || !t.Connects(req.From.ID, req.To.ID) || !req.ToolAllowed(t.Key) {
			continue
		}
		if t.StableOnly && !(isStablecoin(req.FromToken) && isStablecoin(req.ToToken)) {
			continue
		}
		keys = append(keys, t.Key)
	}
	return keys
}

// legTool resolves a leg to its tool, refusing one that is not the
// provider's or does not connect the request's chains.
func (m *Market) legTool(provider string, req *quote.Request, leg string) (*tools.Tool, error) {
	t, ok := m.cat.Tool(leg)
	if !ok || t.Provider != provider {
		return nil, pricing.NoRoute(provider, leg, pricing.ReasonUnsupportedRoute, "%q is not a %s sandbox tool", leg, provider)
	}
	if !t.Connects(req.From.ID, req.To.ID) {
		return nil, pricing.NoRoute(provider, leg, pricing.ReasonUnsupportedRoute, "%s does not connect chain %d to chain %d", t.Name, req.From.ID, req.To.ID)
	}
	return t, nil
}

// Aggregator is the sandbox's "aggregator" provider: DEX and bridge tools
// across EVM chains, Solana and Sui, with transactions on the sandbox router.
type Aggregator struct{ m *Market }

// Aggregator returns the market's aggregator provider.
func (m *Market) Aggregator() *Aggregator { return &Aggregator{m: m} }

// Name is "aggregator".
func (a *Aggregator) Name() string { return registry.ProviderAggregator }

// Legs lists the aggregator tools that can serve the request.
func (a *Aggregator) Legs(req *quote.Request) []string {
	return a.m.catalogLegs(registry.ProviderAggregator, req)
}

// QuoteLeg prices the request on one aggregator tool and builds the route.
func (a *Aggregator) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	t, err := a.m.legTool(registry.ProviderAggregator, req, leg)
	if err != nil {
		return nil, err
	}
	if err := playQuote(registry.ProviderAggregator, req, t); err != nil {
		return nil, err
	}
	if err := a.m.Inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	r, err := a.m.aggregatorPriced(req, t)
	return complete(ctx, req, r, err)
}

// PriceLeg prices the request on one aggregator tool; the route builds
// itself (calldata included) on quote.Complete.
func (a *Aggregator) PriceLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	t, err := a.m.legTool(registry.ProviderAggregator, req, leg)
	if err != nil {
		return nil, err
	}
	if err := playQuote(registry.ProviderAggregator, req, t); err != nil {
		return nil, err
	}
	if err := a.m.Inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	return a.m.aggregatorPriced(req, t)
}

// Intents is the sandbox's "intents" provider: a solver network that takes
// deposits on the source chain and delivers on the destination chain.
type Intents struct{ m *Market }

// Intents returns the market's intents provider.
func (m *Market) Intents() *Intents { return &Intents{m: m} }

// Name is "intents".
func (i *Intents) Name() string { return registry.ProviderIntents }

// Legs lists the intents tools that can serve the request.
func (i *Intents) Legs(req *quote.Request) []string {
	return i.m.catalogLegs(registry.ProviderIntents, req)
}

// QuoteLeg prices the request on one intents tool.
func (i *Intents) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	t, err := i.m.legTool(registry.ProviderIntents, req, leg)
	if err != nil {
		return nil, err
	}
	if err := playQuote(registry.ProviderIntents, req, t); err != nil {
		return nil, err
	}
	if err := i.m.Inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	r, err := i.m.intentsPriced(req, t)
	return complete(ctx, req, r, err)
}

// PriceLeg prices the request on one intents tool; the route builds its
// deposit on quote.Complete.
func (i *Intents) PriceLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	t, err := i.m.legTool(registry.ProviderIntents, req, leg)
	if err != nil {
		return nil, err
	}
	if err := playQuote(registry.ProviderIntents, req, t); err != nil {
		return nil, err
	}
	if err := i.m.Inject(ctx, req.ID, t); err != nil {
		return nil, err
	}
	return i.m.intentsPriced(req, t)
}

// complete builds a priced route at once, for QuoteLeg callers that want
// the whole route rather than the engine's price-then-build.
func complete(ctx context.Context, req *quote.Request, r *quote.Route, err error) (*quote.Route, error) {
	if err != nil {
		return nil, err
	}
	if err := quote.Complete(ctx, req, r); err != nil {
		return nil, err
	}
	return r, nil
}
