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
	"github.com/swapgate/swapgate/routing/quote"
)

// fakeProvider answers each leg after a delay, hangs, or panics.
type fakeProvider struct {
	name   string
	legs   []string
	delay  time.Duration
	hang   bool
	fail   bool         // answer every leg with an error
	panics atomic.Int32 // panic this many more times
	calls  atomic.Int32
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
	select {
	case <-time.After(f.delay):
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
	if took < deadline || took > deadline+2*time.Second {
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
