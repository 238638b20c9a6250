package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/persistence"
	hook "github.com/swapgate/swapgate/routing/webhook"
)

// BenchmarkDelivery publishes b.N events across four partners (two webhooks
// each) from four goroutines and waits until a local HTTPS receiver has
// accepted every one. It reports deliveries per second end to end (durable
// publish, scan, signed POST, recorded outcome) and the p99 time from the
// publish call to the first attempt reaching the receiver, measured from a
// publish timestamp carried in the payload.
func BenchmarkDelivery(b *testing.B) {
	var (
		mu   sync.Mutex
		hist = hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		seen = make(map[string]bool)
		all  = make(chan struct{})
		want = b.N * 2 // two webhooks per partner
	)
	rc := &receiver{answer: func(int, *http.Request) int { return http.StatusOK }}
	rc.srv = newBenchServer(b, func(body []byte, delivery string) {
		var p struct {
			Data struct {
				TransactionID string `json:"transactionId"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &p) != nil {
			return
		}
		ns, err := strconv.ParseInt(p.Data.TransactionID, 10, 64)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[delivery] {
			return
		}
		seen[delivery] = true
		_ = hist.RecordValue(time.Since(time.Unix(0, ns)).Microseconds())
		if len(seen) == want {
			close(all)
		}
	})
	s, err := persistence.Open(b.TempDir(), persistence.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	partners := []string{"ptn_b1", "ptn_b2", "ptn_b3", "ptn_b4"}
	for _, pid := range partners {
		for range 2 {
			w := &persistence.Webhook{PartnerID: pid, URL: rc.srv.URL, Events: []string{hook.SwapCompleted}, Secret: testSecret, Active: true}
			if err := s.CreateWebhook(context.Background(), w); err != nil {
				b.Fatal(err)
			}
		}
	}
	sys := actors.NewSystemWithLogger(discardLogger())
	defer sys.Shutdown()
	p, err := Start(sys, s, Config{AllowLoopback: true, TLSConfig: tlsFor(rc), PoolSize: 16, Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Stop()

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range len(partners) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < b.N; i += len(partners) {
				now := time.Now()
				ev := hook.Event{Name: hook.SwapCompleted, Time: now,
					Data: hook.SwapData{TransactionID: strconv.FormatInt(now.UnixNano(), 10), Status: "DONE"}}
				if err := p.Publish(context.Background(), partners[g], ev); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(time.Minute):
		b.Fatalf("only %d of %d deliveries arrived", len(seen), want)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(want)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(hist.ValueAtQuantile(99))/1000, "p99-publish-to-attempt-ms")
	b.ReportMetric(float64(hist.ValueAtQuantile(50))/1000, "p50-publish-to-attempt-ms")
}
