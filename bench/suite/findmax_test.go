package suite

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/bench/loadgen"
)

// modelProbe is a server that sustains anything up to limit requests per
// second and answers slowly past it, without any load: the stepping logic
// alone.
func modelProbe(limit float64, tried *[]float64) Probe {
	return func(_ context.Context, rate float64) (Step, error) {
		*tried = append(*tried, rate)
		s := Step{RPS: rate, Requests: int64(rate), P50Us: 100, P99Us: 500}
		if rate > limit {
			s.P99Us = 900_000
		}
		return s, nil
	}
}

func TestFindMaxSteps(t *testing.T) {
	cfg := FindMaxConfig{Start: 100, Factor: 2, Refine: 3, MaxSteps: 20, MinRate: 10, MaxRate: 1e6, P99Bound: 50 * time.Millisecond}
	for _, tc := range []struct {
		name   string
		limit  float64
		cfg    func(*FindMaxConfig)
		lo, hi float64
		capped bool
		steps  int
	}{
		// Up 100, 200, ..., 1600 (fails), then three bisections in (800, 1600).
		{"climbs then bisects", 1000, nil, 800, 1000, false, 8},
		// Fails at 100 and 50, sustains 25, bisects in (25, 50).
		{"starts too high", 30, nil, 25, 30, false, 6},
		{"capped", 1e9, func(c *FindMaxConfig) { c.MaxRate = 500 }, 500, 500, true, 4},
		{"nothing sustained", 1, nil, 0, 0, false, 5},
		{"step budget", 1e9, func(c *FindMaxConfig) { c.MaxSteps = 3 }, 400, 400, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			var tried []float64
			res, err := FindMax(context.Background(), c, modelProbe(tc.limit, &tried))
			if err != nil {
				t.Fatal(err)
			}
			if res.MaxRate < tc.lo || res.MaxRate > tc.hi || res.Capped != tc.capped || len(res.Steps) != tc.steps {
				t.Fatalf("max %v capped %v after %d steps %v; want [%v, %v] capped %v in %d", res.MaxRate, res.Capped, len(res.Steps), tried, tc.lo, tc.hi, tc.capped, tc.steps)
			}
			if res.MaxRate > 0 && (res.AtMax == nil || res.AtMax.Rate != res.MaxRate || !res.AtMax.Pass) {
				t.Fatalf("step at max: %+v", res.AtMax)
			}
			for _, s := range res.Steps {
				if s.Pass != (s.Rate <= tc.limit) || (!s.Pass && s.Reason == "") {
					t.Fatalf("step %+v judged wrong against limit %v", s, tc.limit)
				}
			}
		})
	}
	if _, err := FindMax(context.Background(), FindMaxConfig{Start: 10, Factor: 1}, nil); err == nil {
		t.Fatal("factor 1 accepted")
	}
}

func TestFindMaxJudge(t *testing.T) {
	c := FindMaxConfig{P99Bound: 10 * time.Millisecond, MinAchieved: 0.9}
	for _, tc := range []struct {
		s    Step
		pass bool
	}{
		{Step{Rate: 100, RPS: 100, Requests: 100, P99Us: 9_000}, true},
		{Step{Rate: 100, RPS: 100, Requests: 100, P99Us: 11_000}, false},
		{Step{Rate: 100, RPS: 100, Requests: 100, Errors: 1}, false},
		{Step{Rate: 100, RPS: 80, Requests: 80}, false},
		{Step{Rate: 100}, false},
	} {
		s := tc.s
		c.judge(&s)
		if s.Pass != tc.pass || (s.Pass == (s.Reason != "")) {
			t.Errorf("%+v: pass %v reason %q", tc.s, s.Pass, s.Reason)
		}
	}
}

// degradingServer answers at once while it is asked fewer than limit
// requests per second, counted over 100 ms windows, and 400 ms late past
// that: a server with a capacity, for find-max against real load.
func degradingServer(t *testing.T, limit int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	window, count := int64(0), 0
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		w := time.Now().UnixMilli() / 100
		mu.Lock()
		if w != window {
			window, count = w, 0
		}
		count++
		over := count > limit/10
		mu.Unlock()
		if over {
			time.Sleep(400 * time.Millisecond)
		}
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"data":{"status":"ok"},"error":null,"meta":{}}`)
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

// TestFindMaxAgainstDegradingServer searches a server that degrades past
// 300 requests per second: the rate found lies between the last doubling
// below the capacity and the capacity itself.
func TestFindMaxAgainstDegradingServer(t *testing.T) {
	url := degradingServer(t, 300)
	var lines int
	probe := LoadProbe(loadgen.Config{BaseURL: url, Scenario: loadgen.NewStaticScenario("ping", "/v1/ping"), Workers: 32, Interval: 100 * time.Millisecond},
		100*time.Millisecond, 300*time.Millisecond, []int{os.Getpid()}, func(float64, loadgen.Line) { lines++ })
	// The search measures real time: a machine busy with other tests can
	// stall a step and make it fail for its own reasons, so a search gets
	// three tries before the result counts as wrong.
	var res FindMaxResult
	for try := 1; ; try++ {
		var err error
		res, err = FindMax(context.Background(), FindMaxConfig{
			Start: 50, Factor: 2, Refine: 2, MaxSteps: 10, MinRate: 10, MaxRate: 10_000, P99Bound: 200 * time.Millisecond,
		}, probe)
		if err != nil {
			t.Fatal(err)
		}
		if res.MaxRate >= 200 && res.MaxRate <= 330 && !res.Capped {
			break
		}
		if try == 3 {
			t.Fatalf("max rate %v (capped %v), want in [200, 330]; steps %+v", res.MaxRate, res.Capped, res.Steps)
		}
		t.Logf("try %d: max rate %v; steps %+v", try, res.MaxRate, res.Steps)
	}
	last := res.Steps[len(res.Steps)-1]
	if len(res.Steps) < 4 || res.AtMax.RPS < 0.9*res.MaxRate || lines == 0 || (last.Pass && last.Rate < res.MaxRate) ||
		res.AtMax.GenCPU <= 0 || res.AtMax.ServerCPU <= 0 {
		t.Fatalf("steps %+v, %d progress lines", res.Steps, lines)
	}
}
