package txm_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// BenchmarkManagerThroughput: intents per second one account sustains
// against a sandbox chain through its JSON-RPC node in process, from
// submit to confirmed (one confirmation), with the manager's store on
// Pebble.
func BenchmarkManagerThroughput(b *testing.B) {
	e := newEnv(b)
	m := e.start(e.options(e.node, e.store))
	b.ResetTimer()
	start := time.Now()
	keys := make([]string, b.N)
	// Callers submit concurrently, as the service's do: their synced
	// writes share commits.
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += 32 {
				keys[i] = fmt.Sprintf("bench/%d", i)
				if _, err := m.Submit(e.ctx, pay(keys[i], 1)); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, k := range keys {
		for {
			in, err := e.store.TxIntentByKey(e.ctx, k)
			if err == nil && in.State == txintent.Confirmed {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "intents/s")
}
