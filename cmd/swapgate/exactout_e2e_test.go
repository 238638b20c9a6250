package main

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// refundAddr is a refund address on the EVM source chains, apart from the
// wallet that sends.
const refundAddr = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4"

// exactAction is what anyQuote leaves out of a quote: Shape A's action,
// and the race's timing.
type exactAction struct {
	Quote struct {
		Action struct {
			FromAmount, ToAmount, RefundTo string
		}
	}
	Timing struct {
		Legs []struct{ Provider, Tool, Outcome, Reason string }
	}
}

// TestExactOutputQuotesExecute quotes toAmount instead of fromAmount on an
// aggregator pair (a swap, and a bridge followed to its delivery), an
// intents pair (a deposit followed to SUCCESS) and pulseroute's direct pairs
// (into USDCh, and swapped on PulseX after the bridge) through the real server, executes each on the sandbox chains and checks
// that what arrives is at least toAmount: estimate.toAmountMin >= toAmount,
// the input the quote asks for is the one its transaction spends, and the
// delivery (the receiver's balance, the deposit's amountOut, the warp
// route's bridged amount, the PulseX swap's minOutput the sender contract
// sends to 369) reaches toAmount.
func TestExactOutputQuotesExecute(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)

	// quoteExact asks for an exact output and checks what every exact
	// answer keeps: the action echoes toAmount, its input is the
	// estimate's, and toAmountMin reaches toAmount.
	quoteExact := func(t *testing.T, toAmount string, kv ...string) (*anyQuote, exactAction) {
		t.Helper()
		path := quotePath(append(kv, "toAmount", toAmount)...)
		env := ts.get(path)
		var q anyQuote
		env.decode(t, &q)
		var a exactAction
		env.decode(t, &a)
		if q.Quote.Type != "multi-step" && q.Quote.SenderContract == "" {
			// Shape A.
			if a.Quote.Action.ToAmount != toAmount || a.Quote.Action.FromAmount != q.Quote.Estimate.FromAmount {
				t.Fatalf("action %+v, estimate from %s", a.Quote.Action, q.Quote.Estimate.FromAmount)
			}
			if bigOf(t, q.Quote.Estimate.ToAmountMin).Cmp(bigOf(t, toAmount)) < 0 {
				t.Fatalf("toAmountMin %s below toAmount %s", q.Quote.Estimate.ToAmountMin, toAmount)
			}
		}
		return &q, a
	}

	t.Run("aggregator swap on Arbitrum, USDC to 0.05 WETH", func(t *testing.T) {
		const want = "50000000000000000"
		q, _ := quoteExact(t, want, "fromChain", "42161", "toChain", "42161", "fromToken", usdcArb, "toToken", wethArb,
			"fromAddress", wallet, "toAddress", receiverAddr)
		if q.Provider != "aggregator" {
			t.Fatalf("provider %s", q.Provider)
		}
		ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, q.in(t))
		walletBefore, before := ts.balance(t, 42161, wallet, usdcArb), ts.balance(t, 42161, receiverAddr, wethArb)
		if a := ts.broadcast(t, 42161, wallet, q.tx(t)); a.Status != "success" {
			t.Fatalf("broadcast %+v", a)
		}
		got := new(big.Int).Sub(ts.balance(t, 42161, receiverAddr, wethArb), before)
		spent := new(big.Int).Sub(walletBefore, ts.balance(t, 42161, wallet, usdcArb))
		if got.Cmp(bigOf(t, want)) < 0 || got.Cmp(bigOf(t, q.Quote.Estimate.ToAmount)) != 0 || spent.Cmp(q.in(t)) != 0 {
			t.Fatalf("the receiver got %s WETH (want at least %s, quoted %s) for %s USDC (quoted %s)", got, want,
				q.Quote.Estimate.ToAmount, spent, q.in(t))
		}
	})

	t.Run("aggregator bridge Arbitrum to Base, 150 USDC delivered", func(t *testing.T) {
		const want = "150000000"
		q, _ := quoteExact(t, want, "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge")
		ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, q.in(t))
		before := ts.balance(t, 8453, receiverAddr, usdcBase)
		b := ts.broadcast(t, 42161, wallet, q.tx(t))
		if b.Status != "success" {
			t.Fatalf("broadcast %+v", b)
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &struct{}{})
		var st statusBody
		waitUntil(t, "the bridge delivers", func() bool {
			ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
			return st.Status == swap.StatusDone
		})
		got := new(big.Int).Sub(ts.balance(t, 8453, receiverAddr, usdcBase), before)
		if st.Substatus != swap.Completed || got.Cmp(bigOf(t, want)) < 0 {
			t.Fatalf("status %+v; the receiver got %s, want at least %s", st, got, want)
		}
	})

	t.Run("intents Ethereum to Solana, 250 USDC out of the deposit", func(t *testing.T) {
		const want = "250000000"
		q, _ := quoteExact(t, want, "fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
			"fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents")
		if q.Provider != "intents" || q.Quote.DepositAddress == "" {
			t.Fatalf("intents quote %+v", q)
		}
		before := ts.balance(t, 1, q.Quote.DepositAddress, usdcEth)
		b := ts.broadcast(t, 1, wallet, q.tx(t))
		if b.Status != "success" {
			t.Fatalf("deposit %+v", b)
		}
		if got := new(big.Int).Sub(ts.balance(t, 1, q.Quote.DepositAddress, usdcEth), before); got.Cmp(q.in(t)) != 0 {
			t.Fatalf("deposited %s, the quote asks %s", got, q.in(t))
		}
		var st struct {
			Status      string
			SwapDetails struct{ AmountIn, AmountOut string }
		}
		ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &st)
		waitUntil(t, "the deposit succeeds", func() bool {
			ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
			return st.Status == swap.DepositSuccess
		})
		if st.SwapDetails.AmountIn != q.in(t).String() || bigOf(t, st.SwapDetails.AmountOut).Cmp(bigOf(t, want)) < 0 {
			t.Fatalf("deposit %+v, want at least %s out", st, want)
		}
	})

	for _, tc := range []struct {
		name, toToken, want string
		// swap: the route swaps on PulseX after the bridge, so what
		// reaches the recipient is bounded by the sender contract's
		// minOutput rather than the bridged USDCh.
		swap bool
	}{
		{"pulseroute direct inbound, 100 USDCh bridged to 369", usdch, "100000000", false},
		{"pulseroute direct inbound swapped on PulseX, 2,000,000 PLSX", plsx369, "2000000000000000000000000", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := quoteExact(t, tc.want, "fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", tc.toToken,
				"fromAddress", wallet, "toAddress", wallet)
			if q.Provider != "pulseroute" || q.Quote.SenderContract == "" {
				t.Fatalf("direct quote %+v", q)
			}
			if bigOf(t, q.Quote.MinOutput).Cmp(bigOf(t, tc.want)) < 0 || q.in(t).Cmp(bigOf(t, q.Quote.FromAmount)) != 0 {
				t.Fatalf("direct quote from %s min %s, want at least %s", q.Quote.FromAmount, q.Quote.MinOutput, tc.want)
			}
			ts.approve(t, 42161, wallet, usdcArb, q.Quote.SenderContract, q.in(t))
			walletBefore := ts.balance(t, 42161, wallet, usdcArb)
			b := ts.broadcast(t, 42161, wallet, q.tx(t))
			if b.Status != "success" {
				t.Fatalf("broadcast %+v", b)
			}
			if spent := new(big.Int).Sub(walletBefore, ts.balance(t, 42161, wallet, usdcArb)); spent.Cmp(q.in(t)) != 0 {
				t.Fatalf("spent %s, quoted %s", spent, q.in(t))
			}
			// What the sender contract committed to on 369: the USDCh the
			// warp route mints one for one (bridged), and the least the
			// PulseX swap there must deliver (minOutput), as its
			// InboundSent event says.
			sent := inboundSent(t, ts.receipt(t, b.TxHash))
			delivered := sent["bridged"].(*big.Int)
			if tc.swap {
				delivered = sent["minOutput"].(*big.Int)
			}
			if delivered.Cmp(bigOf(t, tc.want)) < 0 {
				t.Fatalf("InboundSent %v: at least %s delivered, want %s", sent, delivered, tc.want)
			}
		})
	}

	t.Run("routes: every candidate reaches toAmount with its own input", func(t *testing.T) {
		const want = "400000000"
		v := url.Values{}
		for _, kv := range [][2]string{{"fromChain", "1"}, {"toChain", "1151111081099710"}, {"fromToken", usdcEth},
			{"toToken", usdcSol}, {"toAmount", want}, {"fromAddress", wallet}, {"toAddress", solAddress}} {
			v.Set(kv[0], kv[1])
		}
		var r struct {
			Routes []struct {
				Tool     string
				Action   struct{ FromAmount, ToAmount string }
				Estimate struct {
					FromAmount, ToAmountMin string
				}
			}
		}
		ts.get("/v1/routes?"+v.Encode()).decode(t, &r)
		if len(r.Routes) < 2 {
			t.Fatalf("routes %+v", r)
		}
		for _, rt := range r.Routes {
			if rt.Action.ToAmount != want || rt.Action.FromAmount != rt.Estimate.FromAmount ||
				bigOf(t, rt.Estimate.ToAmountMin).Cmp(bigOf(t, want)) < 0 {
				t.Errorf("route %s: %+v", rt.Tool, rt)
			}
		}
	})

	t.Run("pulseroute multi-step cannot size an exact output: NO_ROUTE_FOUND with the reason", func(t *testing.T) {
		env := ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", "native",
			"toAmount", "1000000000000000000000", "fromAddress", wallet, "toAddress", wallet))
		env.wantError(t, http.StatusNotFound, "NO_ROUTE_FOUND", "")
		reasons, _ := env.Error.Details["reasons"].([]any)
		if len(reasons) != 1 || str(reasons[0].(map[string]any)["reason"]) != "EXACT_OUTPUT_UNSUPPORTED" ||
			!strings.Contains(str(reasons[0].(map[string]any)["message"]), "multi-step") {
			t.Fatalf("reasons %v", env.Error.Details)
		}
	})
}

