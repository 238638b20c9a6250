package account

import (
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

func TestSwapFee(t *testing.T) {
	partner := func(bps int, ecos ...string) *Partner {
		return &Partner{ID: "p", FeeTier: FeeTier{SwapFeeBps: bps}, EnabledEcosystems: ecos}
	}
	tests := []struct {
		name        string
		p           *Partner
		feeFree     bool
		bps         int
		needsWallet bool
		code        string
	}{
		{name: "anonymous tier", bps: AnonymousSwapFeeBps},
		{name: "anonymous on the fee-free bridge", feeFree: true, bps: 0},
		{name: "partner fee needs its wallet", p: partner(25, "evm"), bps: 25, needsWallet: true},
		{name: "zero fee needs no wallet", p: partner(0, "evm"), bps: 0},
		{name: "at the platform maximum", p: partner(MaxFeeBps, "evm"), bps: MaxFeeBps, needsWallet: true},
		{name: "above the platform maximum", p: partner(MaxFeeBps+1, "evm"), code: apierr.PartnerFeeExceedsMax},
		{name: "ecosystem not enabled", p: partner(25, "solana"), code: apierr.EcosystemNotConfigured},
		{name: "fee-free bridge wins over every partner rule", p: partner(MaxFeeBps + 1), feeFree: true, bps: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bps, needs, err := SwapFee(tt.p, "evm", tt.feeFree)
			if tt.code != "" {
				if err == nil || err.Code != tt.code {
					t.Fatalf("got %d %v %v, want %s", bps, needs, err, tt.code)
				}
				return
			}
			if err != nil || bps != tt.bps || needs != tt.needsWallet {
				t.Fatalf("got %d %v %v, want %d %v", bps, needs, err, tt.bps, tt.needsWallet)
			}
		})
	}
}

func TestFeeMicroUSD(t *testing.T) {
	tests := []struct {
		fee, out int64
		outUSD   float64
		want     int64
	}{
		{fee: 3, out: 1000, outUSD: 1000, want: 3_000_000},
		{fee: 1, out: 3, outUSD: 1, want: 333_333},
		{fee: 0, out: 3, outUSD: 1, want: 0},
		{fee: 5, out: 0, outUSD: 1, want: 0},
	}
	for _, tt := range tests {
		if got := FeeMicroUSD(big.NewInt(tt.fee), big.NewInt(tt.out), tt.outUSD); got != tt.want {
			t.Errorf("FeeMicroUSD(%d, %d, %v) = %d, want %d", tt.fee, tt.out, tt.outUSD, got, tt.want)
		}
	}
}

func TestCheckBounds(t *testing.T) {
	for _, tt := range []struct {
		err error
		ok  bool
	}{
		{CheckFeeBps(0), true}, {CheckFeeBps(MaxFeeBps), true}, {CheckFeeBps(MaxFeeBps + 1), false}, {CheckFeeBps(-1), false},
		{CheckPerMin(1), true}, {CheckPerMin(MaxPerMin), true}, {CheckPerMin(0), false}, {CheckPerMin(MaxPerMin + 1), false},
	} {
		if (tt.err == nil) != tt.ok {
			t.Errorf("got %v, want ok=%v", tt.err, tt.ok)
		}
	}
}

func TestUnitPriceUSD(t *testing.T) {
	for _, tt := range []struct {
		amount   int64
		decimals uint8
		usd      float64
		want     string
	}{
		{amount: 990_000, decimals: 6, usd: 0.99, want: "1"},
		{amount: 2_000_000, decimals: 6, usd: 1.9997, want: "0.99985"},
		{amount: 5e17, decimals: 18, usd: 1700, want: "3400"},
		{amount: 0, decimals: 6, usd: 1, want: ""},
		{amount: -5, decimals: 6, usd: 1, want: ""},
	} {
		if got := UnitPriceUSD(big.NewInt(tt.amount), tt.decimals, tt.usd); got != tt.want {
			t.Errorf("UnitPriceUSD(%d, %d, %v) = %q, want %q", tt.amount, tt.decimals, tt.usd, got, tt.want)
		}
	}
}
