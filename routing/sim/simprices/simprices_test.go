package simprices

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

func loadRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatalf("registry.Load: %v", err)
	}
	return reg
}

func clockAt(minute int) func() time.Time {
	return func() time.Time { return time.Date(2025, 3, 1, 10, minute, 30, 0, time.UTC) }
}

func TestSandboxPricesEveryTokenByLowerCaseAddress(t *testing.T) {
	reg := loadRegistry(t)
	s, err := New(reg, clockAt(7))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range reg.Chains() {
		got, err := s.Prices(context.Background(), c.ID)
		if err != nil {
			t.Fatalf("chain %d: %v", c.ID, err)
		}
		for _, tok := range reg.Tokens(c.ID) {
			if tok.PriceUSD == "" {
				continue
			}
			pr, ok := got[strings.ToLower(tok.Address)]
			if !ok {
				t.Errorf("chain %d: no price for %s (%s)", c.ID, tok.Symbol, tok.Address)
				continue
			}
			if !pr.ObservedAt.Equal(clockAt(7)()) {
				t.Errorf("chain %d: %s observed at %v, want the clock's time", c.ID, tok.Symbol, pr.ObservedAt)
			}
			p := pr.USD
			if !(p > 0) && tok.PriceUSD != "0" {
				t.Errorf("chain %d: %s priced %v", c.ID, tok.Symbol, p)
			}
		}
		for addr := range got {
			if addr != strings.ToLower(addr) {
				t.Errorf("chain %d: key %q is not lower case", c.ID, addr)
			}
		}
	}
}

func TestSandboxSameCoinSamePriceOnEveryChain(t *testing.T) {
	reg := loadRegistry(t)
	s, err := New(reg, clockAt(23))
	if err != nil {
		t.Fatal(err)
	}
	byCoin := map[string]float64{}
	for _, c := range reg.Chains() {
		got, err := s.Prices(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range reg.Tokens(c.ID) {
			pr, ok := got[strings.ToLower(tok.Address)]
			if !ok || tok.CoinKey == "" {
				continue
			}
			p := pr.USD
			if prev, seen := byCoin[tok.CoinKey]; seen && prev != p {
				t.Errorf("%s on chain %d priced %v, elsewhere %v", tok.CoinKey, c.ID, p, prev)
			}
			byCoin[tok.CoinKey] = p
		}
	}
}

func TestSandboxBounds(t *testing.T) {
	reg := loadRegistry(t)
	eth, _ := reg.Chain(1)
	usdc, ok := reg.TokenBySymbol(1, "USDC")
	if !ok {
		t.Fatal("registry has no USDC on chain 1")
	}
	native := strings.ToLower(eth.NativeToken.Address)
	distinct := map[float64]bool{}
	for minute := 0; minute < 60; minute++ {
		s, err := New(reg, clockAt(minute))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Prices(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if p := got[strings.ToLower(usdc.Address)].USD; math.Abs(p-1) > 0.001 {
			t.Errorf("minute %d: USDC at %v, outside ±0.1%% of 1", minute, p)
		}
		p := got[native].USD
		if math.Abs(p/3400-1) > volatileAmplitude+1e-12 {
			t.Errorf("minute %d: ETH at %v, outside ±0.2%% of its reference", minute, p)
		}
		distinct[p] = true
	}
	if len(distinct) < 30 {
		t.Errorf("ETH took only %d distinct prices over an hour; the market should move", len(distinct))
	}
}

func TestSandboxDeterministicWithinMinute(t *testing.T) {
	reg := loadRegistry(t)
	a, _ := New(reg, func() time.Time { return time.Date(2025, 3, 1, 10, 5, 1, 0, time.UTC) })
	b, _ := New(reg, func() time.Time { return time.Date(2031, 7, 9, 22, 5, 59, 0, time.UTC) })
	pa, _ := a.Prices(context.Background(), 1)
	pb, _ := b.Prices(context.Background(), 1)
	if len(pa) == 0 || len(pa) != len(pb) {
		t.Fatalf("sizes %d and %d", len(pa), len(pb))
	}
	for k, v := range pa {
		if pb[k].USD != v.USD {
			t.Errorf("%s: %v vs %v at the same minute of the hour", k, v.USD, pb[k].USD)
		}
	}
}

func TestSandboxErrors(t *testing.T) {
	reg := loadRegistry(t)
	s, _ := New(reg, clockAt(0))
	if _, err := s.Prices(context.Background(), 424242); !errors.Is(err, prices.ErrUnknownChain) {
		t.Errorf("unknown chain: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Prices(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}

// TestPriceAtGolden pins the price function, hash included: nodes of a future
// cluster and recorded test expectations rely on it never drifting.
func TestPriceAtGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Coin   string  `json:"coin"`
		Ref    float64 `json:"ref"`
		Minute int     `json:"minute"`
		Price  float64 `json:"price"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("empty golden file")
	}
	for _, r := range rows {
		if got := priceAt(r.Ref, r.Coin, r.Minute); math.Abs(got-r.Price) > 1e-9*r.Ref {
			t.Errorf("priceAt(%v, %q, %d) = %v, want %v", r.Ref, r.Coin, r.Minute, got, r.Price)
		}
	}
}
