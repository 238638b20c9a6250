package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestLiveExactOutputAndRefundTo runs the real server in live mode against
// the upstream stand-ins: an exact-output quote on a pair both live
// upstreams serve is asked of LI.FI's GET /v1/quote/toAmount and 1Click's
// EXACT_OUTPUT, and every route reaches toAmount; pulseroute's direct route
// into PLSX reads the node's getAmountsIn; a refundTo other than
// fromAddress leaves LI.FI, which takes no refund address, out of the race,
// its leg unsupported with the reason in data.timing, while 1Click races.
func TestLiveExactOutputAndRefundTo(t *testing.T) {
	up := startLiveStandins(t)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, func(c *app.Config) { up.configure(c) })

	type leg struct{ Provider, Tool, Outcome, Reason string }
	type routesAnswer struct {
		Routes []struct {
			Tool     string
			Action   struct{ FromAmount, ToAmount, RefundTo string }
			Estimate struct{ FromAmount, ToAmountMin string }
		}
		Timing struct{ Legs []leg }
	}
	routes := func(kv ...string) routesAnswer {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		var r routesAnswer
		ts.get("/v1/routes?"+v.Encode()).decode(t, &r)
		return r
	}
	pair := []string{"fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
		"fromAddress", wallet, "toAddress", solAddress}

	t.Run("exact output from both upstreams", func(t *testing.T) {
		const want = "250000000"
		r := routes(append(pair, "toAmount", want)...)
		if len(r.Routes) != 2 {
			t.Fatalf("routes %+v", r)
		}
		for _, rt := range r.Routes {
			if rt.Action.ToAmount != want || rt.Action.FromAmount != rt.Estimate.FromAmount ||
				bigOf(t, rt.Estimate.ToAmountMin).Cmp(bigOf(t, want)) < 0 {
				t.Errorf("route %s: %+v", rt.Tool, rt)
			}
		}
		qs := up.agg.Quotes()
		if last := qs[len(qs)-1]; last.Get("toAmount") != want || last.Has("fromAmount") {
			t.Errorf("LI.FI was asked %v", last)
		}
	})

	t.Run("pulseroute direct into PLSX reads getAmountsIn", func(t *testing.T) {
		const want = "1000000000000000000000000"
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
			"toAmount", want, "fromAddress", wallet, "toAddress", wallet)).decode(t, &q)
		if q.Provider != "pulseroute" || bigOf(t, q.Quote.MinOutput).Cmp(bigOf(t, want)) < 0 || q.Quote.FromAmount == "" {
			t.Fatalf("direct quote %+v", q.Quote)
		}
	})

	t.Run("refundTo leaves LI.FI out of the race", func(t *testing.T) {
		r := routes(append(pair, "fromAmount", "300000000", "refundTo", refundAddr)...)
		var agg *leg
		for i := range r.Timing.Legs {
			if r.Timing.Legs[i].Provider == "aggregator" {
				agg = &r.Timing.Legs[i]
			}
		}
		if agg == nil || agg.Outcome != "unsupported" || !strings.Contains(agg.Reason, "refund") {
			t.Fatalf("timing %+v", r.Timing)
		}
		if len(r.Routes) != 1 || r.Routes[0].Action.RefundTo != refundAddr {
			t.Fatalf("routes %+v", r.Routes)
		}
		// The same refund address as fromAddress is no refund address at
		// all: both race.
		r = routes(append(pair, "fromAmount", "300000000", "refundTo", wallet)...)
		if len(r.Routes) != 2 {
			t.Fatalf("with refundTo = fromAddress: %+v", r)
		}
	})
}
