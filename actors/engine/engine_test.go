package engine

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/breaker"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fakeProvider answers each leg after a delay, hangs, or panics.
type fakeProvider struct {
	name  string
	legs  []string
	delay time.Duration
	// release, when set, holds every leg until it is closed (instead of
	// delay): a test can look at the engine while all legs are in flight.
	release chan struct{}
	hang    bool
	fail    bool         // answer every leg with an error
	panics  atomic.Int32 // panic this many more times
	calls   atomic.Int32
}

func (f *fakeProvider) Name() string                 { return f.name }
func (f *fakeProvider) Legs(*quote.Request) []string { return f.legs }
func (f *fakeProvider) QuoteLeg(ctx context.Context, _ *quote.Request, leg string) (*quote.Route, error) {
	f.calls.Add(1)
	if f.panics.Load() > 0 {
		f.panics.Add(-1)
		panic("provider bug")
	}
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.fail {
		return nil, errors.New("no route")
	}
	wait := f.release
	if wait == nil {
		wait = make(chan struct{})
		t := time.AfterFunc(f.delay, func() { close(wait) })
		defer t.Stop()
	}
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &quote.Route{Provider: f.name, Tool: leg, ToAmount: big.NewInt(1)}, nil
}

var _ quote.Provider = (*fakeProvider)(nil)

func start(t *testing.T, cfg Config, ps ...quote.Provider) *Engine {
	t.Helper()
	sys := actors.NewSystem()
	e, err := Start(sys, ps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop(); sys.Shutdown() })
	return e
}

func names(ps ...quote.Provider) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name())
	}
	return out
}

func TestRaceReturnsEarlyWhenAllAnswer(t *testing.T) {
	a := &fakeProvider{name: "a", legs: []string{"t1", "t2"}, delay: 5 * time.Millisecond}
	b := &fakeProvider{name: "b", legs: []string{""}}
	e := start(t, Config{Deadline: 5 * time.Second}, a, b)
	began := time.Now()
	out := raceOf(e, context.Background(), names(a, b))
	if len(out) != 3 {
		t.Fatalf("%d outcomes", len(out))
	}
	for _, o := range out {
		if !o.Answered || o.Err != nil || o.Route == nil {
			t.Fatalf("outcome %+v", o)
		}
	}
	if time.Since(began) > 2*time.Second {
		t.Fatalf("waited %v although every leg answered", time.Since(began))
	}
}

func TestHangingProviderDoesNotHoldTheQuote(t *testing.T) {
	fast := &fakeProvider{name: "fast", legs: []string{"x"}}
	hung := &fakeProvider{name: "hung", legs: []string{"y"}, hang: true}
	const deadline = 200 * time.Millisecond
	e := start(t, Config{Deadline: deadline}, fast, hung)
	began := time.Now()
	out := raceOf(e, context.Background(), names(fast, hung))
	took := time.Since(began)
	if took < deadline-timerSlack || took > deadline+2*time.Second {
		t.Fatalf("race took %v with deadline %v", took, deadline)
	}
	var routes, silent int
	for _, o := range out {
		if o.Route != nil {
			routes++
		}
		if !o.Answered {
			silent++
		}
	}
	if routes != 1 || silent != 1 {
		t.Fatalf("outcomes %+v", out)
	}
}

func TestPanickingWorkerIsRestarted(t *testing.T) {
	bad := &fakeProvider{name: "bad", legs: []string{"z"}}
	bad.panics.Store(3)
	good := &fakeProvider{name: "good", legs: []string{"w"}}
	e := start(t, Config{Deadline: 5 * time.Second, PoolSize: 1}, bad, good)
	for i := 0; i < 3; i++ {
		began := time.Now()
		out := raceOf(e, context.Background(), names(bad, good))
		if time.Since(began) > 2*time.Second {
			t.Fatalf("a panic made the race wait %v", time.Since(began))
		}
		var gotGood, gotPanic bool
		for _, o := range out {
			gotGood = gotGood || (o.Provider == "good" && o.Route != nil)
			gotPanic = gotPanic || (o.Provider == "bad" && o.Err != nil && o.Answered)
		}
		if !gotGood || !gotPanic {
			t.Fatalf("round %d: %+v", i, out)
		}
	}
	// The single worker of "bad" was restarted each time and serves again.
	out := raceOf(e, context.Background(), []string{"bad"})
	if len(out) != 1 || out[0].Route == nil {
		t.Fatalf("after restarts: %+v", out)
	}
}

