package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// stubServer is an in-process fasthttp server on 127.0.0.1:0 that counts
// what it serves: every 7th request gets a 429 envelope, /v1/chains answers
// a body that is not the envelope, and delay slows every answer.
type stubServer struct {
	url    string
	served atomic.Int64
	keys   atomic.Int64
	posts  atomic.Int64
}

func startStub(t *testing.T, delay time.Duration) *stubServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stubServer{url: "http://" + ln.Addr().String()}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		n := s.served.Add(1)
		if len(ctx.Request.Header.Peek("X-API-Key")) > 0 {
			s.keys.Add(1)
		}
		if ctx.IsPost() {
			s.posts.Add(1)
		}
		if delay > 0 {
			time.Sleep(delay)
		}
		ctx.SetContentType("application/json")
		switch {
		case string(ctx.Path()) == "/v1/chains":
			ctx.SetBodyString(`<html>oops</html>`)
		case n%7 == 0:
			ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
			ctx.SetBodyString(`{"data":null,"error":{"code":"RATE_LIMIT","message":"slow down"}}`)
		default:
			ctx.SetBodyString(`{"data":{"status":"ok"},"meta":{}}`)
		}
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

func mustScenario(t *testing.T, name string) Scenario {
	t.Helper()
	s, err := NewScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkSummary asserts what holds for every run: counts add up and match
// the server's, percentiles are ordered.
func checkSummary(t *testing.T, s *Summary, served int64) {
	t.Helper()
	var classes int64
	for _, n := range s.Class {
		classes += n
	}
	if s.Requests == 0 || classes+s.Transport != s.Requests {
		t.Fatalf("requests %d != classes %d + transport %d", s.Requests, classes, s.Transport)
	}
	var byStatus int64
	for _, n := range s.Status {
		byStatus += n
	}
	if byStatus != classes {
		t.Fatalf("status counts %d != class counts %d", byStatus, classes)
	}
	if served != s.Requests {
		t.Fatalf("server served %d, summary counts %d", served, s.Requests)
	}
	l := s.Latency
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Fatalf("percentiles out of order: %+v", l)
	}
	if s.RPS <= 0 || s.ElapsedSec <= 0 {
		t.Fatalf("rps %v elapsed %v", s.RPS, s.ElapsedSec)
	}
}

func TestRunClosedLoop(t *testing.T) {
	stub := startStub(t, 0)
	var out bytes.Buffer
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: mustScenario(t, "ping"), Workers: 4,
		Duration: 300 * time.Millisecond, MaxRequests: 1 << 30, Interval: 100 * time.Millisecond,
		APIKey: "sk_test",
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, s, stub.served.Load())
	if s.StopReason != StopDuration || s.Mode != "closed" || !s.PartnerKey {
		t.Fatalf("summary header: %+v", s)
	}
	if s.ElapsedSec < 0.3 || s.ElapsedSec > 2 {
		t.Fatalf("run took %vs, want about 0.3s", s.ElapsedSec)
	}
	if s.Status[429] == 0 || s.Errors != s.Status[429] || s.BadEnvelope != 0 {
		t.Fatalf("errors %d, 429s %d, bad envelopes %d", s.Errors, s.Status[429], s.BadEnvelope)
	}
	if len(s.ErrorSamples) == 0 || !strings.Contains(s.ErrorSamples[0].Body, "RATE_LIMIT") {
		t.Fatalf("error samples: %+v", s.ErrorSamples)
	}
	if stub.keys.Load() != s.Requests {
		t.Fatalf("%d of %d requests carried the API key", stub.keys.Load(), s.Requests)
	}
	// Header, at least two 100 ms lines and the final one, whose request
	// column adds up to the total.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || lines[0] != strings.TrimSuffix(textHeader, "\n") {
		t.Fatalf("report:\n%s", out.String())
	}
	var sum int64
	for _, l := range lines[1:] {
		var elapsed string
		var n int64
		if _, err := fmt.Sscan(l, &elapsed, &n); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		sum += n
	}
	if sum != s.Requests {
		t.Fatalf("per-interval requests add to %d, total %d", sum, s.Requests)
	}
	var back Summary
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Requests != s.Requests || back.Status[429] != s.Status[429] {
		t.Fatalf("summary JSON round trip: %v\n%s", err, buf.String())
	}
}

func TestRunStopsAtMaxRequests(t *testing.T) {
	stub := startStub(t, 0)
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: mustScenario(t, "quote"), Workers: 4,
		Duration: 10 * time.Second, MaxRequests: 50, JSONLines: true,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, s, stub.served.Load())
	if s.Requests != 50 || s.StopReason != StopMaxRequests || s.ElapsedSec > 5 {
		t.Fatalf("requests %d stop %q after %vs", s.Requests, s.StopReason, s.ElapsedSec)
	}
}

