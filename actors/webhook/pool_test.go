package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/routing/domain/account"
	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

const testSecret = "s3cret-s3cret-s3cret"

// receiver is an httptest TLS server that verifies signatures the way the
// specification tells partners to, and records what it accepted.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
	// answer decides the status of the n-th request (1-based); nil is 200.
	answer func(n int, r *http.Request) int
	n      atomic.Int64
}

type received struct {
	at                        time.Time
	body                      []byte
	event, delivery, stamp    string
	contentType, signatureHex string
}

func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	sig := r.Header.Get(hook.HeaderSignature)
	if !hook.Verify([]byte(testSecret), body, sig) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	n := int(rc.n.Add(1))
	rc.mu.Lock()
	rc.got = append(rc.got, received{at: time.Now(), body: body, event: r.Header.Get(hook.HeaderEvent),
		delivery: r.Header.Get(hook.HeaderDelivery), stamp: r.Header.Get(hook.HeaderTimestamp),
		contentType: r.Header.Get("Content-Type"), signatureHex: sig})
	rc.mu.Unlock()
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(n, r)
	}
	w.WriteHeader(status)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// hang blocks until the client gives up, like a receiver that never answers.
// Should the answer still reach the client, it is a failure too.
func hang(_ int, r *http.Request) int {
	<-r.Context().Done()
	return http.StatusServiceUnavailable
}

