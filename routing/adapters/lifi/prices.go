package lifi

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// PriceSource reads live USD prices, and the tokens' logos, from LI.FI's
// token list: GET /v1/tokens?chains=<id> answers {"tokens": {"<chainId>":
// [Token]}}, each Token carrying chainId, address, symbol, decimals, name,
// coinKey, logoURI and priceUSD (a decimal string). The list carries no
// observation time, so a price counts as observed when it was fetched.
// Only the registry's tokens are kept; a priceUSD that is absent, not a
// number or not above zero prices nothing.
type PriceSource struct {
	c   *Client
	now func() time.Time
}

var _ prices.Source = (*PriceSource)(nil)

// PriceSource returns the client's price source; now is the clock that
// stamps each fetch (time.Now when nil).
func (c *Client) PriceSource(now func() time.Time) *PriceSource {
	if now == nil {
		now = time.Now
	}
	return &PriceSource{c: c, now: now}
}

// Prices fetches the chain's token list. A chain the registry does not
// reach through the aggregator has no prices here, without a request.
func (s *PriceSource) Prices(ctx context.Context, chainID uint64) (map[string]prices.Price, error) {
	chain, ok := s.c.reg.Chain(chainID)
	if !ok {
		return nil, fmt.Errorf("lifi: prices of chain %d: %w", chainID, prices.ErrUnknownChain)
	}
	if !slices.Contains(chain.Providers, registry.ProviderAggregator) {
		return map[string]prices.Price{}, nil
	}
	lists, err := s.c.Tokens(ctx, []uint64{chainID})
	if err != nil {
		return nil, fmt.Errorf("lifi: prices of chain %d: %w", chainID, err)
	}
	observed := s.now()
	out := make(map[string]prices.Price, len(s.c.reg.Tokens(chainID)))
	for _, t := range lists[chainID] {
		reg, ok := s.c.reg.Token(chainID, t.Address)
		if !ok {
			continue
		}
		usd, ok := parsePrice(t.PriceUSD)
		if !ok {
			continue
		}
		out[strings.ToLower(reg.Address)] = prices.Price{USD: usd, ObservedAt: observed, LogoURI: loadableURL(t.LogoURI)}
	}
	return out, nil
}

// parsePrice reads a priceUSD: a finite number above zero, or nothing.
func parsePrice(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, false
	}
	return v, true
}

// loadableURL keeps a logo address only when it is an absolute http(s) URL,
// which is all a client can load.
func loadableURL(s string) string {
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s
	}
	return ""
}