// inboundSent reads the sender contract's InboundSent event in a receipt:
// its unindexed fields by name.
func inboundSent(t *testing.T, r receiptAnswer) map[string]any {
	t.Helper()
	ev := pulseroute.ABI().Events["InboundSent"]
	for _, l := range r.Logs {
		if len(l.Topics) == 0 || !strings.EqualFold(l.Topics[0], ev.ID.Hex()) {
			continue
		}
		data, err := hex.DecodeString(strings.TrimPrefix(l.Data, "0x"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := ev.Inputs.NonIndexed().UnpackIntoMap(m, data); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["bridged"].(*big.Int); !ok {
			t.Fatalf("InboundSent %v has no bridged amount", m)
		}
		if _, ok := m["minOutput"].(*big.Int); !ok {
			t.Fatalf("InboundSent %v has no minOutput", m)
		}
		return m
	}
	t.Fatalf("no InboundSent in %+v", r.Logs)
	return nil
}

// TestQuoteAmountAndRefundToRefusals: both amounts or neither, a malformed
// toAmount and a refundTo that is not a source-chain address are refused
// with INVALID_PARAMS naming the parameter, on /v1/quote, /v1/routes and
// /v1/quote/stream alike.
func TestQuoteAmountAndRefundToRefusals(t *testing.T) {
	ts := sandboxServer(t, "")
	base := []string{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAddress", wallet}
	tests := []struct {
		name  string
		extra []string
		param string
	}{
		{"neither amount", nil, "fromAmount"},
		{"both amounts", []string{"fromAmount", "1000000", "toAmount", "1000000"}, "toAmount"},
		{"toAmount zero", []string{"toAmount", "0"}, "toAmount"},
		{"toAmount not a number", []string{"toAmount", "1e6"}, "toAmount"},
		{"refundTo on another chain family", []string{"fromAmount", "1000000", "refundTo", solAddress}, "refundTo"},
		{"refundTo malformed", []string{"toAmount", "1000000", "refundTo", "0x1234"}, "refundTo"},
	}
	for _, tt := range tests {
		q := url.Values{}
		kv := append(append([]string{}, base...), tt.extra...)
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		for _, path := range []string{"/v1/quote", "/v1/routes", "/v1/quote/stream"} {
			env := ts.get(path + "?" + q.Encode())
			env.wantError(t, http.StatusBadRequest, "INVALID_PARAMS", tt.param)
			if tt.name == "neither amount" || tt.name == "both amounts" {
				if ps, _ := env.Error.Details["params"].([]any); len(ps) != 2 || ps[0] != "fromAmount" || ps[1] != "toAmount" {
					t.Errorf("%s %s: details %v", path, tt.name, env.Error.Details)
				}
			}
		}
	}
}

// TestRefundToCarriedToRefunds: a quote's refundTo travels with it into the
// swap or intents deposit it becomes. When the sandbox bridge fails, the
// input goes back to refundTo on the source chain, not to the sender, and
// the status, execute and deposit answers say so (refundTo, refundedTo);
// without refundTo the refund goes to fromAddress, as before, and the
// answers name it as where the refund went. The partner's deposit.failed
// and swap.completed webhooks say where a refund went too.
func TestRefundToCarriedToRefunds(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, func(c *app.Config) { c.SandboxBridgeFailureRate = 1 })
	key := partnerWithHooks(t, ts, rc)
	// eventOf waits for the named webhook event of a quote and returns
	// its data.
	eventOf := func(t *testing.T, name, quoteID string) map[string]any {
		t.Helper()
		var data map[string]any
		waitUntil(t, name+" of "+quoteID, func() bool {
			for _, p := range rc.events(t) {
				if d, ok := p.Data.(map[string]any); ok && p.Event == name && d["transactionId"] == quoteID {
					data = d
					return true
				}
			}
			return false
		})
		return data
	}

	t.Run("intents deposit refunded to refundTo", func(t *testing.T) {
		var q anyQuote
		env := ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
			"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents", "refundTo", refundAddr), withKey(key))
		env.decode(t, &q)
		var a exactAction
		env.decode(t, &a)
		if a.Quote.Action.RefundTo != refundAddr || q.Quote.DepositAddress == "" {
			t.Fatalf("quote action %+v deposit %q", a.Quote.Action, q.Quote.DepositAddress)
		}
		var ex struct {
			Deposit struct{ Address, RefundTo string }
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}).decode(t, &ex)
		if ex.Deposit.Address != q.Quote.DepositAddress || ex.Deposit.RefundTo != refundAddr {
			t.Fatalf("execute's deposit target %+v", ex.Deposit)
		}
		type depositStatus struct{ Status, RefundTo, RefundedTo string }
		var st depositStatus
		ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
		if st.Status != swap.DepositPending || st.RefundTo != refundAddr || st.RefundedTo != "" {
			t.Fatalf("pending deposit %+v", st)
		}
		refundBefore, walletBefore := ts.balance(t, 1, refundAddr, usdcEth), ts.balance(t, 1, wallet, usdcEth)
		b := ts.broadcast(t, 1, wallet, q.tx(t))
		if b.Status != "success" {
			t.Fatalf("deposit %+v", b)
		}
		ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &st)
		if st.RefundTo != refundAddr || st.RefundedTo != "" {
			t.Fatalf("submitted %+v", st)
		}
		waitUntil(t, "the deposit is refunded", func() bool {
			ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
			return st.Status == swap.DepositRefunded
		})
		if st.RefundTo != refundAddr || st.RefundedTo != refundAddr {
			t.Fatalf("refunded deposit %+v", st)
		}
		var sw struct{ Status, Substatus, RefundTo, RefundedTo string }
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &sw)
		if sw.Substatus != swap.Refunded || sw.RefundTo != refundAddr || sw.RefundedTo != refundAddr {
			t.Fatalf("swap status %+v", sw)
		}
		refunded := new(big.Int).Sub(ts.balance(t, 1, refundAddr, usdcEth), refundBefore)
		walletGot := new(big.Int).Sub(ts.balance(t, 1, wallet, usdcEth), walletBefore)
		if refunded.String() != "300000000" || walletGot.String() != "-300000000" {
			t.Fatalf("refundTo got %s back, the wallet moved %s", refunded, walletGot)
		}
		if d := eventOf(t, webhook.DepositFailed, q.Quote.ID); d["status"] != swap.DepositRefunded || d["refundedTo"] != refundAddr {
			t.Fatalf("%s data %v", webhook.DepositFailed, d)
		}
		// deposit.received carries the status the deposit was first seen
		// in: here (bridges at once) already REFUNDED, and then where it
		// went; a deposit seen under way names no refund.
		if d := eventOf(t, webhook.DepositReceived, q.Quote.ID); (d["status"] == swap.DepositRefunded) != (d["refundedTo"] == refundAddr) {
			t.Fatalf("%s data %v", webhook.DepositReceived, d)
		}
	})

	t.Run("aggregator bridge refunded to fromAddress without refundTo", func(t *testing.T) {
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "120000000", "fromAddress", wallet, "toAddress", wallet, "tools", "sbx-arcbridge")).decode(t, &q)
		ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(120000000))
		b := ts.broadcast(t, 42161, wallet, q.tx(t))
		afterSend := ts.balance(t, 42161, wallet, usdcArb)
		var ex struct {
			Status struct{ RefundTo, RefundedTo string }
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &ex)
		if ex.Status.RefundTo != "" || ex.Status.RefundedTo != "" {
			t.Fatalf("execute's status %+v", ex.Status)
		}
		var sw struct{ Status, Substatus, RefundTo, RefundedTo string }
		waitUntil(t, "the refund", func() bool {
			ts.get("/v1/status?txHash="+b.TxHash).decode(t, &sw)
			return sw.Status == swap.StatusDone
		})
		refunded := new(big.Int).Sub(ts.balance(t, 42161, wallet, usdcArb), afterSend)
		if sw.Substatus != swap.Refunded || sw.RefundTo != "" || sw.RefundedTo != wallet || refunded.String() != "120000000" {
			t.Fatalf("status %+v, the wallet got %s back", sw, refunded)
		}
	})

	t.Run("aggregator bridge refunded to refundTo", func(t *testing.T) {
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "110000000", "fromAddress", wallet, "toAddress", wallet, "tools", "sbx-arcbridge", "refundTo", refundAddr), withKey(key)).decode(t, &q)
		ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(110000000))
		refundBefore := ts.balance(t, 42161, refundAddr, usdcArb)
		b := ts.broadcast(t, 42161, wallet, q.tx(t))
		afterSend := ts.balance(t, 42161, wallet, usdcArb)
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &struct{}{})
		var sw struct{ Status, Substatus, RefundTo, RefundedTo string }
		waitUntil(t, "the refund", func() bool {
			ts.get("/v1/status?txHash="+b.TxHash).decode(t, &sw)
			return sw.Status == swap.StatusDone
		})
		refunded := new(big.Int).Sub(ts.balance(t, 42161, refundAddr, usdcArb), refundBefore)
		if sw.Substatus != swap.Refunded || sw.RefundTo != refundAddr || sw.RefundedTo != refundAddr ||
			refunded.String() != "110000000" || ts.balance(t, 42161, wallet, usdcArb).Cmp(afterSend) != 0 {
			t.Fatalf("status %+v, refundTo got %s back", sw, refunded)
		}
		if d := eventOf(t, webhook.SwapCompleted, q.Quote.ID); d["status"] != swap.StatusDone || d["refundedTo"] != refundAddr {
			t.Fatalf("%s data %v", webhook.SwapCompleted, d)
		}
	})
}

