package pebblestore

import (
	"time"

	"github.com/cockroachdb/pebble/v2"
	dto "github.com/prometheus/client_model/go"
)

// WALSyncStats is how long the WAL's syncs have taken since the store
// opened, as a cumulative histogram.
type WALSyncStats struct {
	Count   uint64
	Seconds float64 // their total
	// Bounds are the buckets' upper bounds in seconds, ascending, and
	// AtMost[i] the syncs that took at most Bounds[i].
	Bounds []float64
	AtMost []uint64
}

// walSyncBounds are the bounds WALSyncs reports: for each of a dozen round
// figures from 100 µs to 5 s, the first of Pebble's own bounds at or above
// it (linear by 100 µs to 5 ms, exponential above), so that every count is
// exact.
var walSyncBounds = func() []float64 {
	var out []float64
	for _, target := range []time.Duration{100 * time.Microsecond, 200 * time.Microsecond, 500 * time.Microsecond,
		time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 5 * time.Second} {
		for _, b := range pebble.FsyncLatencyBuckets {
			if b >= float64(target)*(1-1e-9) {
				if s := b / float64(time.Second); len(out) == 0 || s > out[len(out)-1] {
					out = append(out, s)
				}
				break
			}
		}
	}
	return out
}()

// WALSyncs reports how long Pebble's WAL syncs have taken since the store
// opened. A fee quote waits for one such sync (the ledger's group commit),
// so their tail is the floor of the fee quote's: a sync stalled by the
// disk or by the operating system shows up here, apart from the service's
// own time. A closed store reports nothing (ok false).
func (s *Store) WALSyncs() (st WALSyncStats, ok bool) {
	if s.closed.Load() {
		return st, false
	}
	h := s.db.Metrics().LogWriter.FsyncLatency
	if h == nil {
		return st, false
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil || m.Histogram == nil {
		return st, false
	}
	// Pebble observes nanoseconds.
	st = WALSyncStats{Count: m.Histogram.GetSampleCount(), Seconds: m.Histogram.GetSampleSum() / float64(time.Second),
		Bounds: walSyncBounds, AtMost: make([]uint64, len(walSyncBounds))}
	for _, b := range m.Histogram.Bucket {
		ub := b.GetUpperBound() / float64(time.Second)
		for i, bound := range st.Bounds {
			if ub <= bound*(1+1e-9) {
				st.AtMost[i] = max(st.AtMost[i], b.GetCumulativeCount())
			}
		}
	}
	return st, true
}
