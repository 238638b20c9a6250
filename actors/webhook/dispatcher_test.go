package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// countingStore counts the outbox entries scans decode and those read again
// by key.
type countingStore struct {
	*pebblestore.Store
	decoded, reread atomic.Int64
}

func (s *countingStore) DueDeliveries(ctx context.Context, from, now time.Time, skip func(due time.Time, deliveryID, webhookID []byte) bool, fn func(*hook.OutboxEntry) bool) error {
	return s.Store.DueDeliveries(ctx, from, now, skip, func(e *hook.OutboxEntry) bool {
		s.decoded.Add(1)
		return fn(e)
	})
}

func (s *countingStore) OutboxEntries(ctx context.Context, keys []store.OutboxKey, fn func(int, *hook.OutboxEntry)) error {
	s.reread.Add(int64(len(keys)))
	return s.Store.OutboxEntries(ctx, keys, fn)
}

// fillOutbox commits n deliveries to w in batches, as a busy event source
// would while no pool ran.
func fillOutbox(t *testing.T, s *pebblestore.Store, w *hook.Registration, n int) {
	t.Helper()
	for i := 0; i < n; i += 256 {
		b := s.DB().NewBatch()
		for range min(256, n-i) {
			if _, err := s.EnqueueDelivery(b, w, swapEvent("tx-fill")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
	}
}

// distinctDeliveries counts the receiver's requests by delivery ID.
func distinctDeliveries(rc *receiver) (requests, distinct int) {
	ids := map[string]bool{}
	for _, r := range rc.received() {
		ids[r.delivery] = true
	}
	return len(rc.received()), len(ids)
}

// TestBacklogOfOneWebhookIsReadOnce delivers one webhook's backlog, many
// times its queue, and expects every entry decoded by scans about once:
// entries left behind a full queue are remembered by key and read again
// by key, not decoded by every scan while the queue drains.
func TestBacklogOfOneWebhookIsReadOnce(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	const n = 2000
	fillOutbox(t, s, w, n)
	cs := &countingStore{Store: s}
	startPool(t, newSystem(t), cs, Config{TLSConfig: tlsFor(rc), QueuePerWebhook: 8, ScanInterval: time.Hour})
	eventually(t, 30*time.Second, "backlog delivered", func() bool { return rc.n.Load() >= n })
	eventually(t, 5*time.Second, "outbox empty", func() bool {
		due, scheduled, err := s.CountOutbox(context.Background(), time.Now(), n)
		return err == nil && due+scheduled == 0
	})
	if req, distinct := distinctDeliveries(rc); req != n || distinct != n {
		t.Fatalf("%d requests for %d distinct deliveries, want %d each", req, distinct, n)
	}
	t.Logf("decoded %d, reread %d", cs.decoded.Load(), cs.reread.Load())
	if d, r := cs.decoded.Load(), cs.reread.Load(); d > n+n/10 || r > n {
		t.Fatalf("scans decoded %d entries and %d were read by key, for %d deliveries", d, r, n)
	}
}

// TestOverflowingWebhookCatchesUp fills the outbox with one webhook's
// entries beyond what the dispatcher may remember (ScanBatch 4: 256 keys
// in all, 64 for one webhook) and expects each delivered exactly once.
func TestOverflowingWebhookCatchesUp(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	const n = 600
	fillOutbox(t, s, w, n)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), ScanBatch: 4, QueuePerWebhook: 2, ScanInterval: 50 * time.Millisecond})
	eventually(t, 30*time.Second, "backlog delivered", func() bool { return rc.n.Load() >= n })
	eventually(t, 5*time.Second, "outbox empty", func() bool {
		due, scheduled, err := s.CountOutbox(context.Background(), time.Now(), n)
		return err == nil && due+scheduled == 0
	})
	if req, distinct := distinctDeliveries(rc); req != n || distinct != n {
		t.Fatalf("%d requests for %d distinct deliveries, want %d each", req, distinct, n)
	}
	if f := p.Stats().ScanFailures.Load(); f != 0 {
		t.Fatalf("%d scan failures", f)
	}
}

// TestOverflowDoesNotStarveOthers: a webhook whose receiver hangs has more
// due entries than the dispatcher may remember for it; another partner's
// event, committed after all of them, is delivered at once.
func TestOverflowDoesNotStarveOthers(t *testing.T) {
	s := openStore(t, t.TempDir())
	slow := newReceiver(t, hang)
	fast := newReceiver(t, nil)
	ws := register(t, s, "ptn_slow", slow.srv.URL, hook.SwapCompleted)
	wf := register(t, s, "ptn_fast", fast.srv.URL, hook.SwapCompleted)
	fillOutbox(t, s, ws, 300)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(slow, fast), ScanBatch: 4, QueuePerWebhook: 2,
		PoolSize: 4, Timeout: 3 * time.Second, ScanInterval: 50 * time.Millisecond})
	eventually(t, 2*time.Second, "slow receiver busy", func() bool { return slow.n.Load() >= 1 })
	start := time.Now()
	if err := p.Publish(context.Background(), "ptn_fast", swapEvent("fast")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "fast partner's delivery behind the slow one's backlog", func() bool {
		return lastState(t, s, wf).State == hook.DeliveryDelivered
	})
	if d := time.Since(start); d > time.Second {
		t.Fatalf("fast partner waited %v", d)
	}
	if v := p.Stats().Parked.Load(); v > int64(4*parkFactor) {
		t.Fatalf("%d keys parked, bound %d", v, 4*parkFactor)
	}
}

