package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"

	"github.com/swapgate/swapgate/bench/loadgen"
	"github.com/swapgate/swapgate/internal/sse"
)

// StreamFigure is what a streamed-quote run measured besides its summary
// (whose latency is each stream's, from its intended send time to its done
// event): per stream, the time from the request written to its first route
// event read (FirstRoute), how long that route's leg took in its race, as
// the best event's timing gives it (FirstLeg), and the difference (Gap):
// what Swapgate and the connection add to the leg's own time — the request
// on its way into the race, the route's build and event on their way out.
// Latencies in microseconds.
type StreamFigure struct {
	Streams    int64               `json:"streams"`
	FirstRoute loadgen.Percentiles `json:"firstRouteUs"`
	FirstLeg   loadgen.Percentiles `json:"firstLegUs"`
	Gap        loadgen.Percentiles `json:"gapUs"`
	// RoutesPerStream is the mean count of route events.
	RoutesPerStream float64 `json:"routesPerStream"`
}

// streamLoad is one open-loop run of streamed quotes.
type streamLoad struct {
	base, key string
	paths     []string
	rate      float64
	warmup    time.Duration
	duration  time.Duration // warm-up included
	workers   int
	timeout   time.Duration
	interval  time.Duration
}

// streamResult is one stream as its client saw it.
type streamResult struct {
	outcome loadgen.Outcome
	// total runs from the intended send time to done; firstRoute from the
	// request written to the first route event; firstLeg is that route's
	// leg time in the race.
	total, firstRoute, firstLeg time.Duration
	routes                      int
	hasFirst                    bool
}

// runStreams offers streamed quotes at a fixed rate over paths, as
// loadgen's open loop does requests: arrivals evenly spaced, latency from
// each stream's intended send time, warm-up left out of the figures. It
// reports each interval to progress.
func runStreams(ctx context.Context, sl streamLoad, progress func(loadgen.Line)) (*loadgen.Summary, *StreamFigure, error) {
	if sl.rate <= 0 || len(sl.paths) == 0 || sl.workers < 1 {
		return nil, nil, fmt.Errorf("stream load: rate %g, %d paths, %d workers", sl.rate, len(sl.paths), sl.workers)
	}
	// A stream's connection closes after its done event: every stream
	// dials, as an EventSource's does.
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true, MaxConnsPerHost: sl.workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: sl.timeout}

	rec := loadgen.NewRecorder()
	var mu sync.Mutex
	var firstRoute, firstLeg, gap []time.Duration
	var streams, routes int64

	start := time.Now()
	measureFrom := start.Add(sl.warmup)
	runCtx, cancel := context.WithTimeout(ctx, sl.duration)
	defer cancel()
	type job struct {
		at  time.Time
		seq uint64
	}
	jobs := make(chan job, sl.workers)
	var wg sync.WaitGroup
	for range sl.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := streamOnce(ctx, client, sl.base+sl.paths[j.seq%uint64(len(sl.paths))], sl.key, j.at, rec.WantsSample())
				if j.at.Before(measureFrom) {
					rec.RecordWarmup(r.outcome, r.total)
					continue
				}
				rec.Record(r.outcome, r.total)
				if r.outcome.Failed() {
					continue
				}
				mu.Lock()
				streams++
				routes += int64(r.routes)
				if r.hasFirst {
					firstRoute = append(firstRoute, r.firstRoute)
					firstLeg = append(firstLeg, r.firstLeg)
					gap = append(gap, r.firstRoute-r.firstLeg)
				}
				mu.Unlock()
			}
		}()
	}
	gapBetween := time.Duration(float64(time.Second) / sl.rate)
	ticker := time.NewTicker(sl.interval)
	defer ticker.Stop()
	rep := loadgen.NewReporter(io.Discard, rec, start, false)
	next, seq := start, uint64(0)
