package main

import (
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// executePriceCheck is the priceCheck of an execute's answer.
type executePriceCheck struct {
	CurrentToAmount string
	DriftBps        int64
}

// An execute without txHash prices the quoted route again and answers with
// what it found; maxPriceDriftBps is an integer from 0 to 10000, anything
// else refused naming it; an execute with txHash is not checked (the
// transaction is on its way).
func TestExecutePriceCheck(t *testing.T) {
	e := newScenarioEnv(t, nil)
	from := scenarioAccount("price-check")
	q := e.bridgeQuote(t, "", from, from)

	var ex struct{ PriceCheck *executePriceCheck }
	env := e.ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}, withKey(e.key))
	env.decode(t, &ex)
	// The sandbox's prices move a couple of basis points a minute at most.
	if ex.PriceCheck == nil || ex.PriceCheck.DriftBps > 5 || ex.PriceCheck.DriftBps < -5 ||
		bigOf(t, ex.PriceCheck.CurrentToAmount).Sign() <= 0 {
		t.Fatalf("priceCheck %+v in %s", ex.PriceCheck, env.Raw)
	}
	for _, ok := range []string{`null`, `50`, `10000`} {
		body := `{"quoteId":"` + q.Quote.ID + `","maxPriceDriftBps":` + ok + `}`
		if env := e.ts.do(http.MethodPost, "/v1/execute", []byte(body), withKey(e.key)); env.Status != http.StatusOK {
			t.Fatalf("maxPriceDriftBps %s: %d %s", ok, env.Status, env.Raw)
		}
	}
	for _, bad := range []string{`-1`, `10001`, `"50"`, `1.5`, `5e1`, `true`, `[]`, `{}`} {
		body := `{"quoteId":"` + q.Quote.ID + `","maxPriceDriftBps":` + bad + `}`
		e.ts.do(http.MethodPost, "/v1/execute", []byte(body), withKey(e.key)).wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "maxPriceDriftBps")
	}

	b := e.sendSwap(t, q, from)
	env = e.ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(e.key))
	var tracked struct {
		PriceCheck json.RawMessage
		Status     *statusBody
	}
	env.decode(t, &tracked)
	if tracked.PriceCheck != nil || tracked.Status == nil {
		t.Fatalf("execute with txHash: %s", env.Raw)
	}
}

