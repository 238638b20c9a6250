package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// timing is data.timing as the tests read it.
type timing struct {
	TotalMs  float64
	Strategy string
	Legs     []struct {
		Provider, Tool, Outcome string
		Ms                      float64
	}
}

// outcomes maps each leg's tool to its outcome.
func (tm timing) outcomes() map[string]string {
	out := map[string]string{}
	for _, l := range tm.Legs {
		out[l.Tool] = l.Outcome
	}
	return out
}

// timedQuote is a quote's data with its timing.
type timedQuote struct {
	Quote struct {
		Tool string
	}
	Provider string
	Timing   timing
}

// quoteTimed gets a quote and how long it took.
func (ts *testServer) quoteTimed(t *testing.T, path string) (timedQuote, time.Duration) {
	t.Helper()
	began := time.Now()
	var q timedQuote
	ts.get(path).decode(t, &q)
	return q, time.Since(began)
}

// hangingArcbridge is a server whose sbx-arcbridge hangs until its leg's
// context ends, with the deadline given.
func hangingArcbridge(t *testing.T, deadline time.Duration, mutate func(*app.Config)) *testServer {
	return startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 10_000, 10_000
		c.Quote.Deadline = deadline
		c.Quote.SandboxTools = map[string]sandbox.ToolConfig{"sbx-arcbridge": {Hang: true}}
		if mutate != nil {
			mutate(c)
		}
	})
}

// TestQuoteTimingStrategyEndsEarly: with a tool that hangs, a quote ends
// long before the server's 5 s deadline when the request's maxWaitMs or its
// strategy (or the server's default strategy) says so, answered with the
// best route in by then, and data.timing says what ended it and that the
// hanging leg timed out. Legs cut off so are not held against their tool.
func TestQuoteTimingStrategyEndsEarly(t *testing.T) {
	const deadline = 5 * time.Second
	ts := hangingArcbridge(t, deadline, nil)
	tests := []struct {
		name, strategy string
		params         []string
	}{
		{"maxWaitMs", "max_wait", []string{"maxWaitMs", "200"}},
		{"one result expected", "expected_results", []string{"expectedResults", "1"}},
		{"every leg but one after 50 ms", "expected_results", []string{"reduceEveryMs", "50"}},
		{"two expected after 100 ms", "expected_results", []string{"minWaitMs", "100", "expectedResults", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, took := ts.quoteTimed(t, arbToBase(tt.params...))
			if took > deadline/2 {
				t.Fatalf("took %v with a %v deadline", took, deadline)
			}
			o := q.Timing.outcomes()
			if q.Timing.Strategy != tt.strategy || o["sbx-arcbridge"] != "timed_out" || o[q.Quote.Tool] != "won" || len(q.Timing.Legs) != 3 {
				t.Fatalf("timing %+v, won by %s", q.Timing, q.Quote.Tool)
			}
			if q.Timing.TotalMs <= 0 || q.Timing.TotalMs >= float64(deadline/time.Millisecond)/2 {
				t.Fatalf("totalMs %v", q.Timing.TotalMs)
			}
		})
	}
	// /v1/routes races the same way and lists what came in.
	var routes struct {
		Routes []struct{ Tool string }
		Timing timing
	}
	began := time.Now()
	ts.get(strings.Replace(arbToBase("maxWaitMs", "150"), "/v1/quote", "/v1/routes", 1)).decode(t, &routes)
	if time.Since(began) > deadline/2 || routes.Timing.Strategy != "max_wait" || len(routes.Routes) != 2 ||
		routes.Timing.outcomes()[routes.Routes[0].Tool] != "won" && routes.Timing.outcomes()[routes.Routes[1].Tool] != "won" {
		t.Fatalf("routes %+v after %v", routes, time.Since(began))
	}
	// None of those cut-offs counted against sbx-arcbridge.
	if st := toolStatus(t, ts, "sbx-arcbridge"); st != "ok" {
		t.Fatalf("sbx-arcbridge is %s after legs cut off by the request's own timing", st)
	}
}

// TestQuoteDefaultStrategyFromTheServer: the server's default strategy
// (--quote-reduce-every here) ends a quote without any parameter, and a
// request's own parameter overrides it.
func TestQuoteDefaultStrategyFromTheServer(t *testing.T) {
	const deadline = 5 * time.Second
	ts := hangingArcbridge(t, deadline, func(c *app.Config) { c.Quote.ReduceEvery = 50 * time.Millisecond })
	q, took := ts.quoteTimed(t, arbToBase())
	if took > deadline/2 || q.Timing.Strategy != "expected_results" {
		t.Fatalf("default strategy: %+v after %v", q.Timing, took)
	}
	q, took = ts.quoteTimed(t, arbToBase("maxWaitMs", "300", "reduceEveryMs", "0"))
	if took > deadline/2 || q.Timing.Strategy != "max_wait" {
		t.Fatalf("overridden: %+v after %v", q.Timing, took)
	}
}

