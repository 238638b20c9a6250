package loadgen

import (
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: microsecond resolution, up to one minute, three
// significant digits (0.1% error), the usual HDR trade-off.
const (
	histMinUs   = 1
	histMaxUs   = int64(time.Minute / time.Microsecond)
	histSigFigs = 3
)

// maxErrorSamples is how many failing answers a run keeps verbatim.
const maxErrorSamples = 5

// maxSampleBody bounds each kept error body.
const maxSampleBody = 512

// Outcome classifies one request.
type Outcome struct {
	// Status is the HTTP status, or 0 when the request failed in transport
	// (refused, timed out, no free connection).
	Status int
	// BadEnvelope is set when the body is not the {"data":...} envelope.
	BadEnvelope bool
	// Body is the response body or the transport error text, kept only for
	// the first few failures.
	Body []byte
}

// Failed reports whether the outcome counts as an error.
func (o Outcome) Failed() bool {
	return o.Status < 200 || o.Status > 299 || o.BadEnvelope
}

// ErrorSample is one failing answer, as reported in the summary.
type ErrorSample struct {
	Status      int    `json:"status"`
	BadEnvelope bool   `json:"badEnvelope,omitempty"`
	Body        string `json:"body"`
}

// Counts are the request counters of a run or of one interval.
type Counts struct {
	Requests int64 `json:"requests"`
	// Errors counts transport errors, non-2xx answers and 2xx answers that
	// are not the envelope.
	Errors int64 `json:"errors"`
	// Class counts answers by status class: "2xx" ... "5xx".
	Class map[string]int64 `json:"statusClasses"`
	// Transport counts requests that got no HTTP answer.
	Transport int64 `json:"transportErrors"`
	// BadEnvelope counts answers whose body is not the envelope.
	BadEnvelope int64 `json:"badEnvelope"`
}

func (c *Counts) add(o Outcome) {
	c.Requests++
	if o.Failed() {
		c.Errors++
	}
	if o.BadEnvelope {
		c.BadEnvelope++
	}
	if o.Status == 0 {
		c.Transport++
		return
	}
	if c.Class == nil {
		c.Class = map[string]int64{}
	}
	c.Class[statusClass(o.Status)]++
}

func statusClass(status int) string {
	return strconv.Itoa(status/100) + "xx"
}

// Recorder accumulates outcomes and latencies from all workers. One mutex
// guards it: at the request rates one loopback machine reaches, recording is
// a few hundred nanoseconds against tens of microseconds per request.
type Recorder struct {
	mu       sync.Mutex
	interval *hdrhistogram.Histogram
	total    *hdrhistogram.Histogram
	ivCounts Counts
	counts   Counts
	status   map[int]int64
	samples  []ErrorSample
	// warmup counts the requests kept out of the totals (see RecordWarmup).
	warmup int64
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		interval: hdrhistogram.New(histMinUs, histMaxUs, histSigFigs),
		total:    hdrhistogram.New(histMinUs, histMaxUs, histSigFigs),
		status:   map[int]int64{},
	}
}

// Record adds one request's outcome and latency.
func (r *Recorder) Record(o Outcome, latency time.Duration) {
	us := latency.Microseconds()
	us = max(histMinUs, min(us, histMaxUs))
	r.mu.Lock()
	defer r.mu.Unlock()
	// Values are clamped into range, so RecordValue cannot fail.
	_ = r.interval.RecordValue(us)
	_ = r.total.RecordValue(us)
	r.ivCounts.add(o)
	r.counts.add(o)
	if o.Status != 0 {
		r.status[o.Status]++
	}
	if o.Failed() && len(r.samples) < maxErrorSamples {
		body := o.Body
		if len(body) > maxSampleBody {
			body = body[:maxSampleBody]
		}
		r.samples = append(r.samples, ErrorSample{Status: o.Status, BadEnvelope: o.BadEnvelope, Body: string(body)})
	}
}

// RecordWarmup adds one request sent during the warm-up: it shows in the
// interval being reported, so that the progress lines cover the whole run,
// but stays out of the totals, which describe the measured part only.
func (r *Recorder) RecordWarmup(o Outcome, latency time.Duration) {
	us := latency.Microseconds()
	us = max(histMinUs, min(us, histMaxUs))
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.interval.RecordValue(us)
	r.ivCounts.add(o)
	r.warmup++
}

// WarmupRequests is the number of requests recorded with RecordWarmup.
func (r *Recorder) WarmupRequests() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.warmup
}

// WantsSample reports whether the next failure's body would be kept, so
// that workers copy bodies only while it is useful.
func (r *Recorder) WantsSample() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.samples) < maxErrorSamples
}

// Interval is the statistics of one reporting interval.
type Interval struct {
	Counts
	Latency Percentiles
}

// TakeInterval returns the statistics since the previous call and starts a
// new interval.
func (r *Recorder) TakeInterval() Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	iv := Interval{Counts: r.ivCounts, Latency: percentilesOf(r.interval)}
	r.ivCounts = Counts{}
	r.interval.Reset()
	return iv
}

// Totals returns the statistics of the whole run so far.
func (r *Recorder) Totals() (Counts, map[int]int64, Percentiles, []ErrorSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts
	c.Class = cloneMap(r.counts.Class)
	return c, cloneMap(r.status), percentilesOf(r.total), append([]ErrorSample(nil), r.samples...)
}

// Curve returns the latency of the whole run at each of CurveQuantiles,
// the points of an HDR percentile plot.
func (r *Recorder) Curve() []CurvePoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total.TotalCount() == 0 {
		return nil
	}
	qs := CurveQuantiles()
	out := make([]CurvePoint, 0, len(qs))
	for _, q := range qs {
		out = append(out, CurvePoint{Percentile: q, LatencyUs: r.total.ValueAtQuantile(q)})
	}
	return out
}

// CurveQuantiles lists the percentiles Curve reports, in increasing order:
// dense towards the tail, where an HDR plot's logarithmic axis spends most
// of its width. It is a function so that no caller can change the list.
func CurveQuantiles() []float64 {
	return []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999, 100}
}

// CurvePoint is one point of a latency percentile curve.
type CurvePoint struct {
	Percentile float64 `json:"percentile"`
	LatencyUs  int64   `json:"latencyUs"`
}

func cloneMap[K comparable](m map[K]int64) map[K]int64 {
	out := make(map[K]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Percentiles are latencies in microseconds.
type Percentiles struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p99.9"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

func percentilesOf(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		P50:  h.ValueAtQuantile(50),
		P90:  h.ValueAtQuantile(90),
		P99:  h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9),
		Max:  h.Max(),
		Mean: h.Mean(),
	}
}