func tlsFor(rc ...*receiver) *tls.Config {
	pool := x509.NewCertPool()
	for _, r := range rc {
		pool.AddCert(r.srv.Certificate())
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func openStore(t *testing.T, dir string) *pebblestore.Store {
	t.Helper()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newSystem(t *testing.T) *actor.ActorSystem {
	t.Helper()
	sys := actors.NewSystemWithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(sys.Shutdown)
	return sys
}

func startPool(t *testing.T, sys *actor.ActorSystem, s Store, cfg Config) *Pool {
	t.Helper()
	cfg.AllowLoopback = true
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ScanInterval == 0 {
		cfg.ScanInterval = 20 * time.Millisecond
	}
	p, err := Start(sys, s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func register(t *testing.T, s *pebblestore.Store, partnerID, url string, events ...string) *hook.Registration {
	t.Helper()
	w := &hook.Registration{PartnerID: partnerID, URL: url, Events: events, Secret: testSecret, Active: true}
	if err := s.CreateWebhook(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func swapEvent(tx string) hook.Event {
	return hook.Event{Name: hook.SwapCompleted, Time: time.Now(), Data: hook.SwapData{TransactionID: tx, FromChain: 1, ToChain: 369, Status: "DONE"}}
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func lastState(t *testing.T, s *pebblestore.Store, w *hook.Registration) *hook.DeliveryRecord {
	t.Helper()
	recs, err := s.Deliveries(context.Background(), w.PartnerID, w.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		return &hook.DeliveryRecord{}
	}
	return recs[0]
}

// TestMain checks that stopped pools leave no goroutines behind: no worker
// stuck in an attempt, no ticker, no idle HTTP connection.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// protoactor's dead-letter throttle lives as long as the process.
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}

func TestDeliverySignedAndRecorded(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL+"/hook", hook.SwapCompleted)
	register(t, s, "ptn_a", rc.srv.URL+"/other", hook.SwapFailed) // not subscribed
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), ScanInterval: time.Hour})

	ev := swapEvent("tx-1")
	if err := p.Publish(context.Background(), "ptn_a", ev); err != nil {
		t.Fatal(err)
	}
	// The scan interval is an hour: only the wake-up can deliver this.
	eventually(t, 5*time.Second, "delivery", func() bool { return lastState(t, s, w).State == hook.DeliveryDelivered })
	got := rc.received()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	want, _ := ev.Body()
	r := got[0]
	if string(r.body) != string(want) || r.event != hook.SwapCompleted || r.contentType != "application/json" ||
		!strings.HasPrefix(r.delivery, "dlv_") || r.signatureHex != hook.Sign([]byte(testSecret), want) {
		t.Fatalf("request %+v", r)
	}
	if ts, err := time.Parse(time.RFC3339, time.Unix(mustInt(t, r.stamp), 0).Format(time.RFC3339)); err != nil || time.Since(ts) > time.Minute {
		t.Fatalf("timestamp header %q", r.stamp)
	}
	rec := lastState(t, s, w)
	if rec.ID != r.delivery || rec.Attempt != 1 || rec.StatusCode != 200 || rec.Error != "" {
		t.Fatalf("history %+v", rec)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not an integer: %q", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func TestRetryUntilSuccessKeepsDeliveryID(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), RetryBase: 30 * time.Millisecond, Jitter: -1})
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-r")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "delivery after retries", func() bool { return lastState(t, s, w).State == hook.DeliveryDelivered })
	got := rc.received()
	if len(got) != 3 {
		t.Fatalf("want 3 attempts, got %d", len(got))
	}
	for _, r := range got[1:] {
		if r.delivery != got[0].delivery || string(r.body) != string(got[0].body) {
			t.Fatalf("retry changed delivery id or body: %q vs %q", r.delivery, got[0].delivery)
		}
	}
	// Backoff: 30 ms then 60 ms.
	if d := got[2].at.Sub(got[1].at); d < 55*time.Millisecond {
		t.Fatalf("second retry after %v, want ≥ 60ms", d)
	}
	if rec := lastState(t, s, w); rec.Attempt != 3 || rec.StatusCode != 204 {
		t.Fatalf("history %+v", rec)
	}
	want := map[string]float64{
		`swapgate_webhook_deliveries_total{outcome="attempt"}`:   3,
		`swapgate_webhook_deliveries_total{outcome="retried"}`:   2,
		`swapgate_webhook_deliveries_total{outcome="delivered"}`: 1,
		`swapgate_webhook_deliveries_total{outcome="dead"}`:      0,
		`swapgate_webhook_store_failures_total{op="commit"}`:     0,
		`swapgate_webhook_store_failures_total{op="scan"}`:       0,
		"swapgate_webhook_workers":                               DefaultPoolSize,
		"swapgate_webhook_busy_workers":                          0,
		"swapgate_webhook_queued_deliveries":                     0,
		`swapgate_webhook_outbox_entries{state="due"}`:           0,
		`swapgate_webhook_outbox_entries{state="scheduled"}`:     0,
		"swapgate_webhook_commits_total":                         3,
	}
	eventually(t, 5*time.Second, "metrics", func() bool {
		v := metricstest.Values(t, p.Collector())
		for k, w := range want {
			if v[k] != w {
				t.Logf("%s = %v, want %v", k, v[k], w)
				return false
			}
		}
		return true
	})
}

// TestOutboxDepthCountsScheduledRetries: a failed attempt's retry waits in
// the outbox as scheduled, not due, until its backoff ends.
func TestOutboxDepthCountsScheduledRetries(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), RetryBase: time.Hour, Jitter: -1})
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-s")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "a failed attempt recorded", func() bool { return lastState(t, s, w).State == hook.DeliveryRetrying })
	v := metricstest.Values(t, p.Collector())
	if v[`swapgate_webhook_outbox_entries{state="scheduled"}`] != 1 || v[`swapgate_webhook_outbox_entries{state="due"}`] != 0 ||
		v[`swapgate_webhook_deliveries_total{outcome="retried"}`] != 1 {
		t.Fatalf("after one failed attempt: %v", v)
	}
}

func TestHangingReceiverIsDeadLettered(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, hang)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), Timeout: 150 * time.Millisecond,
		RetryBase: 20 * time.Millisecond, MaxAttempts: 3, Jitter: -1})
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-d")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "dead letter", func() bool { return lastState(t, s, w).State == hook.DeliveryDead })
	rec := lastState(t, s, w)
	if rec.Attempt != 3 || rec.Error == "" {
		t.Fatalf("dead letter %+v", rec)
	}
	if n := rc.n.Load(); n != 3 {
		t.Fatalf("receiver saw %d attempts, want 3", n)
	}
	var left int
	_ = s.DueDeliveries(context.Background(), time.Time{}, time.Now().Add(24*time.Hour), nil, func(*hook.OutboxEntry) bool { left++; return true })
	if left != 0 || p.Stats().Dead.Load() != 1 {
		t.Fatalf("outbox keeps %d entries, dead counter %d", left, p.Stats().Dead.Load())
	}
}

