package webhook

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/swapgate/swapgate/actors"
	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// benchPartners and benchHooksPerPartner shape every delivery benchmark:
// four partners with two webhooks each, all on one local HTTPS receiver.
var benchPartners = []string{"ptn_b1", "ptn_b2", "ptn_b3", "ptn_b4"}

const benchHooksPerPartner = 2

// benchPoolSize is the pool's worker count in the benchmarks, the default
// of a deployment.
const benchPoolSize = DefaultPoolSize

// benchWait bounds how long a benchmark waits for its deliveries, so that a
// regression fails the run instead of hanging it.
const benchWait = 2 * time.Minute

// benchRig is a store with the benchmark's webhooks registered, a receiver
// that records the publish→first-attempt latency of every delivery (from a
// publish timestamp carried in the payload's transactionId), and a pool
// configuration pointing at it. The pool itself is started by the caller,
// so that an outbox can be filled before it runs.
type benchRig struct {
	store *pebblestore.Store
	hooks []*hook.Registration
	cfg   Config

	mu   sync.Mutex
	hist *hdrhistogram.Histogram
	seen map[string]bool
	want int
	all  chan struct{}
}

func newBenchRig(b *testing.B, want int) *benchRig {
	b.Helper()
	r := &benchRig{
		hist: hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3),
		seen: make(map[string]bool, want),
		want: want,
		all:  make(chan struct{}),
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// The receiver's own logger would print every handshake a closing client
	// abandons; those are not delivery failures.
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	srv.StartTLS()
	b.Cleanup(srv.Close)
	s, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	r.store = s
	for _, pid := range benchPartners {
		for range benchHooksPerPartner {
			w := &hook.Registration{PartnerID: pid, URL: srv.URL, Events: []string{hook.SwapCompleted}, Secret: testSecret, Active: true}
			if err := s.CreateWebhook(context.Background(), w); err != nil {
				b.Fatal(err)
			}
			r.hooks = append(r.hooks, w)
		}
	}
	rc := &receiver{srv: srv}
	r.cfg = Config{AllowLoopback: true, TLSConfig: tlsFor(rc), PoolSize: benchPoolSize, Logger: discardLogger()}
	return r
}

// serve accepts a delivery, recording the latency of its first attempt only.
func (r *benchRig) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var p struct {
		Data struct {
			TransactionID string `json:"transactionId"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &p) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ns, err := strconv.ParseInt(p.Data.TransactionID, 10, 64)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	delivery := req.Header.Get(hook.HeaderDelivery)
	r.mu.Lock()
	if !r.seen[delivery] {
		r.seen[delivery] = true
		_ = r.hist.RecordValue(at.Sub(time.Unix(0, ns)).Microseconds())
		if len(r.seen) == r.want {
			close(r.all)
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// wait blocks until every wanted delivery has arrived, failing the benchmark
// after benchWait.
func (r *benchRig) wait(b *testing.B) {
	b.Helper()
	select {
	case <-r.all:
	case <-time.After(benchWait):
		r.mu.Lock()
		n := len(r.seen)
		r.mu.Unlock()
		b.Fatalf("only %d of %d deliveries arrived within %v", n, r.want, benchWait)
	}
}

// start runs a pool over the rig's store until the benchmark ends.
func (r *benchRig) start(b *testing.B) *Pool {
	b.Helper()
	sys := actors.NewSystemWithLogger(discardLogger())
	b.Cleanup(sys.Shutdown)
	p, err := Start(sys, r.store, r.cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	return p
}

// stampedEvent is a swap.completed event carrying its publish time in
// transactionId, which is how the receiver measures latency.
func stampedEvent(now time.Time) hook.Event {
	return hook.Event{Name: hook.SwapCompleted, Time: now,
		Data: hook.SwapData{TransactionID: strconv.FormatInt(now.UnixNano(), 10), Status: "DONE"}}
}

// reportLatency reports the median and 99th percentile of publish→first
// attempt, in milliseconds.
func (r *benchRig) reportLatency(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b.ReportMetric(float64(r.hist.ValueAtQuantile(50))/1000, "p50-ms")
	b.ReportMetric(float64(r.hist.ValueAtQuantile(99))/1000, "p99-ms")
}
