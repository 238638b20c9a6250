package oneclick

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/prices"
)

func TestPriceSourceReadsRecordedTokenList(t *testing.T) {
	srv, rec := replay(t, http.StatusOK, "tokens_prices.json")
	c, reg := newClient(t, srv.URL, 5*time.Second)
	now := time.Date(2025, 9, 18, 10, 11, 0, 0, time.UTC)
	src := c.PriceSource(func() time.Time { return now })
	stamp := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	addr := func(chain uint64, sym string) string {
		tok, ok := reg.TokenBySymbol(chain, sym)
		if !ok {
			t.Fatalf("no %s on %d", sym, chain)
		}
		return tok.Address
	}
	const arb, sol, near, btc = 42161, 1151111081099710, 900000001, 20000000000001
	for _, tc := range []struct {
		name   string
		chain  uint64
		addr   string
		usd    float64
		at     time.Time
		priced bool
	}{
		{"native coin, no contract address", arb, "0x0000000000000000000000000000000000000000", 3371.5, stamp("2025-09-18T10:09:30Z"), true},
		{"ERC-20 by contract", arb, "0xaf88d065e77c8cc2239327c5edb3a432268e5831", 0.99985, stamp("2025-09-18T10:10:00Z"), true},
		{"no priceUpdatedAt", arb, lower(addr(arb, "USDT")), 0, time.Time{}, false},
		{"price 0", arb, lower(addr(arb, "ARB")), 0, time.Time{}, false},
		{"listed by 1Click but not here", arb, lower(addr(arb, "WETH")), 0, time.Time{}, false},
		{"Solana token by base58 contract", sol, lower(addr(sol, "USDC")), 0.99985, stamp("2025-09-18T10:10:00Z"), true},
		{"Solana native", sol, "11111111111111111111111111111111", 142.17, stamp("2025-09-18T10:10:00Z"), true},
		{"NEAR's wrapped coin", near, "native", 2.71, stamp("2025-09-18T10:08:00Z"), true},
		{"priceUpdatedAt not a time", btc, "bitcoin", 0, time.Time{}, false},
	} {
		got, err := src.Prices(context.Background(), tc.chain)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, ok := got[tc.addr]
		if ok != tc.priced || (ok && (p.USD != tc.usd || !p.ObservedAt.Equal(tc.at))) {
			t.Errorf("%s: %+v priced %v; want %v at %v priced %v", tc.name, p, ok, tc.usd, tc.at, tc.priced)
		}
	}
	if n := rec.count(); n != 1 {
		t.Errorf("%d fetches of the list for one round, want 1", n)
	}
	now = now.Add(listReuse)
	if _, err := src.Prices(context.Background(), arb); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(); n != 2 {
		t.Errorf("%d fetches once the list is old, want 2", n)
	}
}

func TestPriceSourceChainsAndErrors(t *testing.T) {
	srv, _ := replay(t, http.StatusInternalServerError, "error_500.json")
	c, _ := newClient(t, srv.URL, 5*time.Second)
	src := c.PriceSource(nil)
	if got, err := src.Prices(context.Background(), 42161); err == nil || got != nil {
		t.Errorf("upstream error: %v, %v", got, err)
	}
	if got, err := src.Prices(context.Background(), 25); err != nil || got == nil || len(got) != 0 {
		t.Errorf("chain 1Click does not reach: %v, %v", got, err)
	}
	if _, err := src.Prices(context.Background(), 424242); !errors.Is(err, prices.ErrUnknownChain) {
		t.Errorf("unknown chain: %v", err)
	}
}

func lower(s string) string { return strings.ToLower(s) }
