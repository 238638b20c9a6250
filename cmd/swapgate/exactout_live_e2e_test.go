package main

import (
	"encoding/json"
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

// TestLiveExactOutputWhilePoolsMove runs the real server in live mode with
// chain 369's node answering from PulseX pools that move at every
// getAmountsOut, as a busy chain's do between two reads at the latest
// block. pulseroute's exact-output direct route into PLSX still reaches
// toAmount on /v1/quote (data.quote.minOutput and the calldata's), on
// /v1/routes (estimate.toAmountMin) and on /v1/quote/stream (each route
// event and the best): the route is priced from the reads that sized it,
// not from reads made after the pools moved.
func TestLiveExactOutputWhilePoolsMove(t *testing.T) {
	up := startLiveStandins(t)
	ts := onrampServer(t, newSignedReceiver(t), func(c *app.Config) {
		up.configure(c)
		// The router prices the leg, read after read, as it does once the
		// reserves snapshot is stale: the drift moves its answers only.
		c.Quote.PulseReservesMaxAge = 0
	})
	// 0.02% of the pools' output per read: far more than the one base unit
	// by which a sized input clears toAmount.
	up.node.SetPoolDrift(200)
	const want = "1000000000000000000000000"
	path := quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
		"toAmount", want, "fromAddress", wallet, "toAddress", wallet, "slippage", "0.005")
	reaches := func(t *testing.T, what, min string) {
		t.Helper()
		if min == "" || bigOf(t, min).Cmp(bigOf(t, want)) < 0 {
			t.Errorf("%s: minimum output %q below toAmount %s", what, min, want)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"quote", func(t *testing.T) {
			var q anyQuote
			ts.get(path).decode(t, &q)
			if q.Provider != "pulseroute" {
				t.Fatalf("quote %+v", q)
			}
			reaches(t, "data.quote.minOutput", q.Quote.MinOutput)
		}},
		{"routes", func(t *testing.T) {
			var r struct {
				Routes []struct {
					Tool     string
					Estimate struct{ ToAmountMin string }
				}
			}
			ts.get("/v1/routes?"+strings.TrimPrefix(path, "/v1/quote?")).decode(t, &r)
			if len(r.Routes) != 1 {
				t.Fatalf("routes %+v", r)
			}
			reaches(t, "route "+r.Routes[0].Tool, r.Routes[0].Estimate.ToAmountMin)
		}},
		{"stream", func(t *testing.T) {
			s, env := ts.openStream(streamPath(path))
			if env != nil {
				t.Fatalf("refused: %s", env.Raw)
			}
			routes, best, _ := wantEventOrder(t, s.finish())
			if best.Name != "best" || len(routes) != 1 {
				t.Fatalf("outcome %s after %d routes", best.Name, len(routes))
			}
			var rt struct{ Estimate struct{ ToAmountMin string } }
			var b struct{ Quote struct{ MinOutput string } }
			if err := json.Unmarshal([]byte(routes[0].Data), &rt); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(best.Data), &b); err != nil {
				t.Fatal(err)
			}
			reaches(t, "route event", rt.Estimate.ToAmountMin)
			reaches(t, "best event", b.Quote.MinOutput)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
