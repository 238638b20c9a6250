// Package simprices is the sandbox's price source: deterministic USD prices
// of the registry's tokens, a slow wave around each token's reference
// price, which the refdata actors poll in sandbox mode as they poll the
// upstreams' token lists in live mode.
package simprices

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Amplitudes of the sandbox's price wave, as a fraction of the reference
// price. Pegged assets move much less so that a stablecoin always reads
// within ±0.1% of its peg, as integrators expect.
const (
	volatileAmplitude = 0.002
	peggedAmplitude   = 0.0005
	// peggedTolerance is how close to $1 a reference price must be for the
	// token to be treated as a USD stablecoin.
	peggedTolerance = 0.005
)

// Sandbox is the deterministic price source of the embedded market. A price
// is a function of the asset's reference price, its coin key and the minute
// of the hour only, so that tests can predict it, every node of a future
// cluster agrees on it, and the same asset (same coin key) has the same price
// on every chain, leaving no phantom cross-chain arbitrage.
type Sandbox struct {
	now func() time.Time
	// byChain lists, per chain, the priced tokens as (address, coin).
	byChain map[uint64][]pricedToken
	// refs holds one reference price per coin key.
	refs map[string]float64
}

type pricedToken struct {
	address string // lower case
	coin    string
}

var _ prices.Source = (*Sandbox)(nil)

// New builds the sandbox source from the registry's reference prices.
// A coin key's reference price is taken from the lowest chain id that lists
// it, so a data file that disagrees with itself cannot make one asset carry
// two prices. Tokens without a reference price are left unpriced; a reference
// price that does not parse is an error in the data and fails construction.
// now is the clock; pass time.Now outside tests.
func New(reg *registry.Registry, now func() time.Time) (*Sandbox, error) {
	s := &Sandbox{
		now:     now,
		byChain: make(map[uint64][]pricedToken),
		refs:    make(map[string]float64),
	}
	for _, c := range reg.Chains() { // ordered by id
		list := []pricedToken{}
		for _, t := range reg.Tokens(c.ID) {
			if t.PriceUSD == "" {
				continue
			}
			ref, err := strconv.ParseFloat(t.PriceUSD, 64)
			if err != nil || ref < 0 || math.IsInf(ref, 0) || math.IsNaN(ref) {
				return nil, fmt.Errorf("simprices: token %s on chain %d: bad reference price %q", t.Address, c.ID, t.PriceUSD)
			}
			coin := coinOf(t)
			if _, seen := s.refs[coin]; !seen {
				s.refs[coin] = ref
			}
			list = append(list, pricedToken{address: strings.ToLower(t.Address), coin: coin})
		}
		s.byChain[c.ID] = list
	}
	return s, nil
}

// coinOf names the asset a token is; tokens without a coin key are their own
// asset.
func coinOf(t *registry.Token) string {
	if t.CoinKey != "" {
		return t.CoinKey
	}
	return strconv.FormatUint(t.ChainID, 10) + ":" + strings.ToLower(t.Address)
}

// Prices returns the sandbox prices of every priced token on the chain at the
// current minute, observed now.
func (s *Sandbox) Prices(ctx context.Context, chainID uint64) (map[string]prices.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("simprices: chain %d: %w", chainID, err)
	}
	list, ok := s.byChain[chainID]
	if !ok {
		return nil, fmt.Errorf("simprices: chain %d: %w", chainID, prices.ErrUnknownChain)
	}
	now := s.now()
	minute := now.UTC().Minute()
	out := make(map[string]prices.Price, len(list))
	for _, t := range list {
		out[t.address] = prices.Price{USD: priceAt(s.refs[t.coin], t.coin, minute), ObservedAt: now}
	}
	return out, nil
}

// priceAt is ref × (1 + a·sin(2π·(minute + phase)/60)): a slow wave with a
// one-hour period whose phase depends on the coin, so that assets do not all
// move in step.
func priceAt(ref float64, coin string, minute int) float64 {
	amp := volatileAmplitude
	if math.Abs(ref-1) <= peggedTolerance {
		amp = peggedAmplitude
	}
	wave := math.Sin(2 * math.Pi * (float64(minute) + phase(coin)) / 60)
	return ref * (1 + amp*wave)
}

// phase maps a coin key to a stable offset in [0, 60) minutes.
func phase(coin string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(coin))
	return float64(h.Sum32()%6000) / 100
}
