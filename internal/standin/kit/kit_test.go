package kit

import (
	"context"
	"math/big"
	"net/http"
	"testing"
	"time"
)

func TestExchange(t *testing.T) {
	usdc := Token{Decimals: 6, PriceUSD: 1}
	eth := Token{Decimals: 18, PriceUSD: 2000}
	odd := Token{Decimals: 6, PriceUSD: 1.01}
	free := Token{Decimals: 6}
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	cases := []struct {
		name     string
		from, to Token
		amount   *big.Int
		want     string
	}{
		{"usdc to usdc exact", usdc, usdc, big.NewInt(99_600_000), "99600000"},
		{"one eth to usdc", eth, usdc, e18, "2000000000"},
		{"usdc to eth", usdc, eth, big.NewInt(1_000_000), "500000000000000"},
		{"rounded down", odd, usdc, big.NewInt(1), "1"},
		{"unpriced", usdc, free, big.NewInt(5), "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Exchange(tc.from, tc.to, tc.amount).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFormatting(t *testing.T) {
	cases := []struct {
		amount   int64
		decimals uint8
		want     string
	}{{100_000_000, 6, "100"}, {99_650_000, 6, "99.65"}, {1, 6, "0.000001"}, {7, 0, "7"}}
	for _, tc := range cases {
		if got := FormatUnits(big.NewInt(tc.amount), tc.decimals); got != tc.want {
			t.Errorf("FormatUnits(%d, %d) = %s, want %s", tc.amount, tc.decimals, got, tc.want)
		}
	}
	if got := Shave(big.NewInt(10_000), 15).String(); got != "9985" {
		t.Errorf("Shave = %s", got)
	}
	if got := FormatUSD(99.98765); got != "99.9877" {
		t.Errorf("FormatUSD = %s", got)
	}
}

func TestTable(t *testing.T) {
	tb := NewTable([]Token{
		{ChainID: 1, Address: "0xAbC", Symbol: "A"},
		{ChainID: 1, Address: "0xabc", Symbol: "dup"},
		{ChainID: 2, Address: "Sol1", Symbol: "S"},
	})
	if tok, ok := tb.Lookup(1, "0xABC"); !ok || tok.Symbol != "A" {
		t.Errorf("hex lookup: %+v %v", tok, ok)
	}
	if _, ok := tb.Lookup(2, "sol1"); ok {
		t.Error("a base58 address matched in another case")
	}
	if len(tb.Tokens()) != 2 || len(tb.Chains()) != 2 {
		t.Errorf("tokens %v chains %v", tb.Tokens(), tb.Chains())
	}
	def, err := DefaultTable()
	if err != nil || len(def.Tokens()) < 100 {
		t.Fatalf("default table: %v, %d tokens", err, len(def.Tokens()))
	}
}

func TestLatency(t *testing.T) {
	l := NewLatency(50 * time.Millisecond)
	srv := Start(Delayed(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })))
	defer srv.Close()
	at := time.Now()
	resp, err := http.Get(srv.URL)
	if err != nil || resp.StatusCode != 204 || time.Since(at) < 50*time.Millisecond {
		t.Fatalf("%v %v after %v", resp, err, time.Since(at))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l.Wait(ctx) {
		t.Error("Wait on a cancelled context reported the whole delay")
	}
	l.Set(-time.Second)
	if l.Get() != 0 {
		t.Errorf("negative latency kept: %v", l.Get())
	}
}
