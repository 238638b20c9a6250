package sandbox

import (
	"context"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestPricedRoutesRankAsBuilt checks the two phases agree: a priced leg's
// stand-in gas and fee totals, and its output value, are exactly those of
// the route once built, so ranking before building picks what ranking the
// built routes would.
func TestPricedRoutesRankAsBuilt(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	cases := []struct {
		from             uint64
		fromTok          string
		to               uint64
		toTok, amount    string
		feeBps           int
		intents          bool
		tools            []string
		wantTx, wantDepo bool
	}{
		{from: 42161, fromTok: "USDC", to: 8453, toTok: "USDC", amount: "1000", feeBps: 25, tools: []string{"sbx-arcbridge", "sbx-canal"}, wantTx: true},
		{from: 42161, fromTok: "USDC", to: 8453, toTok: "WETH", amount: "1000", tools: []string{"sbx-canal"}, wantTx: true},
		{from: 1, fromTok: "", to: 1, toTok: "USDC", amount: "2", feeBps: 30, tools: []string{"sbx-uniflow"}, wantTx: true},
		{from: 1, fromTok: "USDC", to: 1151111081099710, toTok: "USDC", amount: "1000", feeBps: 30, intents: true, tools: []string{"sbx-intents"}, wantTx: true, wantDepo: true},
	}
	for _, c := range cases {
		for _, tool := range c.tools {
			req := f.req(t, c.from, c.fromTok, c.to, c.toTok, c.amount)
			req.FeeBps, req.FeeRecipient = c.feeBps, feeWallet
			var pr quote.Pricer = m.Aggregator()
			if c.intents {
				pr = m.Intents()
			}
			r, err := pr.PriceLeg(context.Background(), req, tool)
			if err != nil {
				t.Fatalf("%s: PriceLeg: %v", tool, err)
			}
			if r.Pending == nil || r.Tx != nil || r.GasCosts != nil || r.FeeCosts != nil || r.ToAmount != nil {
				t.Fatalf("%s: priced route is built already: %+v", tool, r)
			}
			gas, fee, out := r.GasUSD(), r.FeeUSD(), r.ToAmountUSD
			if err := quote.Complete(context.Background(), req, r); err != nil {
				t.Fatalf("%s: Complete: %v", tool, err)
			}
			if r.Pending != nil {
				t.Fatalf("%s: still pending after Complete", tool)
			}
			if r.GasUSD() != gas || r.FeeUSD() != fee || r.ToAmountUSD != out {
				t.Errorf("%s: built gas/fee/out %v/%v/%v, priced %v/%v/%v", tool, r.GasUSD(), r.FeeUSD(), r.ToAmountUSD, gas, fee, out)
			}
			if usd := pricing.USDOf(r.ToAmount, req.ToToken, mustPrice(t, m, req)); usd != r.ToAmountUSD {
				t.Errorf("%s: ToAmountUSD %v, value of ToAmount %v", tool, r.ToAmountUSD, usd)
			}
			if (r.Tx != nil) != c.wantTx || (r.DepositAddress != "") != c.wantDepo {
				t.Errorf("%s: tx %v deposit %q", tool, r.Tx, r.DepositAddress)
			}
			checkAmounts(t, r)
			// The route QuoteLeg answers with is the same route.
			full, err := m.Aggregator().QuoteLeg(context.Background(), req, tool)
			if c.intents {
				full, err = m.Intents().QuoteLeg(context.Background(), req, tool)
			}
			if err != nil || full.ToAmount.Cmp(r.ToAmount) != 0 || full.FeeUSD() != r.FeeUSD() || len(full.GasCosts) != len(r.GasCosts) {
				t.Errorf("%s: QuoteLeg %+v (%v), built %+v", tool, full, err, r)
			}
		}
	}
}

func mustPrice(t *testing.T, m *Market, req *quote.Request) float64 {
	t.Helper()
	p, ok := m.TokenPrice(req.ToToken)
	if !ok {
		t.Fatalf("no price for %s", req.ToToken.Symbol)
	}
	return p
}
