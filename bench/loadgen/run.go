package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Stop reasons reported in the summary.
const (
	StopDuration    = "duration"
	StopMaxRequests = "max-requests"
	StopCanceled    = "canceled"
)

// Summary is the end-of-run report.
type Summary struct {
	Scenario   string  `json:"scenario"`
	Target     string  `json:"target"`
	Mode       string  `json:"mode"`
	Workers    int     `json:"workers"`
	TargetRate float64 `json:"targetRate,omitempty"`
	Arrival    string  `json:"arrival,omitempty"`
	PartnerKey bool    `json:"partnerKey"`
	StopReason string  `json:"stopReason"`
	ElapsedSec float64 `json:"elapsedSec"`
	Counts
	// Status counts answers by exact status code.
	Status map[int]int64 `json:"status"`
	// Unsent counts open-loop requests whose intended send time fell
	// within the run but that never went out because the generator was
	// still waiting on earlier ones: a non-zero value means the target rate
	// was not reached and the percentiles undercount the backlog.
	Unsent int64 `json:"unsent,omitempty"`
	// RPS is completed requests per second of wall time, over the
	// measured part of the run (after the warm-up).
	RPS     float64     `json:"rps"`
	Latency Percentiles `json:"latencyUs"`
	// Curve is the latency at each of CurveQuantiles, for percentile plots.
	Curve []CurvePoint `json:"curve,omitempty"`
	// WarmupSec is the warm-up's length; ElapsedSec, the counts and the
	// percentiles exclude it.
	WarmupSec float64 `json:"warmupSec,omitempty"`
	// WarmupRequests counts the requests sent during the warm-up.
	WarmupRequests int64         `json:"warmupRequests,omitempty"`
	ErrorSamples   []ErrorSample `json:"errorSamples,omitempty"`
}

// WriteJSON writes the summary as one line of JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// budget hands out request sequence numbers until MaxRequests is reached.
type budget struct {
	max  int64
	next atomic.Int64
}

func (b *budget) take() (uint64, bool) {
	n := b.next.Add(1)
	if n > b.max {
		return 0, false
	}
	return uint64(n - 1), true
}

func (b *budget) remaining() int64 { return max(0, b.max-b.next.Load()) }

func (b *budget) exhausted() bool { return b.next.Load() >= b.max }

// Run drives load as cfg says, writes one line per interval to out, and
// returns the summary once the duration has passed, the request budget is
// spent or ctx is canceled, whichever comes first. Requests in flight at the
// end finish (each is bounded by cfg.Timeout) and are counted.
//
// Latencies are always measured with the real monotonic clock; cfg.Clock
// only drives reporting.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Summary, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	target, err := ResolveTarget(ctx, cfg.Resolver, cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("load target: %w", err)
	}
	dials := []string{target.Dial}
	for _, u := range cfg.SpreadURLs {
		t, err := ResolveTarget(ctx, cfg.Resolver, u)
		if err != nil {
			return nil, fmt.Errorf("load target: %w", err)
		}
		if t.Scheme != target.Scheme || t.PathPrefix != target.PathPrefix {
			return nil, fmt.Errorf("load target %s: scheme and path must be those of %s", u, cfg.BaseURL)
		}
		dials = append(dials, t.Dial)
	}
	target.Dial = strings.Join(dials, ",") // fasthttp dials a list's addresses in turn
	hc := newHostClient(target, cfg.Workers, cfg.Timeout)
	if len(dials) > 1 {
		hc.ConnPoolStrategy = fasthttp.FIFO
	}
	defer hc.CloseIdleConnections()

	rec := NewRecorder()
	b := &budget{max: cfg.MaxRequests}
	var unsent atomic.Int64
	newRequester := func() *requester {
		full, _ := cfg.Scenario.(RequestScenario)
		return &requester{hc: hc, target: target, scenario: cfg.Scenario, full: full, apiKey: cfg.APIKey, timeout: cfg.Timeout, rec: rec}
	}

	// The start is read before the deadline is set, so a run stopped by its
	// deadline has always lasted at least cfg.Duration by this clock.
	startReal := time.Now()
	runCtx, cancel := context.WithDeadline(ctx, startReal.Add(cfg.Duration))
	defer cancel()
	measureFrom := startReal.Add(cfg.Warmup)
	rep := NewReporter(out, rec, cfg.Clock.Now(), cfg.JSONLines)
	rep.warmup = cfg.Warmup
	ticks, stopTicker := cfg.Clock.NewTicker(cfg.Interval)
	defer stopTicker()

	done := make(chan struct{})
	go func() {
		defer close(done)
		if cfg.Rate > 0 {
			runOpen(runCtx, cfg, startReal, measureFrom, b, &unsent, rec, newRequester)
		} else {
			runClosed(runCtx, cfg.Workers, measureFrom, b, rec, newRequester)
		}
	}()

	var reportErr error
	for waiting := true; waiting; {
		select {
		case now := <-ticks:
			l, err := rep.Tick(now)
			if err != nil && reportErr == nil {
				reportErr = err
				cancel() // nobody can read the report: stop the load
			}
			if cfg.OnInterval != nil {
				cfg.OnInterval(l)
			}
		case <-done:
			waiting = false
		}
	}
	elapsed := time.Since(startReal)
	if reportErr == nil {
		l, err := rep.Tick(cfg.Clock.Now())
		if err != nil {
			reportErr = err
		}
		if cfg.OnInterval != nil {
			cfg.OnInterval(l)
		}
	}
	// The measured part ends with the schedule (or earlier, when the budget
	// or ctx stopped it); the wait for answers still in flight after that
	// is not part of it, or a slow server's last answers would lower the
	// achieved rate of every request it served on time.
	measured := max(0, min(elapsed, cfg.Duration)-cfg.Warmup)

	counts, status, lat, samples := rec.Totals()
	s := &Summary{
		Scenario:       cfg.Scenario.Name(),
		Target:         cfg.BaseURL,
		Mode:           "closed",
		Workers:        cfg.Workers,
		PartnerKey:     cfg.APIKey != "",
		StopReason:     StopDuration,
		ElapsedSec:     measured.Seconds(),
		Counts:         counts,
		Status:         status,
		Unsent:         unsent.Load(),
		Latency:        lat,
		Curve:          rec.Curve(),
		WarmupSec:      cfg.Warmup.Seconds(),
		WarmupRequests: rec.WarmupRequests(),
		ErrorSamples:   samples,
	}
	if cfg.Rate > 0 {
		s.Mode, s.TargetRate, s.Arrival = "open", cfg.Rate, cfg.Arrival
	}
	switch {
	case b.exhausted():
		s.StopReason = StopMaxRequests
	case ctx.Err() != nil:
		s.StopReason = StopCanceled
	}
	if measured > 0 {
		s.RPS = float64(counts.Requests) / measured.Seconds()
	}
	if reportErr != nil {
		return s, reportErr
	}
	return s, nil
}

