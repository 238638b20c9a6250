package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// headerEvery repeats the column header so that a long run stays readable
// when scrolled, as pebble's bench does.
const headerEvery = 20

// Line is one per-interval report.
type Line struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration `json:"-"`
	// ElapsedSec is Elapsed in seconds, for JSON readers.
	ElapsedSec float64 `json:"elapsedSec"`
	Counts
	// RPS is the completed requests of the interval divided by its actual
	// length (ticks can be late on a loaded machine).
	RPS     float64     `json:"rps"`
	Latency Percentiles `json:"latencyUs"`
	// Warmup is set on lines that end within the run's warm-up.
	Warmup bool `json:"warmup,omitempty"`
}

// Reporter turns the recorder's intervals into one line each, as text
// columns or as JSON objects (one per line).
type Reporter struct {
	w      io.Writer
	rec    *Recorder
	asJSON bool
	start  time.Time
	last   time.Time
	lines  int
	warmup time.Duration
}

// NewReporter returns a reporter for a run started at start. The times it
// is given come from the caller's clock, which makes it testable without
// sleeping.
func NewReporter(w io.Writer, rec *Recorder, start time.Time, asJSON bool) *Reporter {
	return &Reporter{w: w, rec: rec, asJSON: asJSON, start: start, last: start}
}

// Tick closes the interval ending at now, writes its line and returns it.
func (r *Reporter) Tick(now time.Time) (Line, error) {
	iv := r.rec.TakeInterval()
	l := Line{Elapsed: now.Sub(r.start), Counts: iv.Counts, Latency: iv.Latency}
	l.ElapsedSec = l.Elapsed.Seconds()
	l.Warmup = l.Elapsed <= r.warmup
	if span := now.Sub(r.last).Seconds(); span > 0 {
		l.RPS = float64(iv.Requests) / span
	}
	r.last = now
	if r.asJSON {
		b, err := json.Marshal(l)
		if err != nil {
			return l, fmt.Errorf("encode report line: %w", err)
		}
		if _, err := r.w.Write(append(b, '\n')); err != nil {
			return l, fmt.Errorf("write report line: %w", err)
		}
		return l, nil
	}
	if r.lines%headerEvery == 0 {
		if _, err := io.WriteString(r.w, textHeader); err != nil {
			return l, fmt.Errorf("write report header: %w", err)
		}
	}
	r.lines++
	if _, err := io.WriteString(r.w, formatText(l)); err != nil {
		return l, fmt.Errorf("write report line: %w", err)
	}
	return l, nil
}

const textHeader = "_elapsed___requests_____2xx____4xx____5xx____err________rps__p50(µs)__p90(µs)__p99(µs)_p99.9(µs)__max(µs)\n"

// formatText renders l under textHeader. "err" is requests with no HTTP
// answer; 2xx answers that fail the envelope check are counted as 2xx here
// and as badEnvelope in the summary.
func formatText(l Line) string {
	return fmt.Sprintf("%7.1fs %10d %7d %6d %6d %6d %10.1f %8d %8d %8d %9d %8d\n",
		l.Elapsed.Seconds(), l.Requests, l.Class["2xx"], l.Class["4xx"], l.Class["5xx"], l.Transport,
		l.RPS, l.Latency.P50, l.Latency.P90, l.Latency.P99, l.Latency.P999, l.Latency.Max)
}