schedule:
	for {
		wait := time.Until(next)
		timer := time.NewTimer(max(0, wait))
		select {
		case <-runCtx.Done():
			timer.Stop()
			break schedule
		case now := <-ticker.C:
			timer.Stop()
			if l, err := rep.Tick(now); err == nil && progress != nil {
				l.Warmup = now.Before(measureFrom)
				progress(l)
			}
			continue
		case <-timer.C:
		}
		select {
		case jobs <- job{next, seq}:
		case <-runCtx.Done():
			break schedule
		}
		next, seq = next.Add(gapBetween), seq+1
	}
	close(jobs)
	wg.Wait()
	if l, err := rep.Tick(time.Now()); err == nil && progress != nil {
		progress(l)
	}
	measured := max(0, sl.duration-sl.warmup)
	counts, status, lat, samples := rec.Totals()
	s := &loadgen.Summary{Scenario: "quote-stream", Target: sl.base, Mode: "open", Workers: sl.workers, TargetRate: sl.rate,
		Arrival: loadgen.ArrivalFixed, PartnerKey: sl.key != "", StopReason: loadgen.StopDuration, ElapsedSec: measured.Seconds(),
		Counts: counts, Status: status, Latency: lat, Curve: rec.Curve(), WarmupSec: sl.warmup.Seconds(),
		WarmupRequests: rec.WarmupRequests(), ErrorSamples: samples}
	if measured > 0 {
		s.RPS = float64(counts.Requests) / measured.Seconds()
	}
	if ctx.Err() != nil {
		s.StopReason = loadgen.StopCanceled
	}
	fig := &StreamFigure{Streams: streams, FirstRoute: percentiles(firstRoute), FirstLeg: percentiles(firstLeg), Gap: percentiles(gap)}
	if streams > 0 {
		fig.RoutesPerStream = float64(routes) / float64(streams)
	}
	return s, fig, ctx.Err()
}

// streamOnce makes one streamed quote, intended for time at (sent when the
// schedule handed it to a free worker), and reads it to its done event.
func streamOnce(ctx context.Context, client *http.Client, url, key string, at time.Time, keepBody bool) streamResult {
	var r streamResult
	fail := func(status int, body string) streamResult {
		r.outcome = loadgen.Outcome{Status: status, BadEnvelope: status == http.StatusOK}
		if keepBody {
			r.outcome.Body = []byte(body)
		}
		r.total = time.Since(at)
		return r
	}
	var wrote time.Time
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote = time.Now() }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return fail(0, err.Error())
	}
	req.Header.Set("Accept", "text/event-stream")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(0, err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fail(resp.StatusCode, string(b))
	}
	var firstTool, best string
	var evErr error
	err = readEvents(resp.Body, func(name, data string) bool {
		switch name {
		case "route":
			if r.routes == 0 {
				r.firstRoute = time.Since(wrote)
				var rt struct{ Tool string }
				_ = json.Unmarshal([]byte(data), &rt)
				firstTool = rt.Tool
			}
			r.routes++
		case "best":
			best = data
		case "error":
			evErr = fmt.Errorf("error event: %s", data)
		case "done":
			return false
		}
		return true
	})
	if err = errors.Join(err, evErr); err != nil {
		return fail(http.StatusOK, err.Error())
	}
	if best == "" {
		return fail(http.StatusOK, "the stream ended without its best event")
	}
	var b struct {
		Timing struct {
			Legs []struct {
				Tool string
				Ms   float64
			}
		}
	}
	if json.Unmarshal([]byte(best), &b) == nil && r.routes > 0 {
		for _, l := range b.Timing.Legs {
			if l.Tool == firstTool {
				r.firstLeg = time.Duration(l.Ms * float64(time.Millisecond))
				r.hasFirst = true
				break
			}
		}
	}
	r.outcome = loadgen.Outcome{Status: http.StatusOK}
	r.total = time.Since(at)
	return r
}

// readEvents reads Server-Sent Events, calling on with each one's name
// and data until it returns false or the stream ends; a stream that ends
// before on says so is an error.
func readEvents(body io.Reader, on func(name, data string) bool) error {
	events := sse.NewReader(bufio.NewReaderSize(body, 16<<10))
	for {
		ev, err := events.Next()
		if errors.Is(err, io.EOF) {
			return errors.New("the stream ended before its done event")
		}
		if err != nil {
			return err
		}
		if !on(ev.Name, ev.Data) {
			return nil
		}
	}
}

// percentiles summarises durations as loadgen does latencies.
func percentiles(ds []time.Duration) loadgen.Percentiles {
	if len(ds) == 0 {
		return loadgen.Percentiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) int64 {
		i := int(q * float64(len(s)))
		if i >= len(s) {
			i = len(s) - 1
		}
		return s[i].Microseconds()
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return loadgen.Percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), P999: at(0.999), Max: s[len(s)-1].Microseconds(),
		Mean: float64(sum.Microseconds()) / float64(len(s))}
}

// preflightStreams streams each path once: each must end with its best
// and done events, as preflight holds every other request to a 2xx
// envelope.
func preflightStreams(ctx context.Context, a *api, key, _ string, paths []string) error {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	var errs []error
	for _, p := range paths {
		r := streamOnce(ctx, client, a.base+p, key, time.Now(), true)
		if r.outcome.Failed() {
			errs = append(errs, fmt.Errorf("preflight: GET %s: %d %s", p, r.outcome.Status, r.outcome.Body))
		}
	}
	return errors.Join(errs...)
}
