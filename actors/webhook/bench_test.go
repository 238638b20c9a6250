package webhook

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// pacedRate is the delivery rate of the latency benchmark: well below what
// the pool sustains on a small machine (BenchmarkDelivery/backlog), so the
// figure measures the path from publish to receiver, not a queue.
const pacedRate = 400 // deliveries per second

// fillBatch is how many deliveries the backlog benchmark commits per batch
// while filling the outbox.
const fillBatch = 512

// BenchmarkDelivery measures the pool against a local HTTPS receiver with
// four partners of two webhooks each and the default 16 workers. One
// operation is one delivery.
//
//   - backlog: b.N deliveries wait in the outbox before the pool starts; the
//     time to deliver all of them (scan, signed POST, recorded outcome) gives
//     the saturated deliveries/s.
//   - paced: events are published at pacedRate deliveries per second, each to
//     a partner's two webhooks, and p50/p99 are the time from the publish
//     call (durable outbox commit included) to the first attempt reaching the
//     receiver.
func BenchmarkDelivery(b *testing.B) {
	b.Run("backlog", benchBacklog)
	b.Run("paced", benchPaced)
}

func benchBacklog(b *testing.B) {
	r := newBenchRig(b, b.N)
	now := time.Now()
	for i := 0; i < b.N; i += fillBatch {
		batch := r.store.DB().NewBatch()
		for j := i; j < min(i+fillBatch, b.N); j++ {
			if _, err := r.store.EnqueueDelivery(batch, r.hooks[j%len(r.hooks)], stampedEvent(now)); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
		_ = batch.Close()
	}
	b.ResetTimer()
	start := time.Now()
	r.start(b)
	r.wait(b)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}

func benchPaced(b *testing.B) {
	events := (b.N + benchHooksPerPartner - 1) / benchHooksPerPartner
	r := newBenchRig(b, events*benchHooksPerPartner)
	p := r.start(b)
	// Let the pool's first scan of the empty outbox pass.
	time.Sleep(10 * time.Millisecond)
	interval := time.Second * benchHooksPerPartner / pacedRate
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for g, partner := range benchPartners {
		wg.Go(func() {
			for i := g; i < events; i += len(benchPartners) {
				if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				if err := p.Publish(context.Background(), partner, stampedEvent(time.Now())); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r.wait(b)
	b.StopTimer()
	r.reportLatency(b)
}
