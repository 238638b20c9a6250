package actors

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/internal/metricstest"
)

// TestWarmDispatcherAfterClose checks that work scheduled after Close still
// runs (on a fresh goroutine) instead of sending on a closed channel.
func TestWarmDispatcherAfterClose(t *testing.T) {
	d := NewWarmDispatcher(2, 10)
	var wg sync.WaitGroup
	wg.Add(2)
	d.Schedule(wg.Done)
	d.Close()
	d.Schedule(wg.Done)
	wg.Wait()
	d.Close()
}

// TestWarmDispatcherStats checks the figures operators size the dispatcher
// by: busy warm goroutines, runs on warm goroutines, and runs that found
// none idle and went to a fresh one, as the collector exports them.
func TestWarmDispatcherStats(t *testing.T) {
	d := NewWarmDispatcher(2, 10)
	defer d.Close()
	release := make(chan struct{})
	var running sync.WaitGroup
	block := func() { defer running.Done(); <-release }
	// A warm goroutine takes work only once it waits for it; until both
	// do, what is scheduled may run fresh.
	deadline := time.Now().Add(5 * time.Second)
	for d.Stats().Busy < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("warm goroutines never both busy: %+v", d.Stats())
		}
		running.Add(1)
		d.Schedule(block)
		time.Sleep(time.Millisecond)
	}
	before := d.Stats().FreshRuns
	running.Add(1)
	d.Schedule(block)
	if got := d.Stats(); got.FreshRuns != before+1 || got.Goroutines != 2 || got.Busy != 2 {
		t.Fatalf("with every warm goroutine busy: %+v, want fresh runs %d", got, before+1)
	}
	close(release)
	running.Wait()
	for d.Stats().WarmRuns < 2 || d.Stats().Busy != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("warm runs not counted: %+v", d.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	v := metricstest.Values(t, d.Collector())
	want := map[string]float64{
		"swapgate_warm_goroutines":                            2,
		"swapgate_warm_goroutines_busy":                       0,
		`swapgate_warm_mailbox_runs_total{goroutine="warm"}`:  2,
		`swapgate_warm_mailbox_runs_total{goroutine="fresh"}`: float64(before + 1),
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %v, want %v (all: %v)", k, v[k], w, v)
		}
	}
}

// TestHistogram checks bucketing at the bounds, the scaled sum and the
// exported form.
func TestHistogram(t *testing.T) {
	h := NewHistogram(2, 1, 4, 16)
	for _, v := range []int64{0, 1, 2, 4, 5, 16, 17, 100} {
		h.Observe(v)
	}
	if h.Count() != 8 {
		t.Fatalf("count %d", h.Count())
	}
	desc := prometheus.NewDesc("x", "x", []string{"l"}, nil)
	v := metricstest.Values(t, fixedCollector{desc: desc, collect: func(ch chan<- prometheus.Metric) { ch <- h.Metric(desc, "a") }})
	want := map[string]float64{
		`x_count{l="a"}`: 8, `x_sum{l="a"}`: 145 * 0.5,
		`x_bucket{l="a",le="0.5"}`: 2, `x_bucket{l="a",le="2"}`: 4, `x_bucket{l="a",le="8"}`: 6, `x_bucket{l="a",le="+Inf"}`: 8,
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %v, want %v (all: %v)", k, v[k], w, v)
		}
	}
	if got := ExponentialBounds(100, 2.5, 4); got[0] != 100 || got[1] != 250 || got[2] != 625 || got[3] != 1563 {
		t.Fatalf("ExponentialBounds = %v", got)
	}
}

// fixedCollector is a collector of one description, for tests.
type fixedCollector struct {
	collect func(ch chan<- prometheus.Metric)
	desc    *prometheus.Desc
}

func (c fixedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c fixedCollector) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
