package actors

import (
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
)

// WarmDispatcher runs actor mailboxes on a fixed set of long-lived
// goroutines. protoactor's default dispatcher starts a new goroutine every
// time a mailbox has work; on the quote path, whose actors run deep call
// stacks (ABI packing, Pebble commits), each new goroutine then spends a
// large share of its time growing its stack. Warm goroutines keep the
// stacks they grew. Schedule never blocks: when every warm goroutine is busy
// (a worker waiting on a slow upstream, say) the mailbox runs on a fresh
// goroutine, as with the default dispatcher.
//
// It counts what an operator sizes --warm-goroutines by: how many warm
// goroutines are busy, how many mailbox runs they took, and how many runs
// found none idle and went to a fresh goroutine. Each warm goroutine keeps
// its own figures on a cache line of its own, so counting adds no
// contention between them; only the fresh-goroutine count is shared, and it
// grows only when the pool is already short.
type WarmDispatcher struct {
	work       chan func()
	done       chan struct{}
	throughput int
	wg         sync.WaitGroup
	once       sync.Once
	slots      []warmSlot
	fresh      atomic.Uint64
}

// warmSlot is one warm goroutine's figures, padded on both sides so that no
// two goroutines' figures share a cache line whatever the slice's alignment.
type warmSlot struct {
	_    [56]byte
	busy atomic.Uint32
	runs atomic.Uint64
	_    [52]byte
}

var _ actor.Dispatcher = (*WarmDispatcher)(nil)

// NewWarmDispatcher starts size goroutines; throughput is how many messages
// a mailbox processes before yielding its goroutine.
func NewWarmDispatcher(size, throughput int) *WarmDispatcher {
	d := &WarmDispatcher{work: make(chan func()), done: make(chan struct{}), throughput: throughput,
		slots: make([]warmSlot, size)}
	d.wg.Add(size)
	for i := 0; i < size; i++ {
		s := &d.slots[i]
		go func() {
			defer d.wg.Done()
			for {
				select {
				case fn := <-d.work:
					s.busy.Store(1)
					fn()
					s.busy.Store(0)
					s.runs.Add(1)
				case <-d.done:
					return
				}
			}
		}()
	}
	return d
}

// Schedule runs fn on an idle warm goroutine, or on a new one if none is idle.
func (d *WarmDispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn:
	default:
		d.fresh.Add(1)
		go fn()
	}
}

// Throughput is the mailbox batch size.
func (d *WarmDispatcher) Throughput() int { return d.throughput }

// Close stops the warm goroutines once they finish what they run. The work
// channel is never closed: protoactor may still schedule a stopped actor's
// last system messages, and those then run on fresh goroutines.
func (d *WarmDispatcher) Close() {
	d.once.Do(func() { close(d.done) })
	d.wg.Wait()
}

// WarmStats is a reading of the dispatcher's figures.
type WarmStats struct {
	// Goroutines is the number of warm goroutines, Busy those running a
	// mailbox at the time of the reading.
	Goroutines, Busy int
	// WarmRuns counts the mailbox runs a warm goroutine took to its end;
	// FreshRuns those that found no warm goroutine idle and ran on a new
	// one.
	WarmRuns, FreshRuns uint64
}

// Stats reads the dispatcher's figures. Each is read atomically, the set
// is not: it is a sample, as a scrape is.
func (d *WarmDispatcher) Stats() WarmStats {
	st := WarmStats{Goroutines: len(d.slots), FreshRuns: d.fresh.Load()}
	for i := range d.slots {
		st.Busy += int(d.slots[i].busy.Load())
		st.WarmRuns += d.slots[i].runs.Load()
	}
	return st
}

// Collector exposes Stats to Prometheus, read at scrape time.
func (d *WarmDispatcher) Collector() prometheus.Collector { return warmCollector{d} }

var (
	warmGoroutinesDesc = prometheus.NewDesc("swapgate_warm_goroutines",
		"Warm goroutines that run the quote path's actor mailboxes (--warm-goroutines).", nil, nil)
	warmBusyDesc = prometheus.NewDesc("swapgate_warm_goroutines_busy",
		"Warm goroutines running a mailbox at scrape time.", nil, nil)
	warmRunsDesc = prometheus.NewDesc("swapgate_warm_mailbox_runs_total",
		"Mailbox runs of the quote path's actors, by goroutine: warm, or fresh when no warm goroutine was idle.",
		[]string{"goroutine"}, nil)
)

type warmCollector struct{ d *WarmDispatcher }

func (c warmCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- warmGoroutinesDesc
	ch <- warmBusyDesc
	ch <- warmRunsDesc
}

func (c warmCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.d.Stats()
	ch <- prometheus.MustNewConstMetric(warmGoroutinesDesc, prometheus.GaugeValue, float64(st.Goroutines))
	ch <- prometheus.MustNewConstMetric(warmBusyDesc, prometheus.GaugeValue, float64(st.Busy))
	ch <- prometheus.MustNewConstMetric(warmRunsDesc, prometheus.CounterValue, float64(st.WarmRuns), "warm")
	ch <- prometheus.MustNewConstMetric(warmRunsDesc, prometheus.CounterValue, float64(st.FreshRuns), "fresh")
}