func TestRunCountsBadEnvelopes(t *testing.T) {
	stub := startStub(t, 0)
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: mustScenario(t, "chains"), Workers: 2,
		Duration: 5 * time.Second, MaxRequests: 20,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, s, stub.served.Load())
	if s.BadEnvelope != s.Class["2xx"] || s.Errors != 20 {
		t.Fatalf("bad envelopes %d of %d 2xx, errors %d", s.BadEnvelope, s.Class["2xx"], s.Errors)
	}
}

func TestRunOpenLoopFixedRate(t *testing.T) {
	stub := startStub(t, 0)
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: mustScenario(t, "tokens"), Workers: 4,
		Duration: 400 * time.Millisecond, MaxRequests: 1 << 20, Rate: 250, Arrival: ArrivalFixed,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, s, stub.served.Load())
	// 250/s for 0.4 s is 100 requests; the last may fall on the boundary.
	if s.Requests+s.Unsent < 95 || s.Requests+s.Unsent > 100 || s.Mode != "open" {
		t.Fatalf("open loop sent %d (+%d unsent), want about 100", s.Requests, s.Unsent)
	}
}

// TestRunOpenLoopChargesQueueing shows coordinated omission being avoided:
// one worker against a 20 ms server at 200 requests/s falls behind, and the
// latencies grow with the backlog instead of staying at 20 ms.
func TestRunOpenLoopChargesQueueing(t *testing.T) {
	stub := startStub(t, 20*time.Millisecond)
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: mustScenario(t, "ping"), Workers: 1,
		Duration: 500 * time.Millisecond, MaxRequests: 1 << 20, Rate: 200, Seed: 1,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, s, stub.served.Load())
	if s.Latency.Max < 100_000 {
		t.Fatalf("max latency %dµs: queueing behind slow answers was not charged", s.Latency.Max)
	}
	if s.Unsent == 0 {
		t.Fatalf("no unsent requests reported although the server could serve at most 50/s of 200/s")
	}
}

func TestRunRefusesNonLoopback(t *testing.T) {
	_, err := Run(context.Background(), Config{
		BaseURL: "http://10.0.0.1:8080", Scenario: mustScenario(t, "ping"), Workers: 1,
		Duration: time.Second, MaxRequests: 1,
	}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), ErrNotLoopback.Error()) {
		t.Fatalf("err = %v, want a loopback refusal", err)
	}
}

