package main

import (
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestLiveQuoteRefusesInvalidAggregatorAnswers runs the real server in
// live mode against the upstream stand-ins, the LI.FI one misbehaving one
// way at a time, and holds the server to refusing the aggregator's leg
// whole with UPSTREAM_ERROR and the reason: on a pair 1Click also serves,
// the quote is 1Click's and data.timing shows the aggregator's leg failed
// with its code and reason; on an EVM pair only the aggregator serves, the
// answer is the race's failure, 502 UPSTREAM_ERROR with the same reason in
// details.reasons. No answer is a 200 carrying what LI.FI sent.
func TestLiveQuoteRefusesInvalidAggregatorAnswers(t *testing.T) {
	up := startLiveStandins(t)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, func(c *app.Config) {
		up.configure(c)
		// Every row fails the aggregator's leg on purpose: its breaker
		// must not open and turn the next rows' legs into skipped ones.
		c.Quote.BreakerWindow, c.Quote.BreakerMinCalls = 1000, 1000
	})
	tx := func(key string, v any) func(map[string]any) {
		return func(step map[string]any) { step["transactionRequest"].(map[string]any)[key] = v }
	}
	cases := []struct {
		name   string
		tamper func(map[string]any)
		reason string // the start of the leg's reason after the upstream's noun
	}{
		{"to is a script", tx("to", "javascript:alert(1)"), `transactionRequest.to: "javascript:alert(1)" is not a valid evm address`},
		{"to is short", tx("to", "0x1234"), `transactionRequest.to: "0x1234" is not a valid evm address`},
		{"to is not an address", tx("to", "not-an-address"), `transactionRequest.to: "not-an-address" is not a valid evm address`},
		{"to is empty", tx("to", ""), "transactionRequest.to: missing"},
		{"no transactionRequest", func(step map[string]any) { delete(step, "transactionRequest") }, "transactionRequest: missing"},
		{"toAmount above 2^256-1", func(step map[string]any) {
			step["estimate"].(map[string]any)["toAmount"] = "1" + strings.Repeat("0", 80)
		}, "estimate.toAmount: "},
	}
	const noun = "the aggregator upstream sent an invalid answer: "
	type leg struct{ Provider, Tool, Outcome, Code, Reason string }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.agg.SetTamper(tc.tamper)
			t.Cleanup(func() { up.agg.SetTamper(nil) })

			// A pair both upstreams serve: 1Click's quote, the
			// aggregator's leg failed with its reason.
			var q struct {
				Provider string
				Quote    struct {
					TransactionRequest *struct{ To string }
				}
				Timing struct{ Legs []leg }
			}
			e := ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
				"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress))
			e.decode(t, &q)
			// 1Click's deposit of an ERC-20 is a transfer on the token.
			if q.Provider != "intents" || q.Quote.TransactionRequest == nil || !strings.EqualFold(q.Quote.TransactionRequest.To, usdcEth) {
				t.Fatalf("quote from %q: %s", q.Provider, e.Raw)
			}
			var agg *leg
			for i := range q.Timing.Legs {
				if q.Timing.Legs[i].Provider == "aggregator" {
					agg = &q.Timing.Legs[i]
				}
			}
			if agg == nil || agg.Outcome != "failed" || agg.Code != "UPSTREAM_ERROR" || !strings.HasPrefix(agg.Reason, noun+tc.reason) {
				t.Fatalf("aggregator leg %+v, want failed UPSTREAM_ERROR %q", agg, noun+tc.reason)
			}

			// An EVM pair only the aggregator serves: the race's failure.
			e = ts.get(arbToBase())
			e.wantError(t, 502, "UPSTREAM_ERROR", "")
			reasons, _ := e.Error.Details["reasons"].([]any)
			if len(reasons) != 1 {
				t.Fatalf("details %v", e.Error.Details)
			}
			r, _ := reasons[0].(map[string]any)
			if r["provider"] != "aggregator" || r["reason"] != "UPSTREAM_ERROR" || !strings.HasPrefix(r["message"].(string), noun+tc.reason) {
				t.Fatalf("reason %v, want %q", r, noun+tc.reason)
			}
		})
	}

	// The stand-in answering as it should again, the aggregator quotes.
	var q shapeA
	ts.get(arbToBase()).decode(t, &q)
	if q.Provider != "aggregator" || q.Quote.TransactionRequest == nil {
		t.Fatalf("untampered quote %+v", q)
	}
}
