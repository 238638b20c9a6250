package actors

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Histogram is a Prometheus histogram of integer observations (nanoseconds,
// rows) kept in atomics. Observe takes no lock and allocates nothing: a scan
// of a dozen bounds and two atomic adds, which the quote path can afford on
// every leg. The Prometheus form is built only at scrape time (Metric).
// Observations are integers so that the sum is one atomic add, where a
// float64 sum needs a compare-and-swap loop that spins under contention.
type Histogram struct {
	bounds []int64
	// counts has one slot per bound and a last one for values above
	// every bound.
	counts []atomic.Uint64
	sum    atomic.Int64
	// perUnit is how many observed units make one exported unit (1e9
	// nanoseconds a second); bounds and sum are divided by it, which,
	// unlike a multiplication by its inverse, exports bounds such as
	// 0.0004 without a binary rounding tail.
	perUnit float64
}

// NewHistogram returns a histogram over the ascending upper bounds, exported
// divided by perUnit.
func NewHistogram(perUnit float64, bounds ...int64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1), perUnit: perUnit}
}

// NewDurationHistogram returns a histogram of durations exported in
// seconds, its n bounds growing from start by factor.
func NewDurationHistogram(start time.Duration, factor float64, n int) *Histogram {
	return NewHistogram(float64(time.Second), ExponentialBounds(int64(start), factor, n)...)
}

// ExponentialBounds returns n bounds growing from start by factor, each
// rounded to an integer.
func ExponentialBounds(start int64, factor float64, n int) []int64 {
	out := make([]int64, n)
	v := float64(start)
	for i := range out {
		out[i] = int64(v + 0.5)
		v *= factor
	}
	return out
}

// Observe records one value.
func (h *Histogram) Observe(v int64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// ObserveDuration records d in nanoseconds.
func (h *Histogram) ObserveDuration(d time.Duration) { h.Observe(int64(d)) }

// Count is the number of observations so far.
func (h *Histogram) Count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Metric is the histogram as a Prometheus metric of desc with the given
// label values. The count is the sum of the buckets read, so that the
// cumulative buckets never exceed it while observations land during the
// scrape; the sum may be a few observations ahead, which Prometheus
// tolerates.
func (h *Histogram) Metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		buckets[float64(b)/h.perUnit] = cum
	}
	cum += h.counts[len(h.bounds)].Load()
	return prometheus.MustNewConstHistogram(desc, cum, float64(h.sum.Load())/h.perUnit, buckets, labels...)
}
