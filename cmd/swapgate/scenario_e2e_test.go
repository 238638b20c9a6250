package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// scenarioBridgeScale makes the sandbox's 60-second ArcBridge deliver in
// 120 ms (a slow one in 1.2 s) and its 120-second intents solver in 240 ms.
const scenarioBridgeScale = 0.002

// scenarioHorizon is how long the scenario server tracks a swap before it
// gives up: past every slow bridge, soon enough to see a stuck one given up.
const scenarioHorizon = 5 * time.Second

// scenarioEnv is a sandbox server whose tracker polls fast and gives up
// after scenarioHorizon, a partner of it with a webhook subscribed to every
// event, and the receiver of those webhooks.
type scenarioEnv struct {
	ts     *testServer
	rc     *signedReceiver
	key    string
	hookID string
}

func newScenarioEnv(t *testing.T, mutate func(*app.Config)) *scenarioEnv {
	t.Helper()
	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: scenarioHorizon}
		c.SandboxBridgeScale = scenarioBridgeScale
		c.SandboxOnrampStep = onrampStep
		if mutate != nil {
			mutate(c)
		}
	})
	_, key := ts.createPartner("Scenarios", "--swap-fee-bps", "0", "--onramp-fee-bps", "0")
	env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", webhook.Events(), e2eSecret), withKey(key))
	if env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	var hook struct{ ID string }
	env.decode(t, &hook)
	return &scenarioEnv{ts: ts, rc: rc, key: key, hookID: hook.ID}
}

// scenarioAccount is a fresh sandbox account per name, so that each row's balances
// are its own (every account starts with 1,000 of each token).
func scenarioAccount(name string) string {
	return common.BytesToAddress(crypto.Keccak256([]byte("scenario-e2e/" + name))[12:]).Hex()
}

// eventsOf waits until the receiver got n events about id (a quote id for
// swaps and deposits, an order uid for on-ramp orders), then a little
// longer to catch any extra one, and returns their names sorted.
func (e *scenarioEnv) eventsOf(t *testing.T, id string, n int) []string {
	t.Helper()
	names := func() []string {
		var out []string
		for _, p := range e.rc.events(t) {
			d, _ := p.Data.(map[string]any)
			if d["transactionId"] == id || d["orderUid"] == id {
				out = append(out, p.Event)
			}
		}
		slices.Sort(out)
		return out
	}
	if n > 0 {
		waitUntil(t, "the webhooks of "+id, func() bool { return len(names()) >= n })
	}
	time.Sleep(200 * time.Millisecond)
	return names()
}

// scenarioQuote asks for a quote under the scenario (none when sc is "")
// with the partner's key.
func (e *scenarioEnv) scenarioQuote(sc string, kv ...string) *envelope {
	opts := []reqOpt{withKey(e.key)}
	if sc != "" {
		opts = append(opts, withHeader(scenario.Header, sc))
	}
	return e.ts.get(quotePath(kv...), opts...)
}

// bridgeQuote is the ArcBridge quote of 100 USDC from Arbitrum to Base
// from and to the row's own accounts.
func (e *scenarioEnv) bridgeQuote(t *testing.T, sc, from, to string) anyQuote {
	t.Helper()
	var q anyQuote
	e.scenarioQuote(sc, "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge").decode(t, &q)
	return q
}

// sendSwap approves and broadcasts an ArcBridge quote's transaction and
// returns the broadcast.
func (e *scenarioEnv) sendSwap(t *testing.T, q anyQuote, from string) broadcastAnswer {
	t.Helper()
	e.ts.approve(t, 42161, from, usdcArb, *q.Quote.Estimate.ApprovalAddress, q.in(t))
	return e.ts.broadcast(t, 42161, from, q.tx(t))
}

// swapOutcome is what a swap row expects: the broadcast's status, the
// swap's final status, the webhooks it publishes, and the balances moved.
type swapOutcome struct {
	broadcast           string
	status, substatus   string
	events              []string
	receivedOfQuoted    [2]int64 // the receiver got quoted toAmount × [0]/[1]
	refundedOfInput     [2]int64 // the sender got its input × [0]/[1] back
	minBridgeMultiplier float64  // the swap took at least this many quoted bridge times
}