// TestRetryScannedWhenDue schedules a retry far shorter than the scan
// interval and expects it to be attempted when it comes due, not at the
// next periodic scan.
func TestRetryScannedWhenDue(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), RetryBase: 50 * time.Millisecond, Jitter: -1, ScanInterval: time.Hour})
	if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-r")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "retry delivered", func() bool { return lastState(t, s, w).State == hook.DeliveryDelivered })
	got := rc.received()
	if len(got) != 2 {
		t.Fatalf("%d attempts", len(got))
	}
	if gap := got[1].at.Sub(got[0].at); gap < 50*time.Millisecond || gap > time.Second {
		t.Fatalf("retry %v after the first attempt, want about 50ms", gap)
	}
}

// TestPublishedEntriesNeedNoScan: entries the pool commits itself go to the
// dispatcher directly; scans pass over them without decoding them.
func TestPublishedEntriesNeedNoScan(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	cs := &countingStore{Store: s}
	p := startPool(t, newSystem(t), cs, Config{TLSConfig: tlsFor(rc), ScanInterval: time.Hour})
	// Let the first scan, of the empty outbox, pass.
	time.Sleep(50 * time.Millisecond)
	const n = 50
	for i := range n {
		if i%2 == 0 {
			if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-pub")); err != nil {
				t.Fatal(err)
			}
		} else if _, err := p.SendTest(context.Background(), "ptn_a", w.ID); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "every event delivered", func() bool { return rc.n.Load() >= n })
	if req, distinct := distinctDeliveries(rc); req != n || distinct != n {
		t.Fatalf("%d requests for %d distinct deliveries, want %d each", req, distinct, n)
	}
	if d := cs.decoded.Load(); d != 0 {
		t.Fatalf("scans decoded %d entries handed to the dispatcher", d)
	}
}

// TestDeliveriesReuseConnections: deliveries to a receiver that offers
// HTTP/2 go over HTTP/1.1, each connection kept for the next attempt, so a
// burst opens about as many connections (and TLS handshakes) as attempts
// run at once, not one per delivery.
func TestDeliveriesReuseConnections(t *testing.T) {
	var (
		mu    sync.Mutex
		conns = map[string]bool{}
		proto = map[int]int{}
		n     atomic.Int64
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		conns[r.RemoteAddr] = true
		proto[r.ProtoMajor]++
		mu.Unlock()
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s := openStore(t, t.TempDir())
	register(t, s, "ptn_a", srv.URL, hook.SwapCompleted)
	const perWebhook, events = 4, 200
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(&receiver{srv: srv}), PoolSize: 16, PerWebhook: perWebhook})
	for range events {
		if err := p.Publish(context.Background(), "ptn_a", swapEvent("tx-conn")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "every event delivered", func() bool { return n.Load() >= events })
	mu.Lock()
	defer mu.Unlock()
	if proto[1] != events {
		t.Fatalf("requests by HTTP major version %v, want all %d over HTTP/1.1", proto, events)
	}
	// A request finding no idle connection dials one, and takes whichever
	// comes first, a connection freed meanwhile or its own: a few more than
	// the attempts in flight may open, not one per delivery.
	if len(conns) > 2*perWebhook {
		t.Fatalf("%d connections for %d deliveries, at most %d in flight", len(conns), events, perWebhook)
	}
}

// failingRereadStore fails its first read of parked entries by key after
// answering for the first of them, as a store that errs midway would.
type failingRereadStore struct {
	*pebblestore.Store
	failed atomic.Bool
}

func (s *failingRereadStore) OutboxEntries(ctx context.Context, keys []store.OutboxKey, fn func(int, *hook.OutboxEntry)) error {
	if len(keys) < 2 || s.failed.Swap(true) {
		return s.Store.OutboxEntries(ctx, keys, fn)
	}
	if err := s.Store.OutboxEntries(ctx, keys[:1], fn); err != nil {
		return err
	}
	return errors.New("injected read failure")
}

// TestFailedRereadForgetsTheKeysItDidNotReach: when reading parked entries
// back fails midway, the entries it did not reach are found again by a
// later scan and delivered, once each.
func TestFailedRereadForgetsTheKeysItDidNotReach(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	const n = 200
	fillOutbox(t, s, w, n)
	fs := &failingRereadStore{Store: s}
	p := startPool(t, newSystem(t), fs, Config{TLSConfig: tlsFor(rc), QueuePerWebhook: 8, ScanInterval: 50 * time.Millisecond})
	eventually(t, 30*time.Second, "backlog delivered", func() bool { return rc.n.Load() >= n })
	eventually(t, 5*time.Second, "outbox empty", func() bool {
		due, scheduled, err := s.CountOutbox(context.Background(), time.Now(), n)
		return err == nil && due+scheduled == 0
	})
	if !fs.failed.Load() || p.Stats().ScanFailures.Load() == 0 {
		t.Fatal("the read failure was never injected")
	}
	if req, distinct := distinctDeliveries(rc); req != n || distinct != n {
		t.Fatalf("%d requests for %d distinct deliveries, want %d each", req, distinct, n)
	}
}
