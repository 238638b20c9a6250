package sandbox

import (
	"fmt"
	"math/big"
	"net/http"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// playQuote plays the request's sandbox scenario on one leg before it is
// priced: the quote-failing scenarios answer as a real upstream would
// (no route; a failure; a 429), and a scenario that cannot play on this
// leg (an intents-only one on the aggregator, a bridge's on a swap within
// one chain) answers without a route, saying why, so that the quote the
// client gets is one the scenario plays on. A nil return prices the leg.
// Scripted failures wrap scenario.ErrScripted, so that no breaker counts
// them against the tool.
func playQuote(provider string, req *quote.Request, t *tools.Tool) error {
	s := req.Scenario
	if s == "" {
		return nil
	}
	switch s {
	case scenario.NoRoute:
		return pricing.NoRoute(provider, t.Key, pricing.ReasonNoPossibleRoute,
			"%s found no route (sandbox scenario %s)", t.Name, s)
	case scenario.UpstreamError:
		return apierr.New(apierr.UpstreamError, fmt.Sprintf("%s failed (sandbox scenario %s)", t.Name, s)).
			With("tool", t.Key).With("upstreamStatus", http.StatusInternalServerError).Wrap(scenario.ErrScripted)
	case scenario.UpstreamRateLimited:
		return apierr.New(apierr.UpstreamError, fmt.Sprintf("%s is rate limiting us (sandbox scenario %s)", t.Name, s)).
			With("tool", t.Key).With("upstreamStatus", http.StatusTooManyRequests).Wrap(scenario.ErrScripted)
	}
	switch {
	case s.IntentsOnly() && provider != registry.ProviderIntents,
		s.AggregatorOnly() && provider != registry.ProviderAggregator:
		return pricing.NoRoute(provider, t.Key, pricing.ReasonUnsupportedRoute,
			"sandbox scenario %s does not play on %s routes", s, provider)
	case s.CrossChainOnly() && req.From.ID == req.To.ID:
		return pricing.NoRoute(provider, t.Key, pricing.ReasonUnsupportedRoute,
			"sandbox scenario %s plays on cross-chain routes only", s)
	case s == scenario.SourceRevert && req.From.ChainType != registry.EVM:
		return pricing.NoRoute(provider, t.Key, pricing.ReasonUnsupportedRoute,
			"sandbox scenario %s plays on EVM source chains only", s)
	}
	return nil
}

// priceMove is the share of the output the request's scenario keeps at
// this pricing: 1 but for a price-drift scenario priced again at execute.
func priceMove(req *quote.Request) float64 {
	return 1 - float64(req.Scenario.PriceMoveBps(req.Repricing))/1e4
}

// revertingMinOut is the minimum output a source-revert scenario's router
// call carries: one unit above the output the router settles at, so that
// the router reverts on the source chain as it does when a price moved past
// the slippage (FAILED / SLIPPAGE_EXCEEDED). Any other request keeps the
// route's own minimum.
func revertingMinOut(req *quote.Request, r *quote.Route) *big.Int {
	if req.Scenario != scenario.SourceRevert {
		return r.ToAmountMin
	}
	return new(big.Int).Add(r.ToAmount, big.NewInt(1))
}