// Every shape of quote prices again at execute: Shape A (aggregator,
// intents, a dry quote), pulseroute's direct Shape B and multi-step Shape C.
func TestExecutePriceCheckEveryShape(t *testing.T) {
	ts := sandboxServer(t, "")
	for _, query := range [][]string{
		{"fromChain", "42161", "toChain", "42161", "fromToken", usdcArb, "toToken", wethArb, "fromAmount", "300000000", "fromAddress", wallet, "toAddress", receiverAddr},
		{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAmount", "200000000", "fromAddress", wallet, "slippage", "0.01"},
		{"fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol, "fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"},
		{"fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch, "fromAmount", "200000000", "fromAddress", wallet, "toAddress", wallet},
		{"fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", "native", "fromAmount", "200000000000000000", "fromAddress", wallet, "toAddress", wallet},
		{"fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase, "fromAmount", "60000000", "fromAddress", wallet, "toAddress", wallet},
	} {
		q := ts.quote(t, query...)
		var ex struct {
			Provider   string
			PriceCheck *executePriceCheck
		}
		env := ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID})
		env.decode(t, &ex)
		if ex.PriceCheck == nil || ex.PriceCheck.DriftBps > 5 || ex.PriceCheck.DriftBps < -5 || ex.Provider != q.Provider {
			t.Fatalf("%v: %s", query, env.Raw)
		}
	}
}

// A route that cannot be priced again (its tool failing) refuses the
// execute with SERVICE_UNAVAILABLE, reason PRICE_CHECK_FAILED, the quote
// staying executable; maxPriceDriftBps 10000, which accepts any price,
// proceeds without a check.
func TestExecutePriceCheckFailure(t *testing.T) {
	e := newScenarioEnv(t, func(c *app.Config) {
		c.Quote.SandboxTools = map[string]sandbox.ToolConfig{"sbx-arcbridge": {FailureRate: 0.5}}
		c.Quote.NoBreakers = true
	})
	from := scenarioAccount("price-check-failure")
	// Whether a quote fails is a hash of its id: half the quotes and half
	// the re-pricings fail, so a few tries see both.
	failed, unchecked := false, false
	for try := 0; try < 60 && !(failed && unchecked); try++ {
		var q anyQuote
		env := e.scenarioQuote("", "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "100000000", "fromAddress", from, "tools", "sbx-arcbridge")
		if env.Status != http.StatusOK {
			continue
		}
		env.decode(t, &q)
		env = e.ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}, withKey(e.key))
		if env.Status == http.StatusOK {
			continue
		}
		env.wantError(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "")
		if d := env.Error.Details; d["reason"] != "PRICE_CHECK_FAILED" || d["cause"] != "UPSTREAM_ERROR" || d["quoteId"] != q.Quote.ID {
			t.Fatalf("details %v", d)
		}
		failed = true
		for range 20 {
			var ex struct{ PriceCheck json.RawMessage }
			env := e.ts.post("/v1/execute", map[string]any{"quoteId": q.Quote.ID, "maxPriceDriftBps": 10000}, withKey(e.key))
			env.decode(t, &ex)
			if ex.PriceCheck == nil {
				unchecked = true
				break
			}
		}
	}
	if !failed || !unchecked {
		t.Fatalf("saw a failed price check %v, an execute at 10000 without one %v", failed, unchecked)
	}
}

// The header's refusals: an unknown value lists the allowed ones for what
// it is sent with; live mode refuses the header.
func TestSandboxScenarioHeaderRefusals(t *testing.T) {
	e := newScenarioEnv(t, nil)
	allowed := func(k scenario.Kind) []any {
		var out []any
		for _, n := range scenario.Allowed(k) {
			out = append(out, string(n))
		}
		return out
	}
	for _, path := range []string{"/v1/quote", "/v1/routes"} {
		for _, v := range []string{"explode", "REFUND", "payment-failed"} {
			env := e.ts.get(path+strings.TrimPrefix(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
				"fromAmount", "100000000", "fromAddress", wallet), "/v1/quote"), withHeader(scenario.Header, v))
			env.wantError(t, http.StatusBadRequest, "INVALID_PARAMS", scenario.Header)
			if got, _ := env.Error.Details["allowed"].([]any); !slices.Equal(got, allowed(scenario.Quote)) {
				t.Fatalf("%s %s: allowed %v", path, v, env.Error.Details["allowed"])
			}
		}
	}
	env := e.ts.post("/v1/onramp/checkout", onrampCheckoutBody("bad-scenario", nil), withHeader(scenario.Header, "refund"))
	env.wantError(t, http.StatusBadRequest, "INVALID_PARAMS", scenario.Header)
	if got, _ := env.Error.Details["allowed"].([]any); !slices.Equal(got, allowed(scenario.Onramp)) {
		t.Fatalf("on-ramp allowed %v", env.Error.Details["allowed"])
	}

	live := startServer(t, liveWithAggregator(t))
	live.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", wallet), withHeader(scenario.Header, "refund")).
		wantError(t, http.StatusBadRequest, "INVALID_PARAMS", scenario.Header)
}

// A quote's scenario is kept with its ticket, not in memory: a quote made
// before a restart plays it after, and so does its swap, tracked across a
// second restart.
func TestScenarioFlowsSurviveRestart(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, func(c *app.Config) { c.SandboxBridgeScale = scenarioBridgeScale * 10 })
	dir := ts.dir
	from := scenarioAccount("restart")
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", from, "tools", "sbx-arcbridge"), withHeader(scenario.Header, "refund")).decode(t, &q)
	ts.approve(t, 42161, from, usdcArb, *q.Quote.Estimate.ApprovalAddress, q.in(t))
	b := ts.broadcast(t, 42161, from, q.tx(t))
	ts.stop()

	ts = flowServer(t, rc, func(c *app.Config) { c.DataDir = dir; c.SandboxBridgeScale = 1000 })
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &struct{}{})
	ts.stop()

	ts = flowServer(t, rc, func(c *app.Config) { c.DataDir = dir })
	var st statusBody
	waitUntil(t, "the refund after the restarts", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	if st.Substatus != swap.Refunded || st.Receiving.ChainID != 42161 {
		t.Fatalf("status %+v", st)
	}
}

