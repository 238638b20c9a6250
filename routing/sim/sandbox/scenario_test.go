package sandbox

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// Each scenario on each sandbox leg: the quote-failing ones answer as a
// real upstream would, a scripted failure wraps scenario.ErrScripted (no
// breaker counts it), a scenario that cannot play on the leg is its no
// route, and the rest price as usual.
func TestQuoteLegScenarios(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	bridge := func() *quote.Request { return f.req(t, 42161, "USDC", 8453, "USDC", "100") }
	within := func() *quote.Request { return f.req(t, 42161, "USDC", 42161, "USDT", "100") }
	tests := []struct {
		name     string
		scenario scenario.Name
		req      func() *quote.Request
		provider quote.Provider
		leg      string
		code     string // an apierr code; "" with reason "" prices
		reason   string // a no-route reason
		scripted bool
	}{
		{"none prices", "", bridge, m.Aggregator(), "sbx-arcbridge", "", "", false},
		{"no-route", scenario.NoRoute, bridge, m.Aggregator(), "sbx-arcbridge", "", pricing.ReasonNoPossibleRoute, false},
		{"upstream-error", scenario.UpstreamError, bridge, m.Aggregator(), "sbx-arcbridge", apierr.UpstreamError, "", true},
		{"upstream-rate-limited", scenario.UpstreamRateLimited, bridge, m.Aggregator(), "sbx-arcbridge", apierr.UpstreamError, "", true},
		{"refund prices a bridge", scenario.Refund, bridge, m.Aggregator(), "sbx-arcbridge", "", "", false},
		{"refund is no swap within a chain", scenario.Refund, within, m.Aggregator(), "sbx-uniflow", "", pricing.ReasonUnsupportedRoute, false},
		{"stuck is no swap within a chain", scenario.Stuck, within, m.Aggregator(), "sbx-uniflow", "", pricing.ReasonUnsupportedRoute, false},
		{"source-revert prices a swap within a chain", scenario.SourceRevert, within, m.Aggregator(), "sbx-uniflow", "", "", false},
		{"incomplete-deposit is intents only", scenario.IncompleteDeposit, bridge, m.Aggregator(), "sbx-arcbridge", "", pricing.ReasonUnsupportedRoute, false},
		{"partial is aggregator only", scenario.Partial, bridge, m.Intents(), "sbx-intents", "", pricing.ReasonUnsupportedRoute, false},
		{"incomplete-deposit prices an intents leg", scenario.IncompleteDeposit, bridge, m.Intents(), "sbx-intents", "", "", false},
		{"price-drift prices as usual at quote time", scenario.PriceDrift, bridge, m.Aggregator(), "sbx-arcbridge", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req()
			req.Scenario = tt.scenario
			r, err := tt.provider.QuoteLeg(context.Background(), req, tt.leg)
			switch {
			case tt.code == "" && tt.reason == "":
				if err != nil {
					t.Fatalf("QuoteLeg: %v", err)
				}
				checkAmounts(t, r)
			case tt.reason != "":
				if got := noRouteReason(err); got != tt.reason {
					t.Fatalf("no-route reason %q (%v), want %s", got, err, tt.reason)
				}
			default:
				if ae := apierr.From(err); ae.Code != tt.code || errors.Is(err, scenario.ErrScripted) != tt.scripted {
					t.Fatalf("error %v, want %s scripted %v", err, tt.code, tt.scripted)
				}
			}
		})
	}
}

// price-drift moves the price DriftBps against the quote when the route is
// priced again at execute, and only then.
func TestPriceDriftAtExecute(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	price := func(sc scenario.Name, repricing bool) *big.Int {
		req := f.req(t, 42161, "USDC", 8453, "USDC", "100")
		req.Scenario, req.Repricing = sc, repricing
		r, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-arcbridge")
		if err != nil {
			t.Fatal(err)
		}
		return r.ToAmount
	}
	quoted := price(scenario.PriceDrift, false)
	if plain := price("", true); plain.Cmp(quoted) != 0 {
		t.Fatalf("repriced without a scenario %s, quoted %s", plain, quoted)
	}
	if d := quote.Drift(quoted, price(scenario.PriceDrift, true)); d < scenario.DriftBps || d > scenario.DriftBps+1 {
		t.Fatalf("drift %d bps, want %d", d, scenario.DriftBps)
	}
}

// source-revert's router call asks for one unit more than the router
// settles at; any other request carries the route's own minimum.
func TestSourceRevertMinimum(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	for _, sc := range []scenario.Name{"", scenario.SourceRevert} {
		req := f.req(t, 42161, "USDC", 8453, "USDC", "100")
		req.Scenario = sc
		r, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-arcbridge")
		if err != nil {
			t.Fatal(err)
		}
		got := revertingMinOut(req, r)
		want := r.ToAmountMin
		if sc == scenario.SourceRevert {
			want = new(big.Int).Add(r.ToAmount, big.NewInt(1))
		}
		if got.Cmp(want) != 0 {
			t.Fatalf("%q: minimum %s, want %s", sc, got, want)
		}
	}
}
