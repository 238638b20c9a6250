package lifi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
)

func TestPriceSourceReadsRecordedTokenList(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "tokens_prices_arb.json", nil)
	c, _ := newClient(t, srv.URL, 5*time.Second)
	at := time.Date(2025, 9, 18, 10, 10, 0, 0, time.UTC)
	got, err := c.PriceSource(func() time.Time { return at }).Prices(context.Background(), 42161)
	if err != nil {
		t.Fatal(err)
	}
	if p, q, _ := rec.get(); p != "/v1/tokens" || q.Get("chains") != "42161" {
		t.Errorf("request %q %v", p, q)
	}
	for _, tc := range []struct {
		name, addr string
		usd        float64
		logo       string
		priced     bool
	}{
		{"native coin", "0x0000000000000000000000000000000000000000", 3371.44, "https://static.debank.com/image/token/logo_url/eth/935ae4e4d1d12d59a99717a24f2540b5.png", true},
		{"lower-case address in the answer", "0xaf88d065e77c8cc2239327c5edb3a432268e5831", 0.99985, "https://raw.githubusercontent.com/trustwallet/assets/master/blockchains/ethereum/assets/0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48/logo.png", true},
		{"price as a number, empty logo", "0x82af49447d8a07e3bd95bd0d56f35241523fbab1", 3371.1, "", true},
		{"price 0", "0x912ce59144191c1204e64559fe8253a0e49e6548", 0, "", false},
		{"no price", "0xda10009cbd5d07dd0cecc66161fc93d7c9000da1", 0, "", false},
		{"price not a number", "0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9", 0, "", false},
		{"not in the registry", "0x1111111111111111111111111111111111111111", 0, "", false},
	} {
		p, ok := got[tc.addr]
		if ok != tc.priced {
			t.Errorf("%s: priced %v, want %v", tc.name, ok, tc.priced)
			continue
		}
		if !ok {
			continue
		}
		if p.USD != tc.usd || p.LogoURI != tc.logo || !p.ObservedAt.Equal(at) {
			t.Errorf("%s: %+v, want %v with logo %q observed at the fetch", tc.name, p, tc.usd, tc.logo)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d prices, want 3: %v", len(got), got)
	}
}

func TestPriceSourceChainsAndErrors(t *testing.T) {
	srv, _ := replay(t, http.StatusInternalServerError, "error_500.json", nil)
	c, _ := newClient(t, srv.URL, 5*time.Second)
	src := c.PriceSource(nil)
	for _, tc := range []struct {
		name    string
		chain   uint64
		wantErr error
		empty   bool
	}{
		{"upstream error", 42161, nil, false},
		{"chain the aggregator does not reach: no request", 20000000000001, nil, true},
		{"unknown chain", 424242, prices.ErrUnknownChain, false},
	} {
		got, err := src.Prices(context.Background(), tc.chain)
		switch {
		case tc.empty:
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("%s: %v, %v", tc.name, got, err)
			}
		case tc.wantErr != nil:
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: err %v, want %v", tc.name, err, tc.wantErr)
			}
		default:
			if err == nil || got != nil {
				t.Errorf("%s: %v, %v; want an error", tc.name, got, err)
			}
		}
	}
}
