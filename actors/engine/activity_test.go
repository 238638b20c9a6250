package engine

import (
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// TestActivityValuesWhatItKnows: a fee quote's earning keeps the price its
// fee was valued at; a figure whose price was absent is marked unknown and
// left at zero, never valued at 0 dollars or at a guess.
func TestActivityValuesWhatItKnows(t *testing.T) {
	usdc := &registry.Token{ChainID: 8453, Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Symbol: "USDC", Decimals: 6}
	for _, tc := range []struct {
		name                        string
		fee                         int64
		fromUSD, toUSD              float64
		wantFee, wantVolume         int64
		wantFeeUnknown, wantVolUnkn bool
		wantPrice                   string
		wantEarning                 bool
	}{
		{"valued fee", 2_500, 100, 99.75, 2_500, 100_000_000, false, false, "1", true},
		{"no fee", 0, 100, 99.75, 0, 100_000_000, false, false, "", false},
		{"output price unknown", 2_500, 100, quote.NoUSD(), 0, 100_000_000, true, false, "", true},
		{"input price unknown", 2_500, quote.NoUSD(), 99.75, 2_500, 0, false, true, "1", true},
	} {
		req := &quote.Request{ID: "qt_1", PartnerID: "ptn_a", From: &registry.Chain{ID: 42161, FeeEcosystem: "evm"},
			To: &registry.Chain{ID: 8453}, FromToken: usdc, ToToken: usdc}
		r := &quote.Route{Provider: "aggregator", Tool: "t", FromAmount: big.NewInt(100_000_000), ToAmount: big.NewInt(99_750_000),
			PartnerFee: big.NewInt(tc.fee), FromAmountUSD: tc.fromUSD, ToAmountUSD: tc.toUSD}
		a := activity(req, r)
		if a.FeeMicroUSD != tc.wantFee || a.VolumeMicroUSD != tc.wantVolume || a.FeeUSDUnknown != tc.wantFeeUnknown ||
			a.VolumeUSDUnknown != tc.wantVolUnkn || (a.Earning != nil) != tc.wantEarning {
			t.Errorf("%s: %+v", tc.name, a)
			continue
		}
		if a.Earning != nil && (a.Earning.PriceUSD != tc.wantPrice || a.Earning.FeeAmount != "2500") {
			t.Errorf("%s: earning %+v, want price %q", tc.name, a.Earning, tc.wantPrice)
		}
	}
}