func TestSaturatedPoolFailsFast(t *testing.T) {
	slow := &fakeProvider{name: "slow", legs: []string{"s"}, delay: 300 * time.Millisecond}
	e := start(t, Config{Deadline: 2 * time.Second, PoolSize: 1, QueuePerWorker: 1}, slow)
	done := make(chan []quote.LegOutcome, 3)
	for i := 0; i < 3; i++ {
		go func() { done <- raceOf(e, context.Background(), []string{"slow"}) }()
	}
	var saturated int
	for i := 0; i < 3; i++ {
		for _, o := range <-done {
			if o.Err != nil && o.Answered {
				saturated++
			}
		}
	}
	if saturated != 1 {
		t.Fatalf("%d legs refused for saturation, want 1", saturated)
	}
	v := metricstest.Values(t, e.Collector())
	for k, want := range map[string]float64{
		`swapgate_provider_pool_saturation_refusals_total{provider="slow"}`: 1,
		`swapgate_quote_leg_errors_total{provider="slow",tool="other"}`:     1,
		`swapgate_provider_pool_workers{provider="slow"}`:                   1,
		`swapgate_provider_pool_queue_capacity{provider="slow"}`:            1,
	} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
}

// TestMetrics checks what the engine counts for each provider tool (leg
// latency, errors, timeouts, wins, the catalog's tools apart and the rest
// as "other"), for races (deadline hits) and for each pool.
func TestMetrics(t *testing.T) {
	a := &fakeProvider{name: "a", legs: []string{"t1", "t2"}}
	up := &fakeProvider{name: "up", legs: []string{""}}
	bad := &fakeProvider{name: "bad", legs: []string{"b1"}, fail: true}
	hung := &fakeProvider{name: "hung", legs: []string{"h1"}, hang: true}
	e := start(t, Config{Deadline: 300 * time.Millisecond, PoolSize: 2, QueuePerWorker: 3,
		Tools: map[string][]string{"a": {"t1"}, "bad": {"b1"}, "hung": {"h1"}}}, a, up, bad, hung)
	raceOf(e, context.Background(), names(a, up, bad))
	raceOf(e, context.Background(), names(a, hung))
	e.Won("a", "t1")
	e.Won("a", "not-in-the-catalog")
	e.Won("nobody", "t1") // an unknown provider counts nothing
	want := map[string]float64{
		"swapgate_quote_races_total":                                     2,
		"swapgate_quote_deadline_hits_total":                             1,
		`swapgate_quote_leg_seconds_count{provider="a",tool="t1"}`:       2,
		`swapgate_quote_leg_seconds_count{provider="a",tool="other"}`:    2,
		`swapgate_quote_leg_seconds_count{provider="up",tool="other"}`:   1,
		`swapgate_quote_leg_seconds_count{provider="bad",tool="b1"}`:     1,
		`swapgate_quote_leg_seconds_count{provider="hung",tool="h1"}`:    1, // late, once the race ended
		`swapgate_quote_leg_errors_total{provider="bad",tool="b1"}`:      1,
		`swapgate_quote_leg_errors_total{provider="a",tool="t1"}`:        0,
		`swapgate_quote_leg_timeouts_total{provider="hung",tool="h1"}`:   1,
		`swapgate_quote_leg_timeouts_total{provider="a",tool="t1"}`:      0,
		`swapgate_quote_wins_total{provider="a",tool="t1"}`:              1,
		`swapgate_quote_wins_total{provider="a",tool="other"}`:           1,
		`swapgate_provider_pool_workers{provider="a"}`:                   2,
		`swapgate_provider_pool_queue_capacity{provider="a"}`:            6,
		`swapgate_provider_pool_queued_legs{provider="a"}`:               0,
		`swapgate_provider_pool_saturation_refusals_total{provider="a"}`: 0,
		`swapgate_provider_pool_idle_workers{provider="a"}`:              2,
		`swapgate_provider_pool_idle_workers{provider="hung"}`:           2,
	}
	// Late legs and workers going idle land after the race returns.
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := metricstest.Values(t, e.Collector())
		var diff []string
		for k, w := range want {
			if got, ok := v[k]; !ok || got != w {
				diff = append(diff, fmt.Sprintf("%s = %v, want %v", k, got, w))
			}
		}
		if len(diff) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics differ:\n%s", strings.Join(diff, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestContextEndsRace(t *testing.T) {
	hung := &fakeProvider{name: "hung", legs: []string{"y"}, hang: true}
	e := start(t, Config{Deadline: 10 * time.Second}, hung)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	out := raceOf(e, ctx, []string{"hung"})
	if len(out) != 1 || out[0].Answered || time.Since(began) > 3*time.Second {
		t.Fatalf("%+v after %v", out, time.Since(began))
	}
}