// A streamed quote plays the scenario too: upstream-error streams no
// route and ends with the error event; an unknown value is refused before
// the stream, in the envelope.
func TestSandboxScenarioStreamedQuote(t *testing.T) {
	ts := sandboxServer(t, "")
	s, refused := ts.openStream(streamPath(arbToBase()), withHeader(scenario.Header, "upstream-error"))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	routes, outcome, _ := wantEventOrder(t, s.finish())
	if len(routes) != 0 || outcome.Name != "error" || !strings.Contains(outcome.Data, `"code":"UPSTREAM_ERROR"`) {
		t.Fatalf("%d routes, %s %s", len(routes), outcome.Name, outcome.Data)
	}
	_, refused = ts.openStream(streamPath(arbToBase()), withHeader(scenario.Header, "nope"))
	refused.wantError(t, http.StatusBadRequest, "INVALID_PARAMS", scenario.Header)
}

// An exact-output quote whose price moved below its toAmountMin (the
// price-drift scenario at the default slippage) is refused with
// SLIPPAGE_ERROR too, even allowing any drift: its transaction spends the
// sized input and would revert. Its new quote is exact-output again: the
// same toAmount, its input sized at the moved price (more than before),
// and executing it delivers at least toAmount.
func TestExecuteSlippageRefusalExactOutput(t *testing.T) {
	e := newScenarioEnv(t, nil)
	from := scenarioAccount("slippage-exact")
	const want = "50000000000000000" // 0.05 WETH
	var q anyQuote
	e.scenarioQuote("price-drift", "fromChain", "42161", "toChain", "42161", "fromToken", usdcArb, "toToken", wethArb,
		"toAmount", want, "fromAddress", from, "toAddress", from).decode(t, &q)
	if q.Provider != "aggregator" || bigOf(t, q.Quote.Estimate.ToAmountMin).Cmp(bigOf(t, want)) < 0 {
		t.Fatalf("exact-output quote %+v", q)
	}
	env := e.ts.post("/v1/execute", map[string]any{"quoteId": q.Quote.ID, "maxPriceDriftBps": 10000}, withKey(e.key))
	env.wantError(t, http.StatusBadRequest, "SLIPPAGE_ERROR", "")
	d := env.Error.Details
	if d["toAmountMin"] != q.Quote.Estimate.ToAmountMin || bigOf(t, d["currentToAmount"].(string)).Cmp(bigOf(t, want)) >= 0 {
		t.Fatalf("SLIPPAGE_ERROR details %v (min %s, toAmount %s)", d, q.Quote.Estimate.ToAmountMin, want)
	}
	newID, _ := d["newQuoteId"].(string)
	var ex struct {
		QuoteID             string
		TransactionRequests []json.RawMessage
		PriceCheck          *executePriceCheck
	}
	e.ts.post("/v1/execute", map[string]string{"quoteId": newID}, withKey(e.key)).decode(t, &ex)
	if ex.QuoteID != newID || ex.PriceCheck == nil || ex.PriceCheck.DriftBps > 5 || len(ex.TransactionRequests) != 1 {
		t.Fatalf("execute of the new quote %+v", ex)
	}
	in := q.in(t)
	ceiling := new(big.Int).Mul(in, big.NewInt(2))
	e.ts.approve(t, 42161, from, usdcArb, *q.Quote.Estimate.ApprovalAddress, ceiling)
	usdcBefore, wethBefore := e.ts.balance(t, 42161, from, usdcArb), e.ts.balance(t, 42161, from, wethArb)
	if b := e.ts.broadcast(t, 42161, from, ex.TransactionRequests[0]); b.Status != "success" {
		t.Fatalf("broadcast of the new quote %+v", b)
	}
	spent := new(big.Int).Sub(usdcBefore, e.ts.balance(t, 42161, from, usdcArb))
	got := new(big.Int).Sub(e.ts.balance(t, 42161, from, wethArb), wethBefore)
	if got.Cmp(bigOf(t, want)) < 0 || spent.Cmp(in) <= 0 || spent.Cmp(ceiling) > 0 {
		t.Fatalf("the new quote spent %s USDC (the first quote's input %s) for %s WETH, want at least %s", spent, in, got, want)
	}
}
