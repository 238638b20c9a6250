package main

import (
	"math"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// TestLiveQuotePricedFromPoolReserves runs two live-mode servers on the
// same stand-ins (LI.FI and a JSON-RPC node of chains 369 and 42161): one
// pricing the chain-369 leg from its snapshot of the PulseX reserves (the
// default --pulse-reserves-max-age), one with --pulse-reserves-max-age 0
// pricing it with the router's getAmountsOut as before. Once the snapshot
// is read, a multi-step quote (Shape C) makes one aggregator call and no
// getAmountsOut call, a direct inbound quote through PulseX (Shape B) and
// a swap within 369 none either; and every quote's amounts are the ones
// the router prices, to the unit. Before local pricing, each of these
// quotes waited for a getAmountsOut.
func TestLiveQuotePricedFromPoolReserves(t *testing.T) {
	up := startLiveStandins(t)
	local := startServer(t, up.configure)
	router := startServer(t, func(c *app.Config) {
		up.configure(c)
		c.Quote.PulseReservesMaxAge = 0
	})
	// A swap within 369 is quoted only without a partner fee.
	_, localKey := local.createPartner("ReservesCo", "--swap-fee-bps", "0")
	_, routerKey := router.createPartner("RouterCo", "--swap-fee-bps", "0")
	const age = `swapgate_pulse_reserves_age_seconds{chain="369"}`
	waitUntil(t, "the reserves snapshot is read", func() bool { return local.metric(age) < 60 })
	if !math.IsInf(router.metric(age), 1) {
		t.Errorf("with --pulse-reserves-max-age 0: %s = %v, want +Inf", age, router.metric(age))
	}

	out := func(q *anyQuote) string {
		for _, s := range []string{q.Quote.Estimate.ToAmount, q.Quote.EstimatedOutput} {
			if s != "" {
				return s
			}
		}
		return ""
	}
	tests := []struct {
		name      string
		path      string
		aggCalls  int
		multiStep bool
	}{
		{"shape C, WETH on Arbitrum to WPLS", quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", pulseroute.WPLSAddress,
			"fromAmount", "1000000000000000000", "fromAddress", wallet, "toAddress", wallet), 1, true},
		{"shape B, USDC on Arbitrum to PLSX", quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", wallet), 0, false},
		{"within 369, USDCh to PLSX", quotePath("fromChain", "369", "toChain", "369", "fromToken", pulseroute.USDChAddress, "toToken", plsx369,
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", wallet), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aggBefore, amountsBefore := len(up.agg.Quotes()), up.node.EthCalls("getAmountsOut")
			var fromReserves anyQuote
			local.get(tt.path, withKey(localKey)).decode(t, &fromReserves)
			if fromReserves.Provider != "pulseroute" || (tt.multiStep != (fromReserves.Quote.Type == "multi-step")) {
				t.Fatalf("quote from reserves: %+v", fromReserves)
			}
			if n := len(up.agg.Quotes()) - aggBefore; n != tt.aggCalls {
				t.Errorf("%d aggregator calls, want %d", n, tt.aggCalls)
			}
			if n := up.node.EthCalls("getAmountsOut") - amountsBefore; n != 0 {
				t.Errorf("%d getAmountsOut calls with a current snapshot, want 0", n)
			}

			amountsBefore = up.node.EthCalls("getAmountsOut")
			var fromRouter anyQuote
			router.get(tt.path, withKey(routerKey)).decode(t, &fromRouter)
			if n := up.node.EthCalls("getAmountsOut") - amountsBefore; n == 0 {
				t.Error("the router-priced server asked no getAmountsOut")
			}
			if got, want := out(&fromReserves), out(&fromRouter); got == "" || got != want {
				t.Errorf("output from reserves %q, from the router %q", got, want)
			}
		})
	}
	if n := local.metric(`swapgate_pulse_reserves_fallbacks_total{chain="369"}`); n != 0 {
		t.Errorf("%v fallbacks to the router with a current snapshot", n)
	}
}