// TestExactOutputStream: /v1/quote/stream takes toAmount as /v1/quote
// does: every route event carries its own input and reaches toAmount, and
// the best event is the exact-output quote, the stream held to the
// document event by event.
func TestExactOutputStream(t *testing.T) {
	ts := sandboxServer(t, "")
	const want = "400000000"
	s, env := ts.openStream(streamPath(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth,
		"toToken", usdcSol, "toAmount", want, "fromAddress", wallet, "toAddress", solAddress)))
	if env != nil {
		t.Fatalf("refused: %s", env.Raw)
	}
	routes, best, _ := wantEventOrder(t, s.finish())
	if best.Name != "best" || len(routes) < 2 {
		t.Fatalf("outcome %s after %d routes", best.Name, len(routes))
	}
	type shapeAQuote struct {
		Tool     string
		Action   struct{ FromAmount, ToAmount string }
		Estimate struct{ FromAmount, ToAmountMin string }
	}
	check := func(what string, q shapeAQuote) {
		if q.Action.ToAmount != want || q.Action.FromAmount != q.Estimate.FromAmount || bigOf(t, q.Estimate.ToAmountMin).Cmp(bigOf(t, want)) < 0 {
			t.Errorf("%s %s: %+v", what, q.Tool, q)
		}
	}
	for _, ev := range routes {
		var q shapeAQuote
		if err := json.Unmarshal([]byte(ev.Data), &q); err != nil {
			t.Fatal(err)
		}
		check("route", q)
	}
	var b struct{ Quote shapeAQuote }
	if err := json.Unmarshal([]byte(best.Data), &b); err != nil {
		t.Fatal(err)
	}
	check("best", b.Quote)
}
