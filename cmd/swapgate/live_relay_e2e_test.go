package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	relaystandin "github.com/swapgate/swapgate/internal/standin/relay"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// TestLiveRelayRacesLIFIQuoteE2E runs the real server in live mode against
// the stand-ins of LI.FI and Relay on loopback, both upstreams of the one
// aggregator provider: on USDC Arbitrum → Base, which both serve, they race
// as the provider's two legs and the better route wins, Relay's with its
// tool relay when Relay's stand-in gives more and LI.FI's when LI.FI's
// does, the answer's provider aggregator either way; an exact output and a
// refund address reach Relay as its own parameters (tradeType
// EXACT_OUTPUT, refundTo); Relay's tool is in /v1/tools; and a Relay route
// executed is followed to DONE at Relay's status endpoint (LI.FI's
// stand-in was never told of the swap), with the partner's swap.completed
// webhook.
func TestLiveRelayRacesLIFIQuoteE2E(t *testing.T) {
	_, aggSrv, err := lifistandin.Start(lifistandin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aggSrv.Close)
	rl, relaySrv, err := relaystandin.Start(relaystandin.Config{APIKey: "relay-e2e", StatusPolls: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(relaySrv.Close)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, func(c *app.Config) {
		c.Mode = app.ModeLive
		c.Quote.AggregatorURL = aggSrv.URL
		c.Quote.Upstream = map[string]string{"relay-url": relaySrv.URL, "relay-key": "relay-e2e", "relay-fee-recipient": relayFeeRecipient}
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
	})
	_, key := ts.createPartner("RelayCo", "--swap-fee-bps", "0")
	if env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", webhook.Events(), e2eSecret), withKey(key)); env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}

	type raceAnswer struct {
		Provider string
		Quote    struct {
			ID, Tool           string
			TransactionRequest *struct{ To string }
			Estimate           struct{ ToAmount, ToAmountMin, ApprovalAddress string }
		}
		Timing struct {
			Legs []struct{ Provider, Tool, Outcome string }
		}
	}
	quote := func(t *testing.T, path string) raceAnswer {
		t.Helper()
		var q raceAnswer
		ts.get(path, withKey(key)).decode(t, &q)
		legs := map[string]string{}
		for _, l := range q.Timing.Legs {
			if l.Provider != "aggregator" {
				t.Fatalf("a leg of %s in a race of the aggregator's upstreams: %+v", l.Provider, q.Timing)
			}
			legs[l.Tool] = l.Outcome
		}
		if len(legs) != 2 || legs["lifi"] == "" || legs["relay"] == "" {
			t.Fatalf("legs %+v, want LI.FI's and Relay's", q.Timing.Legs)
		}
		if q.Provider != "aggregator" {
			t.Fatalf("provider %q", q.Provider)
		}
		return q
	}

	tests := []struct {
		name     string
		edgeBps  int
		wantTool func(string) bool
	}{
		{"Relay gives more", 100, func(tool string) bool { return tool == "relay" }},
		{"LI.FI gives more", -100, func(tool string) bool { return tool != "relay" && tool != "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl.SetEdgeBps(tt.edgeBps)
			q := quote(t, arbToBase())
			if !tt.wantTool(q.Quote.Tool) {
				t.Fatalf("the winner's tool is %q", q.Quote.Tool)
			}
			wantTo := strings.ToLower(relaystandin.DefaultRouter)
			if q.Quote.Tool != "relay" {
				wantTo = strings.ToLower(lifistandin.DefaultRouter)
			}
			if q.Quote.TransactionRequest == nil || strings.ToLower(q.Quote.TransactionRequest.To) != wantTo ||
				strings.ToLower(q.Quote.Estimate.ApprovalAddress) != wantTo {
				t.Fatalf("the %s route's transaction %+v, approval %q", q.Quote.Tool, q.Quote.TransactionRequest, q.Quote.Estimate.ApprovalAddress)
			}
		})
	}

	t.Run("exact output and refundTo reach Relay", func(t *testing.T) {
		rl.SetEdgeBps(100)
		const want = "500000000"
		q := quote(t, quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"toAmount", want, "fromAddress", wallet, "toAddress", wallet, "refundTo", refundAddr))
		asked := rl.LastQuote()
		if asked["tradeType"] != "EXACT_OUTPUT" || asked["amount"] != want || !strings.EqualFold(asString(asked["refundTo"]), refundAddr) {
			t.Fatalf("Relay was asked %v", asked)
		}
		if q.Quote.Tool != "relay" || bigOf(t, q.Quote.Estimate.ToAmountMin).Cmp(bigOf(t, want)) < 0 {
			t.Fatalf("exact-output quote %+v", q.Quote)
		}
	})

	t.Run("a partner fee reaches Relay as its appFees", func(t *testing.T) {
		rl.SetEdgeBps(100)
		_, feeKey := ts.createPartner("RelayFeeCo", "--swap-fee-bps", "30")
		if env := ts.putWallet(feeKey, "evm", realWallets[0].addr); env.Status != http.StatusOK && env.Status != http.StatusCreated {
			t.Fatalf("fee wallet: %d %s", env.Status, env.Raw)
		}
		var q raceAnswer
		ts.get(arbToBase(), withKey(feeKey)).decode(t, &q)
		fees, _ := rl.LastQuote()["appFees"].([]any)
		if len(fees) != 1 {
			t.Fatalf("Relay was asked appFees %v", rl.LastQuote()["appFees"])
		}
		fee, _ := fees[0].(map[string]any)
		if !strings.EqualFold(asString(fee["recipient"]), relayFeeRecipient) || asString(fee["fee"]) != "30" {
			t.Fatalf("Relay was asked appFees %v", fees)
		}
	})

	t.Run("tools list Relay", func(t *testing.T) {
		var tl struct {
			Tools []struct{ Key, Type string }
		}
		ts.get("/v1/tools").decode(t, &tl)
		found := false
		for _, b := range tl.Tools {
			found = found || (b.Key == "relay" && b.Type == "bridge")
		}
		if !found {
			t.Fatalf("no relay bridge in %+v", tl.Tools)
		}
	})

	t.Run("a Relay swap followed to DONE", func(t *testing.T) {
		rl.SetEdgeBps(100)
		q := quote(t, arbToBase())
		if q.Quote.Tool != "relay" {
			t.Fatalf("tool %q", q.Quote.Tool)
		}
		hash := "0x" + strings.Repeat("c3", 32)
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": hash}, withKey(key)).decode(t, new(map[string]any))
		var st struct {
			Status, Substatus, Tool string
			Receiving               struct{ TxHash string }
		}
		waitUntil(t, "the Relay swap is DONE", func() bool {
			ts.get("/v1/status?txHash="+hash).decode(t, &st)
			return st.Status == "DONE"
		})
		if st.Substatus != "COMPLETED" || st.Tool != "relay" || st.Receiving.TxHash == "" {
			t.Fatalf("status %+v", st)
		}
		waitUntil(t, "swap.completed is delivered", func() bool {
			for _, p := range rc.events(t) {
				if d, ok := p.Data.(map[string]any); ok && p.Event == webhook.SwapCompleted && asString(d["transactionId"]) == q.Quote.ID {
					return true
				}
			}
			return false
		})
	})

	// Relay's price falls some 100 bps between the quote and its execute:
	// at the default slippage (0.5%) the route is below the quote's
	// toAmountMin, SLIPPAGE_ERROR, its new quote at Relay's current price
	// executing; quoted with slippage=0.03 (Relay's minimumAmount 3% down)
	// the same fall is PRICE_CHANGED.
	t.Run("execute after Relay's price fell", func(t *testing.T) {
		for _, tt := range []struct {
			slippage, code string
			status         int
		}{
			{"", "SLIPPAGE_ERROR", http.StatusBadRequest},
			{"0.03", "PRICE_CHANGED", http.StatusConflict},
		} {
			rl.SetEdgeBps(100)
			var extra []string
			if tt.slippage != "" {
				extra = []string{"slippage", tt.slippage}
			}
			q := quote(t, arbToBase(extra...))
			if q.Quote.Tool != "relay" {
				t.Fatalf("tool %q", q.Quote.Tool)
			}
			rl.SetEdgeBps(0)
			env := ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}, withKey(key))
			env.wantError(t, tt.status, tt.code, "")
			d := env.Error.Details
			current := bigOf(t, asString(d["currentToAmount"]))
			if below := current.Cmp(bigOf(t, q.Quote.Estimate.ToAmountMin)) < 0; below != (tt.code == "SLIPPAGE_ERROR") ||
				(tt.code == "SLIPPAGE_ERROR" && asString(d["toAmountMin"]) != q.Quote.Estimate.ToAmountMin) {
				t.Fatalf("slippage %q: %s details %v (quoted %s, min %s)", tt.slippage, tt.code, d, q.Quote.Estimate.ToAmount, q.Quote.Estimate.ToAmountMin)
			}
			var ex struct {
				QuoteID    string
				Tool       string
				PriceCheck *struct{ DriftBps int64 }
			}
			ts.post("/v1/execute", map[string]string{"quoteId": asString(d["newQuoteId"])}, withKey(key)).decode(t, &ex)
			if ex.QuoteID != asString(d["newQuoteId"]) || ex.Tool != "relay" || ex.PriceCheck == nil || ex.PriceCheck.DriftBps > 5 {
				t.Fatalf("execute of the new quote %+v", ex)
			}
		}
	})
}