func TestSlowPartnerDoesNotDelayOthers(t *testing.T) {
	s := openStore(t, t.TempDir())
	slow := newReceiver(t, hang)
	fast := newReceiver(t, nil)
	register(t, s, "ptn_slow", slow.srv.URL, hook.SwapCompleted)
	register(t, s, "ptn_slow", slow.srv.URL+"/second", hook.SwapCompleted)
	wb := register(t, s, "ptn_fast", fast.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{PoolSize: 4, TLSConfig: tlsFor(slow, fast), Timeout: 3 * time.Second})
	ctx := context.Background()
	for i := range 20 {
		if err := p.Publish(ctx, "ptn_slow", swapEvent("slow-"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Second, "slow receiver busy", func() bool { return slow.n.Load() >= 2 })
	start := time.Now()
	if err := p.Publish(ctx, "ptn_fast", swapEvent("fast")); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "fast partner's delivery while the slow one hangs", func() bool {
		return lastState(t, s, wb).State == hook.DeliveryDelivered
	})
	if d := time.Since(start); d > time.Second {
		t.Fatalf("fast partner waited %v", d)
	}
	if n := slow.n.Load(); n > 2 {
		t.Fatalf("slow partner holds %d attempts in flight, cap is PoolSize/2 = 2", n)
	}
}

// TestOutboxSurvivesRestartMidDelivery stops the pool and closes the store
// while an attempt hangs, reopens both, and expects the same delivery to
// arrive, and an event enqueued while no pool ran to arrive as well.
func TestOutboxSurvivesRestartMidDelivery(t *testing.T) {
	dir := t.TempDir()
	var healthy atomic.Bool
	rc := newReceiver(t, func(n int, r *http.Request) int {
		if !healthy.Load() {
			return hang(n, r)
		}
		return http.StatusOK
	})
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted, hook.SwapFailed)
	sys := newSystem(t)
	p, err := Start(sys, s, Config{AllowLoopback: true, TLSConfig: tlsFor(rc), ScanInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-restart")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "first attempt in flight", func() bool { return rc.n.Load() == 1 })
	p.Stop()
	// An event committed while no pool runs.
	if _, err := s.Publish(context.Background(), "ptn_a", hook.Event{Name: hook.SwapFailed, Time: time.Now(), Data: hook.SwapData{TransactionID: "tx-offline"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	healthy.Store(true)
	s2 := openStore(t, dir)
	startPool(t, sys, s2, Config{TLSConfig: tlsFor(rc)})
	eventually(t, 5*time.Second, "both deliveries after restart", func() bool {
		recs, _ := s2.Deliveries(context.Background(), "ptn_a", w.ID, 10)
		done := 0
		for _, r := range recs {
			if r.State == hook.DeliveryDelivered {
				done++
			}
		}
		return done == 2
	})
	got := rc.received()
	if len(got) != 3 || got[1].delivery != got[0].delivery && got[2].delivery != got[0].delivery {
		t.Fatalf("want the hung delivery repeated with its id, got %d requests", len(got))
	}
}

// TestDeliveryTimeCheckRefusesForbiddenAddress stores a loopback URL behind
// the registration check's back (as a DNS change would) and expects the
// dialer to refuse it.
func TestDeliveryTimeCheckRefusesForbiddenAddress(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	cfg := Config{TLSConfig: tlsFor(rc), ScanInterval: 20 * time.Millisecond, RetryBase: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p, err := Start(newSystem(t), s, cfg) // AllowLoopback false
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-f")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "refused attempt", func() bool { return lastState(t, s, w).State == hook.DeliveryRetrying })
	if rec := lastState(t, s, w); !strings.Contains(rec.Error, "forbidden address") || rc.n.Load() != 0 {
		t.Fatalf("history %+v, receiver saw %d", rec, rc.n.Load())
	}
}

func TestSendTest(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.DepositFailed)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc)})
	if _, err := p.SendTest(context.Background(), "ptn_b", w.ID); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("test delivery to another partner's webhook: %v", err)
	}
	id, err := p.SendTest(context.Background(), "ptn_a", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "test delivery", func() bool { return lastState(t, s, w).State == hook.DeliveryDelivered })
	got := rc.received()
	if len(got) != 1 || got[0].delivery != id || got[0].event != hook.TestEvent || !strings.Contains(string(got[0].body), `"test":true`) {
		t.Fatalf("test delivery %+v", got)
	}
}