// TestSandboxScenarioFlows drives every scripted sandbox outcome through the
// real server: each row is one value of X-Sandbox-Scenario, on the flow it
// applies to, and checks what the integrator sees (status codes, statuses,
// webhooks, balances). The README's table lists the same rows.
func TestSandboxScenarioFlows(t *testing.T) {
	e := newScenarioEnv(t, nil)
	pendingDone := []string{webhook.SwapCompleted, webhook.SwapPending}
	bridgeWait := time.Duration(float64(60*time.Second) * scenarioBridgeScale)

	swapRows := []struct {
		scenario string
		want     swapOutcome
	}{
		{"", swapOutcome{broadcast: "success", status: swap.StatusDone, substatus: swap.Completed, events: pendingDone,
			receivedOfQuoted: [2]int64{1, 1}}},
		{"refund", swapOutcome{broadcast: "success", status: swap.StatusDone, substatus: swap.Refunded, events: pendingDone,
			refundedOfInput: [2]int64{1, 1}}},
		{"partial", swapOutcome{broadcast: "success", status: swap.StatusDone, substatus: swap.Partial, events: pendingDone,
			receivedOfQuoted: [2]int64{1, 2}, refundedOfInput: [2]int64{1, 2}}},
		{"slow", swapOutcome{broadcast: "success", status: swap.StatusDone, substatus: swap.Completed, events: pendingDone,
			receivedOfQuoted: [2]int64{1, 1}, minBridgeMultiplier: scenario.SlowFactor}},
		{"stuck", swapOutcome{broadcast: "success", status: swap.StatusPending, substatus: swap.UnknownError,
			events: []string{webhook.SwapPending}}},
		{"source-revert", swapOutcome{broadcast: "reverted", status: swap.StatusFailed, substatus: swap.SlippageExceeded,
			events: []string{webhook.SwapFailed, webhook.SwapPending}}},
	}
	for _, row := range swapRows {
		name := row.scenario
		if name == "" {
			name = "none"
		}
		t.Run("swap/"+name, func(t *testing.T) {
			from, to := scenarioAccount(name+"/from"), scenarioAccount(name+"/to")
			q := e.bridgeQuote(t, row.scenario, from, to)
			inBefore, outBefore := e.ts.balance(t, 42161, from, usdcArb), e.ts.balance(t, 8453, to, usdcBase)
			b := e.sendSwap(t, q, from)
			if b.Status != row.want.broadcast {
				t.Fatalf("broadcast %+v, want %s", b, row.want.broadcast)
			}
			start := time.Now()
			var ex struct{ Status *statusBody }
			e.ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(e.key)).decode(t, &ex)
			var st statusBody
			waitUntil(t, "the swap's final status", func() bool {
				e.ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
				return st.Status == row.want.status && st.Substatus == row.want.substatus
			})
			took := time.Since(start)
			if m := row.want.minBridgeMultiplier; m > 0 && took < time.Duration(m*float64(bridgeWait)) {
				t.Fatalf("the swap took %s, want at least %v × %s", took, m, bridgeWait)
			}
			if got := e.eventsOf(t, q.Quote.ID, len(row.want.events)); !slices.Equal(got, row.want.events) {
				t.Fatalf("webhooks %v, want %v", got, row.want.events)
			}
			sent := q.in(t)
			if row.want.broadcast != "success" {
				sent = new(big.Int)
			}
			wantIn := new(big.Int).Sub(inBefore, sent)
			if r := row.want.refundedOfInput; r[1] != 0 {
				back := new(big.Int).Sub(q.in(t), new(big.Int).Div(new(big.Int).Mul(q.in(t), big.NewInt(r[1]-r[0])), big.NewInt(r[1])))
				wantIn.Add(wantIn, back)
			}
			if got := e.ts.balance(t, 42161, from, usdcArb); got.Cmp(wantIn) != 0 {
				t.Fatalf("sender holds %s, want %s", got, wantIn)
			}
			wantOut := new(big.Int).Set(outBefore)
			if r := row.want.receivedOfQuoted; r[1] != 0 {
				wantOut.Add(wantOut, new(big.Int).Div(new(big.Int).Mul(bigOf(t, q.Quote.Estimate.ToAmount), big.NewInt(r[0])), big.NewInt(r[1])))
			}
			if got := e.ts.balance(t, 8453, to, usdcBase); got.Cmp(wantOut) != 0 {
				t.Fatalf("receiver holds %s, want %s", got, wantOut)
			}
		})
	}

	quoteRows := []struct {
		scenario, code string
		status         int
		reason         string
	}{
		{"no-route", "NO_ROUTE_FOUND", http.StatusNotFound, "no route (sandbox scenario no-route)"},
		{"upstream-error", "UPSTREAM_ERROR", http.StatusBadGateway, "failed (sandbox scenario upstream-error)"},
		{"upstream-rate-limited", "UPSTREAM_ERROR", http.StatusBadGateway, "is rate limiting us (sandbox scenario upstream-rate-limited)"},
	}
	for _, row := range quoteRows {
		t.Run("quote/"+row.scenario, func(t *testing.T) {
			from := scenarioAccount(row.scenario)
			// Twice: a scripted failure never opens a tool's breaker, so
			// the next quote without the scenario is answered.
			for range 2 {
				env := e.scenarioQuote(row.scenario, "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
					"fromAmount", "100000000", "fromAddress", from)
				env.wantError(t, row.status, row.code, "")
				if !strings.Contains(string(env.Raw), row.reason) {
					t.Fatalf("no reason %q in %s", row.reason, env.Raw)
				}
				routes := e.ts.get("/v1/routes"+strings.TrimPrefix(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb,
					"toToken", usdcBase, "fromAmount", "100000000", "fromAddress", from), "/v1/quote"),
					withKey(e.key), withHeader(scenario.Header, row.scenario))
				routes.wantError(t, row.status, row.code, "")
			}
			if env := e.scenarioQuote("", "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
				"fromAmount", "100000000", "fromAddress", from); env.Status != http.StatusOK {
				t.Fatalf("a quote without the scenario after it: %d %s", env.Status, env.Raw)
			}
		})
	}

	t.Run("execute/price-drift", func(t *testing.T) {
		// At the default slippage (0.5%) the 100 bps move takes the route
		// below the quote's toAmountMin: its transaction would revert, so
		// the execute is SLIPPAGE_ERROR, whatever drift it allows.
		from := scenarioAccount("price-drift")
		q := e.bridgeQuote(t, "price-drift", from, from)
		for _, body := range []map[string]any{{"quoteId": q.Quote.ID}, {"quoteId": q.Quote.ID, "maxPriceDriftBps": 150}} {
			env := e.ts.post("/v1/execute", body, withKey(e.key))
			env.wantError(t, http.StatusBadRequest, "SLIPPAGE_ERROR", "")
			d := env.Error.Details
			current := bigOf(t, d["currentToAmount"].(string))
			if d["toAmountMin"] != q.Quote.Estimate.ToAmountMin || current.Cmp(bigOf(t, q.Quote.Estimate.ToAmountMin)) >= 0 ||
				quote.Drift(bigOf(t, q.Quote.Estimate.ToAmount), current) < scenario.DriftBps {
				t.Fatalf("SLIPPAGE_ERROR details %v (quoted %s, min %s)", d, q.Quote.Estimate.ToAmount, q.Quote.Estimate.ToAmountMin)
			}
		}
		env := e.ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}, withKey(e.key))
		env.wantError(t, http.StatusBadRequest, "SLIPPAGE_ERROR", "")
		current := bigOf(t, env.Error.Details["currentToAmount"].(string))
		// The new quote is at the moved price and executes like any other:
		// its price holds, its transaction is tracked to the end.
		newID := env.Error.Details["newQuoteId"].(string)
		var ex struct {
			QuoteID             string
			TransactionRequests []json.RawMessage
			PriceCheck          *struct {
				CurrentToAmount string
				DriftBps        int64
			}
		}
		e.ts.post("/v1/execute", map[string]string{"quoteId": newID}, withKey(e.key)).decode(t, &ex)
		if ex.QuoteID != newID || ex.PriceCheck == nil || ex.PriceCheck.DriftBps > 5 || len(ex.TransactionRequests) != 1 {
			t.Fatalf("execute of the new quote %+v", ex)
		}

		// A quote with a wider slippage (3%) still reaches its minimum
		// after the move: past the default maximum drift it is
		// PRICE_CHANGED, and allowing 100 bps or more it executes, its
		// priceCheck saying how far the price moved.
		wide := scenarioAccount("price-drift/slippage")
		var qw anyQuote
		e.scenarioQuote("price-drift", "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "100000000", "fromAddress", wide, "toAddress", wide, "tools", "sbx-arcbridge", "slippage", "0.03").decode(t, &qw)
		env = e.ts.post("/v1/execute", map[string]string{"quoteId": qw.Quote.ID}, withKey(e.key))
		env.wantError(t, http.StatusConflict, "PRICE_CHANGED", "")
		d := env.Error.Details
		quoted, moved := bigOf(t, d["quotedToAmount"].(string)), bigOf(t, d["currentToAmount"].(string))
		if quoted.String() != qw.Quote.Estimate.ToAmount || moved.Cmp(quoted) >= 0 || moved.Cmp(bigOf(t, qw.Quote.Estimate.ToAmountMin)) < 0 ||
			d["driftBps"].(float64) < scenario.DriftBps || d["newQuoteId"] == "" {
			t.Fatalf("PRICE_CHANGED details %v (quoted %s, min %s)", d, qw.Quote.Estimate.ToAmount, qw.Quote.Estimate.ToAmountMin)
		}
		var within struct {
			PriceCheck *struct {
				CurrentToAmount string
				DriftBps        int64
			}
		}
		e.ts.post("/v1/execute", map[string]any{"quoteId": qw.Quote.ID, "maxPriceDriftBps": 150}, withKey(e.key)).decode(t, &within)
		if within.PriceCheck == nil || within.PriceCheck.DriftBps < scenario.DriftBps || within.PriceCheck.DriftBps > 150 {
			t.Fatalf("execute within 150 bps: %+v", within.PriceCheck)
		}

		e.ts.approve(t, 42161, from, usdcArb, *q.Quote.Estimate.ApprovalAddress, q.in(t))
		b := e.ts.broadcast(t, 42161, from, ex.TransactionRequests[0])
		if b.Status != "success" {
			t.Fatalf("broadcast of the new quote %+v", b)
		}
		var tracked struct{ Status *statusBody }
		e.ts.post("/v1/execute", map[string]string{"quoteId": newID, "txHash": b.TxHash}, withKey(e.key)).decode(t, &tracked)
		if tracked.Status == nil || tracked.Status.QuoteID != newID {
			t.Fatalf("execute with txHash %+v", tracked)
		}
		var st statusBody
		waitUntil(t, "the new quote's swap completes", func() bool {
			e.ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
			return st.Status == swap.StatusDone
		})
		if st.Substatus != swap.Completed || st.Receiving.Amount != current.String() {
			t.Fatalf("status %+v, want %s delivered", st, current)
		}
		if got := e.eventsOf(t, newID, 2); !slices.Equal(got, pendingDone) {
			t.Fatalf("webhooks of the new quote %v", got)
		}
	})

	depositRows := []struct {
		scenario string
		seen     string // a deposit status seen on the way, "" for none checked
		status   string
		events   []string
		refunded bool
	}{
		{"refund", "", swap.DepositRefunded, []string{webhook.DepositFailed, webhook.DepositReceived}, true},
		{"incomplete-deposit", swap.DepositIncomplete, swap.DepositRefunded, []string{webhook.DepositFailed, webhook.DepositReceived}, true},
	}
	for _, row := range depositRows {
		t.Run("deposit/"+row.scenario, func(t *testing.T) {
			from := scenarioAccount(row.scenario + "/deposit")
			var q anyQuote
			e.scenarioQuote(row.scenario, "fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
				"fromAmount", "300000000", "fromAddress", from, "toAddress", solAddress, "tools", "sbx-intents").decode(t, &q)
			b := e.ts.broadcast(t, 1, from, q.tx(t))
			if b.Status != "success" {
				t.Fatalf("deposit transfer %+v", b)
			}
			afterSend := e.ts.balance(t, 1, from, usdcEth)
			var st struct{ Status, TxHash string }
			e.ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &st)
			var seen []string
			waitUntil(t, "the deposit's final status", func() bool {
				e.ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
				if len(seen) == 0 || seen[len(seen)-1] != st.Status {
					seen = append(seen, st.Status)
				}
				return st.Status == row.status
			})
			if row.seen != "" && !slices.Contains(seen, row.seen) {
				t.Fatalf("statuses seen %v, want %s on the way", seen, row.seen)
			}
			if got := e.eventsOf(t, q.Quote.ID, len(row.events)); !slices.Equal(got, row.events) {
				t.Fatalf("webhooks %v, want %v", got, row.events)
			}
			back := new(big.Int).Sub(e.ts.balance(t, 1, from, usdcEth), afterSend)
			if row.refunded && back.Cmp(q.in(t)) != 0 {
				t.Fatalf("refunded %s of %s", back, q.in(t))
			}
		})
	}

	onrampRows := []struct {
		scenario string
		states   []onramp.State
		events   []string
	}{
		{"payment-failed", []onramp.State{onramp.Created, onramp.Failed}, []string{webhook.OnrampFailed}},
		{"refunded", []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded}},
		{"expired", []onramp.State{onramp.Created, onramp.Expired}, nil},
	}
	for _, row := range onrampRows {
		t.Run("onramp/"+row.scenario, func(t *testing.T) {
			var co onrampCheckoutAnswer
			e.ts.post("/v1/onramp/checkout", onrampCheckoutBody("scenario-"+row.scenario, nil), withKey(e.key),
				withHeader(scenario.Header, row.scenario)).decode(t, &co)
			if co.Status != string(onramp.Created) {
				t.Fatalf("checkout %+v", co)
			}
			final := row.states[len(row.states)-1]
			var st onrampOrderStatus
			waitUntil(t, "the order's final state", func() bool {
				st = e.ts.onrampStatus(t, co.OrderUID)
				return st.Status == final
			})
			if got := onrampStates(st); !slices.Equal(got, row.states) {
				t.Fatalf("history %v, want %v", got, row.states)
			}
			if st.TxHash != nil {
				t.Fatalf("an order that never delivered has txHash %s", *st.TxHash)
			}
			want := slices.Clone(row.events)
			slices.Sort(want)
			if got := e.eventsOf(t, co.OrderUID, len(want)); !slices.Equal(got, want) {
				t.Fatalf("webhooks %v, want %v", got, want)
			}
		})
	}
}