// runClosed keeps one request in flight per worker until ctx ends or the
// budget is spent. Requests started before measureFrom are warm-up.
func runClosed(ctx context.Context, workers int, measureFrom time.Time, b *budget, rec *Recorder, newRequester func() *requester) {
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newRequester()
			for ctx.Err() == nil {
				seq, ok := b.take()
				if !ok {
					return
				}
				t0 := time.Now()
				o := r.do(seq)
				if t0.Before(measureFrom) {
					rec.RecordWarmup(o, time.Since(t0))
				} else {
					rec.Record(o, time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
}

// job is one open-loop request with the time it should have been sent.
type job struct {
	seq      uint64
	intended time.Time
}

// runOpen schedules requests at cfg.Rate and hands them to cfg.Workers
// senders. Each latency runs from the intended send time, so time spent
// queued behind a slow answer counts against the server. Requests due
// before measureFrom are warm-up.
func runOpen(ctx context.Context, cfg Config, start, measureFrom time.Time, b *budget, unsent *atomic.Int64, rec *Recorder, newRequester func() *requester) {
	jobs := make(chan job, cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newRequester()
			for j := range jobs {
				if ctx.Err() != nil {
					unsent.Add(1)
					continue
				}
				o := r.do(j.seq)
				if j.intended.Before(measureFrom) {
					rec.RecordWarmup(o, time.Since(j.intended))
				} else {
					rec.Record(o, time.Since(j.intended))
				}
			}
		}()
	}
	schedule(ctx, cfg, start, b, unsent, jobs)
	close(jobs)
	wg.Wait()
}

// schedule emits jobs at their intended times until ctx ends, the planned
// end is reached or the budget is spent; when ctx ends while requests are
// due but not yet handed to a worker, those are counted as unsent.
func schedule(ctx context.Context, cfg Config, start time.Time, b *budget, unsent *atomic.Int64, jobs chan<- job) {
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	intended := start
	gap := func() time.Duration {
		rate := rampedRate(cfg, intended.Sub(start))
		if cfg.Arrival == ArrivalFixed {
			return time.Duration(float64(time.Second) / rate)
		}
		return time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
	}
	end := start.Add(cfg.Duration)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		intended = intended.Add(gap())
		if !intended.Before(end) {
			return
		}
		if ctx.Err() != nil {
			countBacklog(intended, gap, end, b, unsent)
			return
		}
		seq, ok := b.take()
		if !ok {
			return
		}
		if d := time.Until(intended); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return // this request was not yet due
			}
		}
		select {
		case jobs <- job{seq: seq, intended: intended}:
		case <-ctx.Done():
			unsent.Add(1)
			countBacklog(intended.Add(gap()), gap, end, b, unsent)
			return
		}
	}
}

// rampedRate is the rate offered at elapsed into the run: Rate, or during
// RampUp a line from a tenth of Rate up to Rate.
func rampedRate(cfg Config, elapsed time.Duration) float64 {
	if cfg.RampUp <= 0 || elapsed >= cfg.RampUp {
		return cfg.Rate
	}
	share := float64(elapsed) / float64(cfg.RampUp)
	return cfg.Rate * (0.1 + 0.9*share)
}

// countBacklog counts the intended send times from next up to the moment
// the run stopped (and within its planned end and the request budget): the
// requests the schedule called for that never went out.
func countBacklog(next time.Time, gap func() time.Duration, end time.Time, b *budget, unsent *atomic.Int64) {
	stopped := time.Now()
	for n := b.remaining(); n > 0 && next.Before(stopped) && next.Before(end); n-- {
		unsent.Add(1)
		next = next.Add(gap())
	}
}