// raceOf races an empty request without a callback and returns the
// outcomes.
func raceOf(e *Engine, ctx context.Context, providers []string) []quote.LegOutcome {
	out, _ := e.Race(ctx, &quote.Request{}, providers, nil)
	return out
}

// watchedProvider answers "fast" with a route (once "slow" has started,
// when started is set), "nothing" at once without one, and "slow" only when
// its context ends, which it reports on cancelled: the legs a race's end
// reached. When failing is set, every leg fails at once.
type watchedProvider struct {
	name      string
	legs      []string
	failing   atomic.Bool
	calls     atomic.Int32
	started   chan struct{}
	cancelled chan string
}

func (w *watchedProvider) Name() string                 { return w.name }
func (w *watchedProvider) Legs(*quote.Request) []string { return w.legs }
func (w *watchedProvider) QuoteLeg(ctx context.Context, _ *quote.Request, leg string) (*quote.Route, error) {
	w.calls.Add(1)
	if w.failing.Load() {
		return nil, errors.New("upstream down")
	}
	switch leg {
	case "slow":
		if w.started != nil {
			close(w.started)
		}
		<-ctx.Done()
		w.cancelled <- leg
		return nil, ctx.Err()
	case "nothing":
		return nil, &quote.NoRoute{Provider: w.name, Tool: leg, Reason: "AMOUNT_TOO_LOW"}
	}
	if w.started != nil {
		// The slow leg is running before the race can end, so that its
		// end reaches a leg in flight (not one still queued, which a
		// worker drops unrun).
		select {
		case <-w.started:
		case <-ctx.Done():
		}
	}
	return &quote.Route{Provider: w.name, Tool: leg, ToAmount: big.NewInt(1)}, nil
}