// TestOnrampScenarioHoldsAgainstCheckoutPage: a scripted on-ramp order's
// outcome holds whatever its checkout page is used for before the script
// moves it. Pay on a payment-failed order is the declined payment (FAILED
// with onramp.failed at once, never onramp.completed); Pay on a refunded
// order is received and then refunded; a button that would leave the
// script (Fail on a refunded order, Pay on an expired one) is refused
// with 409 and the order stays on its script.
func TestOnrampScenarioHoldsAgainstCheckoutPage(t *testing.T) {
	// A step long enough that every button is pressed before the script's
	// first move, as a buyer would within two seconds.
	e := newScenarioEnv(t, func(c *app.Config) { c.SandboxOnrampStep = 1500 * time.Millisecond })
	rows := []struct {
		scenario scenario.Name
		action   onramp.Action
		pressed  int
		states   []onramp.State
		events   []string
	}{
		{scenario.PaymentFailed, onramp.Pay, http.StatusSeeOther, []onramp.State{onramp.Created, onramp.Failed}, []string{webhook.OnrampFailed}},
		{scenario.Refunded, onramp.Pay, http.StatusSeeOther, []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded}},
		{scenario.Refunded, onramp.Fail, http.StatusConflict, []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded}},
		{scenario.Expired, onramp.Pay, http.StatusConflict, []onramp.State{onramp.Created, onramp.Expired}, nil},
	}
	for _, row := range rows {
		t.Run(string(row.scenario)+"/"+string(row.action), func(t *testing.T) {
			t.Parallel()
			var co onrampCheckoutAnswer
			e.ts.post("/v1/onramp/checkout", onrampCheckoutBody("press-"+string(row.scenario)+"-"+string(row.action), nil), withKey(e.key),
				withHeader(scenario.Header, string(row.scenario))).decode(t, &co)
			csrf := e.ts.onrampCSRF(t, co.OrderUID)
			if p := e.ts.onrampAct(t, co.OrderUID, csrf, row.action); p.status != row.pressed {
				t.Fatalf("%s pressed: %d, want %d\n%s", row.action, p.status, row.pressed, truncate([]byte(p.body), 2000))
			}
			var st onrampOrderStatus
			waitUntil(t, "the order ends", func() bool {
				st = e.ts.onrampStatus(t, co.OrderUID)
				return st.Status.Terminal()
			})
			if got := onrampStates(st); !slices.Equal(got, row.states) {
				t.Fatalf("history %v, want %v", got, row.states)
			}
			want := slices.Clone(row.events)
			slices.Sort(want)
			if got := e.eventsOf(t, co.OrderUID, len(want)); !slices.Equal(got, want) {
				t.Fatalf("webhooks %v, want %v", got, want)
			}
		})
	}
}
