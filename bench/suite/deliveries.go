package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// maxDeliveries bounds the delivery times kept: far above what a bounded
// storm produces, so that a runaway sender cannot grow the suite's memory.
const maxDeliveries = 2_000_000

// deliveryLog is what the webhook receiver printed, one line per delivery
// attempt it got (retries included), with the time the suite read it.
type deliveryLog struct {
	mu     sync.Mutex
	times  []time.Time
	failed []bool
	last   time.Time
}

// add records one receiver line.
func (d *deliveryLog) add(line []byte, at time.Time) {
	if !bytes.HasPrefix(line, []byte("{")) {
		return
	}
	var l struct {
		Answered int `json:"answered"`
	}
	if json.Unmarshal(line, &l) != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.last = at
	if len(d.times) < maxDeliveries {
		d.times = append(d.times, at)
		d.failed = append(d.failed, l.Answered >= 300)
	}
}

// count returns the deliveries read in [from, to) and how many of them the
// receiver answered with an error.
func (d *deliveryLog) count(from, to time.Time) (total, failed int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, t := range d.times {
		if !t.Before(from) && t.Before(to) {
			total++
			if d.failed[i] {
				failed++
			}
		}
	}
	return total, failed
}

// total is the number of deliveries read so far.
func (d *deliveryLog) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.times)
}

// waitQuiet waits until no delivery has come for quiet, or until limit
// passes, and reports whether it became quiet.
func (d *deliveryLog) waitQuiet(ctx context.Context, quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(quiet / 5)
	defer tick.Stop()
	for {
		d.mu.Lock()
		last := d.last
		d.mu.Unlock()
		if time.Since(last) >= quiet {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// waitFor waits until at least n deliveries were read, or until limit
// passes, and reports whether they were.
func (d *deliveryLog) waitFor(ctx context.Context, n int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for d.total() < n {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// perSecond counts deliveries per whole second since origin, for the
// report's chart.
func (d *deliveryLog) perSecond(origin time.Time) []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []int
	for _, t := range d.times {
		s := int(t.Sub(origin) / time.Second)
		if s < 0 {
			continue
		}
		for len(out) <= s {
			out = append(out, 0)
		}
		out[s]++
	}
	return out
}
