package app

import (
	"context"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/lifi"
	"github.com/swapgate/swapgate/routing/adapters/oneclick"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simprices"
)

// priceSource is what the reference-data actors poll for USD prices: the
// sandbox's deterministic prices in sandbox mode; in live mode the
// configured aggregator's token list (LI.FI's GET /v1/tokens), filled in for
// the assets only the intents provider lists from its own (1Click's GET
// /v0/tokens). Live mode without either upstream prices nothing: no figure
// is invented.
func priceSource(reg *registry.Registry, cfg Config) (prices.Source, error) {
	if cfg.Mode != ModeLive {
		return simprices.New(reg, time.Now)
	}
	var sources []prices.Source
	if q := cfg.Quote; q.AggregatorURL != "" {
		c, err := lifi.New(lifi.Config{BaseURL: q.AggregatorURL, APIKey: q.AggregatorKey, Timeout: q.UpstreamTimeout, Integrator: "swapgate"}, reg)
		if err != nil {
			return nil, fmt.Errorf("app: aggregator prices: %w", err)
		}
		sources = append(sources, c.PriceSource(time.Now))
	}
	if q := cfg.Quote; q.IntentsURL != "" {
		c, err := oneclick.New(oneclick.Config{BaseURL: q.IntentsURL, APIKey: q.IntentsKey, Timeout: q.UpstreamTimeout, Integrator: "swapgate"}, reg)
		if err != nil {
			return nil, fmt.Errorf("app: intents prices: %w", err)
		}
		sources = append(sources, c.PriceSource(time.Now))
	}
	switch len(sources) {
	case 0:
		return noPrices{}, nil
	case 1:
		return sources[0], nil
	}
	return prices.Layered{Primary: sources[0], Secondary: sources[1]}, nil
}

// noPrices prices nothing: live mode with no upstream to ask.
type noPrices struct{}

func (noPrices) Prices(context.Context, uint64) (map[string]prices.Price, error) {
	return map[string]prices.Price{}, nil
}
