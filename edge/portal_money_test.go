package edge

import (
	"testing"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

func TestPortalMoney(t *testing.T) {
	usd := []struct {
		micro int64
		want  string
	}{
		{1_000_220_440, "$1,000.22"},
		{1_000_225_000, "$1,000.23"},
		{0, "$0.00"},
		{4_999, "$0.00"},
		{5_000, "$0.01"},
		{999_999, "$1.00"},
		{12_345_678_901_234, "$12,345,678.90"},
		{-1_500_000, "-$1.50"},
		{-1, "$0.00"},
	}
	for _, tc := range usd {
		if got := portalUSD(tc.micro); got != tc.want {
			t.Errorf("portalUSD(%d) = %q, want %q", tc.micro, got, tc.want)
		}
	}
	if got := portalKnownUSD(5, true); got != "" {
		t.Errorf("an unvalued amount is written %q", got)
	}

	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	const usdcArb, wethArb = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	tokens := []struct {
		chain        uint64
		token, units string
		want         string
	}{
		{42161, usdcArb, "1000220440", "1,000.22044 USDC"},
		{42161, usdcArb, "200000000", "200 USDC"},
		{42161, usdcArb, "1", "0.000001 USDC"},
		{42161, usdcArb, "0", "0 USDC"},
		{42161, wethArb, "1250500000000000000000", "1,250.5 WETH"},
		{42161, "0x0000000000000000000000000000000000000bad", "123", "123"}, // an unknown token: as given
		{42161, usdcArb, "12.5", "12.5"},                                    // not base units: as given
		{42161, usdcArb, "", ""},
	}
	for _, tc := range tokens {
		if got := portalTokenAmount(reg, tc.chain, tc.token, tc.units); got != tc.want {
			t.Errorf("portalTokenAmount(%s %s) = %q, want %q", tc.token, tc.units, got, tc.want)
		}
	}
}