// TestBreakerOpensOnAHangingTool: a tool that hangs costs the first quotes
// the deadline; once its breaker opens (three timeouts here), GET
// /v1/tools shows it unavailable, /metrics shows its breaker open, quotes
// no longer wait for it (its leg skipped), and a request that names only
// it is refused at once with UPSTREAM_MAINTENANCE naming it.
func TestBreakerOpensOnAHangingTool(t *testing.T) {
	const deadline = 2 * time.Second
	ts := hangingArcbridge(t, deadline, func(c *app.Config) {
		c.Quote.BreakerMinCalls, c.Quote.BreakerWindow, c.Quote.BreakerCoolDown = 3, 10, time.Hour
	})
	for i := 0; i < 3; i++ {
		q, took := ts.quoteTimed(t, arbToBase())
		if took < deadline-time.Millisecond || q.Timing.Strategy != "deadline" || q.Timing.outcomes()["sbx-arcbridge"] != "timed_out" {
			t.Fatalf("quote %d before the breaker opened: %+v after %v", i, q.Timing, took)
		}
	}
	if st := toolStatus(t, ts, "sbx-arcbridge"); st != "unavailable" {
		t.Fatalf("sbx-arcbridge is %s after three timeouts", st)
	}
	if st := toolStatus(t, ts, "sbx-canal"); st != "ok" {
		t.Fatalf("sbx-canal is %s", st)
	}
	m := ts.get("/metrics")
	for _, want := range []string{
		`swapgate_quote_leg_breaker_state{provider="aggregator",tool="sbx-arcbridge"} 2`,
		`swapgate_quote_leg_breaker_state{provider="aggregator",tool="sbx-canal"} 0`,
		`swapgate_quote_leg_timeouts_total{provider="aggregator",tool="sbx-arcbridge"} 3`,
		`swapgate_quote_leg_breaker_opens_total{provider="aggregator",tool="sbx-arcbridge"} 1`,
	} {
		if !strings.Contains(string(m.Raw), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	q, took := ts.quoteTimed(t, arbToBase())
	if took >= deadline/2 || q.Timing.Strategy != "all_answered" || q.Timing.outcomes()["sbx-arcbridge"] != "skipped" ||
		q.Timing.TotalMs >= float64(deadline/time.Millisecond)/2 {
		t.Fatalf("quote with the breaker open: %+v after %v", q.Timing, took)
	}
	began := time.Now()
	env := ts.get(arbToBase("tools", "sbx-arcbridge"))
	env.wantError(t, 503, "UPSTREAM_MAINTENANCE", "")
	if took := time.Since(began); took >= deadline/2 {
		t.Fatalf("refused after %v", took)
	}
	if tools := fmt.Sprint(env.Error.Details["tools"]); tools != "[sbx-arcbridge]" {
		t.Fatalf("details.tools %s: %s", tools, env.Raw)
	}
	if !strings.Contains(env.Error.Message, "sbx-arcbridge") {
		t.Fatalf("message %q names no tool", env.Error.Message)
	}
	if m := ts.get("/metrics"); !strings.Contains(string(m.Raw), `swapgate_quote_leg_skipped_total{provider="aggregator",tool="sbx-arcbridge"} 2`+"\n") {
		t.Error("/metrics does not count the two skipped legs")
	}
}

// TestBreakerOnFailingToolAndTimingInEveryShape: a tool that always fails
// shows degraded, then unavailable; and every quote shape, and the routes
// answer, carry a timing the document accepts (testServer.check holds each
// answer to it) with the winner marked.
func TestBreakerOnFailingToolAndTimingInEveryShape(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 10_000, 10_000
		c.Quote.SandboxTools = map[string]sandbox.ToolConfig{"sbx-wormway": {FailureRate: 1}}
	})
	q, _ := ts.quoteTimed(t, arbToBase())
	if st := toolStatus(t, ts, "sbx-wormway"); st != "degraded" || q.Timing.outcomes()["sbx-wormway"] != "failed" {
		t.Fatalf("after one failure: %s, %+v", st, q.Timing)
	}
	for i := 0; i < 4; i++ {
		ts.quoteTimed(t, arbToBase())
	}
	if st := toolStatus(t, ts, "sbx-wormway"); st != "unavailable" {
		t.Fatalf("after five failures: %s", st)
	}
	q, _ = ts.quoteTimed(t, arbToBase())
	if q.Timing.outcomes()["sbx-wormway"] != "skipped" || q.Timing.Strategy != "all_answered" {
		t.Fatalf("%+v", q.Timing)
	}
	for _, path := range []string{
		// Shape B, direct inbound, and Shape C, multi-step.
		quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch,
			"fromAmount", "1000000000", "fromAddress", wallet, "toAddress", wallet),
		quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", "native",
			"fromAmount", "1000000000000000000", "fromAddress", wallet, "toAddress", wallet),
		// Shape A from intents.
		quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
			"fromAmount", "300000000", "fromAddress", wallet, "toAddress", tonAddress),
	} {
		var d struct {
			Provider string
			Timing   timing
		}
		ts.get(path).decode(t, &d)
		won := 0
		for _, l := range d.Timing.Legs {
			if l.Outcome == "won" {
				won++
				if l.Provider != d.Provider {
					t.Errorf("%s: the winning leg is %s's, the quote %s's", path, l.Provider, d.Provider)
				}
			}
		}
		if won != 1 || d.Timing.Strategy == "" {
			t.Errorf("%s: timing %+v", path, d.Timing)
		}
	}
}

// toolStatus reads a tool's status from GET /v1/tools.
func toolStatus(t *testing.T, ts *testServer, key string) string {
	t.Helper()
	var d struct {
		Tools []struct{ Key, Status string }
	}
	ts.get("/v1/tools").decode(t, &d)
	for _, tl := range d.Tools {
		if tl.Key == key {
			return tl.Status
		}
	}
	t.Fatalf("no tool %s in %+v", key, d.Tools)
	return ""
}
