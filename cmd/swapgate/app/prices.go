package app

import (
	"context"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simprices"
)

// priceSource is what the reference-data actors poll for USD prices: the
// sandbox's deterministic prices in sandbox mode; in live mode the opened
// upstreams' price sources layered in list order, the first listing a token
// pricing it: the aggregator's token list (LI.FI's GET /v1/tokens), filled
// in for the assets only the intents provider lists from its own (1Click's
// GET /v0/tokens). Live mode without an upstream that prices prices
// nothing: no figure is invented.
func priceSource(reg *registry.Registry, cfg Config, ups []opened) (prices.Source, error) {
	if cfg.Mode != ModeLive {
		return simprices.New(reg, time.Now)
	}
	var sources []prices.Source
	for _, u := range ups {
		if p, ok := u.client.(priceOffer); ok {
			sources = append(sources, p.priceSource(time.Now))
		}
	}
	if len(sources) == 0 {
		return noPrices{}, nil
	}
	src := sources[len(sources)-1]
	for i := len(sources) - 2; i >= 0; i-- {
		src = prices.Layered{Primary: sources[i], Secondary: src}
	}
	return src, nil
}

// noPrices prices nothing: live mode with no upstream to ask.
type noPrices struct{}

func (noPrices) Prices(context.Context, uint64) (map[string]prices.Price, error) {
	return map[string]prices.Price{}, nil
}