// TestStrategyEndsTheRaceAndCancelsLateLegs checks that a race ends as
// soon as its strategy has what it expects, or at the request's maxWait,
// long before the deadline, and that the leg still running sees its
// context end (it is cancelled, not left to run), and is counted so.
func TestStrategyEndsTheRaceAndCancelsLateLegs(t *testing.T) {
	const deadline = 10 * time.Second
	tests := []struct {
		name   string
		cfg    quote.Strategy
		req    quote.StrategyParams
		reason quote.StopReason
	}{
		{"server default: one result expected", quote.Strategy{ExpectedResults: 1}, quote.StrategyParams{}, quote.StopExpectedResults},
		{"request: one result expected", quote.Strategy{}, quote.StrategyParams{ExpectedResults: 1, HasExpected: true}, quote.StopExpectedResults},
		{"request: every leg but one after 50 ms", quote.Strategy{}, quote.StrategyParams{ReduceEvery: 50 * time.Millisecond, HasReduce: true}, quote.StopExpectedResults},
		{"request: maxWaitMs", quote.Strategy{}, quote.StrategyParams{MaxWait: 100 * time.Millisecond, HasMaxWait: true}, quote.StopMaxWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &watchedProvider{name: "p", legs: []string{"fast", "nothing", "slow"}, started: make(chan struct{}), cancelled: make(chan string, 1)}
			e := start(t, Config{Deadline: deadline, Strategy: tt.cfg, Tools: map[string][]string{"p": p.legs}}, p)
			began := time.Now()
			out, end := e.Race(context.Background(), &quote.Request{Strategy: tt.req}, []string{"p"}, nil)
			if took := time.Since(began); took > deadline/2 {
				t.Fatalf("the race took %v", took)
			}
			if end.Reason != tt.reason || end.Total <= 0 {
				t.Fatalf("ended %+v, want %v", end, tt.reason)
			}
			if out[0].Route == nil || out[2].Answered {
				t.Fatalf("outcomes %+v", out)
			}
			select {
			case <-p.cancelled:
			case <-time.After(deadline / 2):
				t.Fatal("the late leg never saw its context end")
			}
			v := metricstest.Values(t, e.Collector())
			for k, want := range map[string]float64{
				`swapgate_quote_leg_cancelled_total{provider="p",tool="slow"}`:        1,
				`swapgate_quote_leg_timeouts_total{provider="p",tool="slow"}`:         0,
				`swapgate_quote_race_ends_total{reason="` + tt.reason.String() + `"}`: 1,
				`swapgate_quote_deadline_hits_total`:                                  0,
				`swapgate_quote_leg_breaker_state{provider="p",tool="slow"}`:          0,
			} {
				if v[k] != want {
					t.Errorf("%s = %v, want %v", k, v[k], want)
				}
			}
		})
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestBreakerSkipsADeadLegAndProbesIt plays a leg's breaker through the
// engine: failures open it, an open leg is not sent (skipped, its provider
// not called, the race answered at once with UPSTREAM_MAINTENANCE when it
// was the only leg), and after the cool-down one probe is sent; success
// closes it.
func TestBreakerSkipsADeadLegAndProbesIt(t *testing.T) {
	clock := &fakeClock{}
	clock.ns.Store(time.Unix(1_767_225_600, 0).UnixNano())
	p := &watchedProvider{name: "p", legs: []string{"fast"}}
	other := &watchedProvider{name: "q", legs: []string{"fast"}}
	e := start(t, Config{Deadline: 5 * time.Second, Now: clock.now, Tools: map[string][]string{"p": {"fast"}, "q": {"fast"}},
		Breaker: breaker.Config{Window: 10, FailureRatio: 0.5, MinCalls: 3, CoolDown: 30 * time.Second}}, p, other)
	req := &quote.Request{From: &registry.Chain{ID: 1}, To: &registry.Chain{ID: 2}, FromToken: &registry.Token{}, ToToken: &registry.Token{}}
	p.failing.Store(true)
	for i := 0; i < 3; i++ {
		out, _ := e.Race(context.Background(), req, []string{"p", "q"}, nil)
		if out[0].Skipped || out[0].Err == nil || out[1].Route == nil {
			t.Fatalf("race %d: %+v", i, out)
		}
	}
	if got := e.ToolStatus("p", "fast"); got != breaker.StatusUnavailable {
		t.Fatalf("status after 3 failures: %s", got)
	}
	calls := p.calls.Load()
	began := time.Now()
	out, end := e.Race(context.Background(), req, []string{"p"}, nil)
	if time.Since(began) > time.Second || end.Reason != quote.StopAllAnswered || !out[0].Skipped || p.calls.Load() != calls {
		t.Fatalf("open leg: %+v %+v, %d calls (had %d)", out, end, p.calls.Load(), calls)
	}
	if err := quote.Failure(req, out); err.Code != apierr.UpstreamMaintenance || err.HTTPStatus() != 503 ||
		fmt.Sprint(err.Details["tools"]) != "[fast]" {
		t.Fatalf("failure %+v", err)
	}
	if tm := quote.NewTiming(out, end, nil); tm.Legs[0].Status != quote.LegSkipped {
		t.Fatalf("timing %+v", tm)
	}
	// Past the cool-down: one probe. It fails: open again.
	clock.advance(31 * time.Second)
	if got := e.ToolStatus("p", "fast"); got != breaker.StatusDegraded {
		t.Fatalf("status past the cool-down: %s", got)
	}
	out, _ = e.Race(context.Background(), req, []string{"p"}, nil)
	if out[0].Skipped || p.calls.Load() != calls+1 {
		t.Fatalf("probe not sent: %+v", out)
	}
	out, _ = e.Race(context.Background(), req, []string{"p"}, nil)
	if !out[0].Skipped {
		t.Fatalf("a failed probe left the leg open to calls: %+v", out)
	}
	// The upstream is back; the next probe closes the breaker.
	p.failing.Store(false)
	clock.advance(31 * time.Second)
	for i := 0; i < 3; i++ {
		out, _ = e.Race(context.Background(), req, []string{"p"}, nil)
		if out[0].Skipped || out[0].Route == nil {
			t.Fatalf("race %d after recovery: %+v", i, out)
		}
	}
	if got := e.ToolStatus("p", "fast"); got != breaker.StatusOK {
		t.Fatalf("status after recovery: %s", got)
	}
	v := metricstest.Values(t, e.Collector())
	for k, want := range map[string]float64{
		`swapgate_quote_leg_skipped_total{provider="p",tool="fast"}`:       2,
		`swapgate_quote_leg_breaker_opens_total{provider="p",tool="fast"}`: 2,
		`swapgate_quote_leg_breaker_state{provider="p",tool="fast"}`:       0,
		`swapgate_quote_leg_breaker_state{provider="q",tool="fast"}`:       0,
	} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
}

// TestBreakerJudgesTimeoutsOnlyAtTheDeadline checks that a leg that does
// not answer by the server's deadline counts against its breaker, and one
// cut off earlier by the request's maxWait does not.
func TestBreakerJudgesTimeoutsOnlyAtTheDeadline(t *testing.T) {
	p := &watchedProvider{name: "p", legs: []string{"slow"}, cancelled: make(chan string, 16)}
	e := start(t, Config{Deadline: 150 * time.Millisecond, Tools: map[string][]string{"p": {"slow"}},
		Breaker: breaker.Config{Window: 10, FailureRatio: 0.5, MinCalls: 2, CoolDown: time.Hour}}, p)
	short := &quote.Request{Strategy: quote.StrategyParams{MaxWait: 20 * time.Millisecond, HasMaxWait: true}}
	for i := 0; i < 4; i++ {
		if _, end := e.Race(context.Background(), short, []string{"p"}, nil); end.Reason != quote.StopMaxWait {
			t.Fatalf("ended %+v", end)
		}
	}
	if got := e.ToolStatus("p", "slow"); got != breaker.StatusOK {
		t.Fatalf("legs cut off by maxWait were judged: %s", got)
	}
	for i := 0; i < 2; i++ {
		if _, end := e.Race(context.Background(), &quote.Request{}, []string{"p"}, nil); end.Reason != quote.StopDeadline {
			t.Fatalf("ended %+v", end)
		}
	}
	if got := e.ToolStatus("p", "slow"); got != breaker.StatusUnavailable {
		t.Fatalf("two timeouts at the deadline: %s", got)
	}
}

// A network provider's pool takes NetworkPoolSize workers unless sized by
// name, and its workers leave the warm dispatcher alone: 200 legs that each
// wait on "the network" all run at once, none refused, and the warm
// goroutines are free while they wait; a provider sized by PoolSize alone
// is capped at its workers and refuses the rest.
func TestNetworkProvidersPoolForLatency(t *testing.T) {
	const legs = 200
	cases := []struct {
		name         string
		cfg          Config
		wantWorkers  float64
		wantRefusals bool
	}{
		{"network default", Config{NetworkProviders: []string{"net"}, NetworkPoolSize: legs}, legs, false},
		{"network sized by name", Config{NetworkProviders: []string{"net"}, PoolSizes: map[string]int{"net": 300}}, 300, false},
		{"not network", Config{}, 4, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			net := &fakeProvider{name: "net", legs: []string{""}, delay: 100 * time.Millisecond}
			if !tc.wantRefusals {
				net.release = make(chan struct{})
			}
			warm := actors.NewWarmDispatcher(2, 10)
			t.Cleanup(warm.Close)
			cfg := tc.cfg
			cfg.Deadline, cfg.PoolSize, cfg.QueuePerWorker, cfg.Dispatcher = 10*time.Second, 4, 1, warm
			e := start(t, cfg, net)
			done := make(chan []quote.LegOutcome, legs)
			for i := 0; i < legs; i++ {
				go func() { done <- raceOf(e, context.Background(), []string{"net"}) }()
			}
			if !tc.wantRefusals {
				// Every leg is in the provider at once, and then no warm
				// goroutine is busy: none waits on the network. (A pool
				// holding them would keep both busy until the release.)
				waitFor(t, "every leg in flight", func() bool { return net.calls.Load() == legs })
				waitFor(t, "the warm goroutines free while every leg waits on the network", func() bool { return warm.Stats().Busy == 0 })
				close(net.release)
			}
			var routes int
			for i := 0; i < legs; i++ {
				for _, o := range <-done {
					if o.Route != nil {
						routes++
					}
				}
			}
			v := metricstest.Values(t, e.Collector())
			if got := v[`swapgate_provider_pool_workers{provider="net"}`]; got != tc.wantWorkers {
				t.Errorf("workers %v, want %v", got, tc.wantWorkers)
			}
			refused := v[`swapgate_provider_pool_saturation_refusals_total{provider="net"}`] > 0
			if refused != tc.wantRefusals {
				t.Errorf("refusals %v, want %v (%d routes)", v[`swapgate_provider_pool_saturation_refusals_total{provider="net"}`], tc.wantRefusals, routes)
			}
			if !tc.wantRefusals && routes != legs {
				t.Errorf("%d of %d legs answered", routes, legs)
			}
		})
	}
}

// waitFor polls cond until it holds, failing t with what after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited 5 s for %s", what)
		}
	}
}