func TestRunValidatesBounds(t *testing.T) {
	base := Config{BaseURL: "http://127.0.0.1:1", Scenario: staticScenario{"ping", "/v1/ping"}, Workers: 1, Duration: time.Second, MaxRequests: 1}
	for name, mutate := range map[string]func(*Config){
		"no workers":        func(c *Config) { c.Workers = 0 },
		"too many":          func(c *Config) { c.Workers = MaxWorkers + 1 },
		"no duration":       func(c *Config) { c.Duration = 0 },
		"too long":          func(c *Config) { c.Duration = MaxDuration + time.Second },
		"no max requests":   func(c *Config) { c.MaxRequests = 0 },
		"negative rate":     func(c *Config) { c.Rate = -1 },
		"bad arrival":       func(c *Config) { c.Arrival = "burst" },
		"warm-up too long":  func(c *Config) { c.Warmup = c.Duration },
		"negative warm-up":  func(c *Config) { c.Warmup = -time.Second },
		"ramp past warm-up": func(c *Config) { c.Warmup, c.RampUp = 100*time.Millisecond, 200*time.Millisecond },
		"negative ramp":     func(c *Config) { c.RampUp = -time.Second },
	} {
		c := base
		mutate(&c)
		if _, err := Run(context.Background(), c, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRunWarmupExcluded runs 500 ms at 400/s with a 250 ms warm-up: about
// half the requests are warm-up, shown in the interval lines but not in the
// summary, whose rate is over the measured 250 ms.
func TestRunWarmupExcluded(t *testing.T) {
	stub := startStub(t, 0)
	var lines []Line
	var s *Summary
	// The counts depend on the schedule being kept: a machine busy with
	// other tests can stall the generator, so the run gets three tries.
	for try := 1; ; try++ {
		lines = lines[:0]
		stub.served.Store(0)
		var err error
		s, err = Run(context.Background(), Config{
			BaseURL: stub.url, Scenario: mustScenario(t, "tokens"), Workers: 4,
			Duration: 500 * time.Millisecond, Warmup: 250 * time.Millisecond, MaxRequests: 1 << 20,
			Rate: 400, Arrival: ArrivalFixed, Interval: 100 * time.Millisecond,
			OnInterval: func(l Line) { lines = append(lines, l) },
		}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if s.WarmupRequests >= 90 && s.WarmupRequests <= 101 && s.Requests >= 90 && s.Requests <= 101 {
			break
		}
		if try == 3 {
			t.Fatalf("warm-up %d, measured %d: want about 100 each", s.WarmupRequests, s.Requests)
		}
	}
	if served := stub.served.Load(); served != s.Requests+s.WarmupRequests {
		t.Fatalf("served %d != measured %d + warm-up %d", served, s.Requests, s.WarmupRequests)
	}
	if s.WarmupSec != 0.25 || s.ElapsedSec < 0.2 || s.ElapsedSec > 1.5 || s.RPS < 100 {
		t.Fatalf("warm-up %vs, measured %vs, rps %v", s.WarmupSec, s.ElapsedSec, s.RPS)
	}
	var total int64
	for _, l := range lines {
		total += l.Requests
	}
	if len(lines) < 3 || !lines[0].Warmup || lines[len(lines)-1].Warmup || total != s.Requests+s.WarmupRequests {
		t.Fatalf("interval lines %+v add to %d", lines, total)
	}
	qs := CurveQuantiles()
	if len(s.Curve) != len(qs) {
		t.Fatalf("curve has %d points, want %d", len(s.Curve), len(qs))
	}
	for i, p := range s.Curve {
		if p.Percentile != qs[i] || (i > 0 && p.LatencyUs < s.Curve[i-1].LatencyUs) {
			t.Fatalf("curve not increasing at %d: %+v", i, s.Curve)
		}
	}
	if s.Curve[len(s.Curve)-1].LatencyUs != s.Latency.Max {
		t.Fatalf("curve ends at %d, max is %d", s.Curve[len(s.Curve)-1].LatencyUs, s.Latency.Max)
	}
}

func TestRampedRate(t *testing.T) {
	cfg := Config{Rate: 1000, RampUp: time.Second}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 100}, {500 * time.Millisecond, 550}, {time.Second, 1000}, {3 * time.Second, 1000}} {
		if got := rampedRate(cfg, c.at); got != c.want {
			t.Errorf("rate at %s = %g, want %g", c.at, got, c.want)
		}
	}
	if got := rampedRate(Config{Rate: 1000}, 0); got != 1000 {
		t.Errorf("no ramp: rate %g at the start, want 1000", got)
	}
}

// TestRunRampsUpInTheWarmup runs 500 ms at 400/s, the first 250 ms a warm-up
// ramping from 40/s: the warm-up sends about 55 requests (the ramp's mean
// rate, 220/s, for 250 ms), not 100, and the measured part about 100.
func TestRunRampsUpInTheWarmup(t *testing.T) {
	stub := startStub(t, 0)
	for try := 1; ; try++ {
		s, err := Run(context.Background(), Config{
			BaseURL: stub.url, Scenario: mustScenario(t, "tokens"), Workers: 4,
			Duration: 500 * time.Millisecond, Warmup: 250 * time.Millisecond, RampUp: 250 * time.Millisecond,
			MaxRequests: 1 << 20, Rate: 400, Arrival: ArrivalFixed,
		}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if s.WarmupRequests >= 45 && s.WarmupRequests <= 65 && s.Requests >= 90 && s.Requests <= 101 {
			return
		}
		if try == 3 {
			t.Fatalf("warm-up %d, measured %d: want about 55 and 100", s.WarmupRequests, s.Requests)
		}
	}
}

func TestRunSendsPosts(t *testing.T) {
	stub := startStub(t, 0)
	s, err := Run(context.Background(), Config{
		BaseURL: stub.url, Scenario: NewPostScenario("hook", "/v1/partner/webhooks/x/test"), Workers: 2,
		Duration: 5 * time.Second, MaxRequests: 30,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Scenario != "hook" || s.Requests != 30 || stub.posts.Load() != 30 {
		t.Fatalf("%d requests, %d POSTs", s.Requests, stub.posts.Load())
	}
}

// TestRunSpreadsOverNodes loads three stub servers as one service (a
// cluster's nodes): every one serves a fair share of the requests, the
// sum is what the summary counts, and a further URL that is not loopback,
// or not of the base URL's scheme, is refused.
func TestRunSpreadsOverNodes(t *testing.T) {
	nodes := []*stubServer{startStub(t, 2*time.Millisecond), startStub(t, 2*time.Millisecond), startStub(t, 2*time.Millisecond)}
	sum, err := Run(context.Background(), Config{
		BaseURL: nodes[0].url, SpreadURLs: []string{nodes[1].url, nodes[2].url}, Scenario: mustScenario(t, "ping"),
		Workers: 12, Rate: 600, Arrival: ArrivalFixed, Duration: time.Second, MaxRequests: 1 << 30,
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var served int64
	for i, n := range nodes {
		got := n.served.Load()
		served += got
		// A fair share is a third; allow for the connections' uneven
		// start and for a loaded machine.
		if float64(got) < 0.15*float64(sum.Requests) {
			t.Errorf("node %d served %d of %d requests", i, got, sum.Requests)
		}
	}
	checkSummary(t, sum, served)

	for _, tc := range []struct{ name, url, want string }{
		{"not loopback", "http://10.0.0.1:8080", ErrNotLoopback.Error()},
		{"another scheme", "https" + strings.TrimPrefix(nodes[1].url, "http"), "scheme and path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), Config{BaseURL: nodes[0].url, SpreadURLs: []string{tc.url},
				Scenario: mustScenario(t, "ping"), Workers: 1, Duration: time.Second, MaxRequests: 1}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