// relayFeeRecipient is the operator's --relay-fee-recipient in the tests.
const relayFeeRecipient = "0x1f9840a85d5af5bf1d1762f925bdaddc4201f984"

// TestSandboxRelayReplacesTheSandboxAggregatorQuoteE2E: in sandbox mode,
// --relay-url replaces the sandbox market's aggregator as --aggregator-url
// does: an EVM pair is quoted by Relay's stand-in, tool relay, the other
// providers staying the sandbox's.
func TestSandboxRelayReplacesTheSandboxAggregatorQuoteE2E(t *testing.T) {
	rl, relaySrv, err := relaystandin.Start(relaystandin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(relaySrv.Close)
	ts := startServer(t, func(c *app.Config) {
		c.Quote.Upstream = map[string]string{"relay-url": relaySrv.URL, "relay-fee-recipient": relayFeeRecipient}
	})
	var q shapeA
	ts.get(arbToBase()).decode(t, &q)
	if q.Provider != "aggregator" || q.Quote.Tool != "relay" || rl.QuoteCount() != 1 {
		t.Fatalf("quote %s/%s, Relay asked %d times", q.Provider, q.Quote.Tool, rl.QuoteCount())
	}
	var in struct {
		Provider string
		Quote    struct{ Tool string }
	}
	ts.get(quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
		"fromAmount", "250000000", "fromAddress", wallet, "toAddress", tonAddress)).decode(t, &in)
	if in.Provider != "intents" || !strings.HasPrefix(in.Quote.Tool, "sbx-") {
		t.Fatalf("intents quote %+v", in)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
