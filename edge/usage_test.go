package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// memUsage is a UsageStore in memory that adds as the real ones do, and
// refuses writes while failing is set.
type memUsage struct {
	mu      sync.Mutex
	rows    map[usageKey]usageTally
	failing bool
	writes  int
}

func (m *memUsage) AddUsage(_ context.Context, counts []account.UsageCount) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failing {
		return errors.New("store down")
	}
	m.writes++
	for _, c := range counts {
		if err := c.Check(); err != nil {
			return err
		}
		k := usageKey{partner: c.PartnerID, bucket: bucketNamed(c.Bucket), hour: c.Hour.Unix()}
		t := m.rows[k]
		t.add(usageTally{admitted: c.Admitted, refused: c.Refused})
		m.rows[k] = t
	}
	return nil
}

func (m *memUsage) UsageSince(_ context.Context, partner string, since time.Time) ([]account.UsageCount, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []account.UsageCount
	for k, t := range m.rows {
		if k.partner == partner && k.hour >= since.Unix() {
			out = append(out, account.UsageCount{PartnerID: partner, Bucket: k.bucket.String(), Hour: time.Unix(k.hour, 0).UTC(),
				Admitted: t.admitted, Refused: t.refused})
		}
	}
	return out, nil
}

// The usage read back is exact whether the counts are still in the
// shards, drained but refused by the store, or stored; anonymous keys are
// not counted; close stores everything.
func TestUsageBookExact(t *testing.T) {
	store := &memUsage{rows: map[usageKey]usageTally{}}
	l := NewLimiter()
	l.countsUsage = true
	u := newUsageBook(store, l, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour) // flushed by hand below
	h0 := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	since := h0.Add(-23 * time.Hour)
	send := func(partner string, b Bucket, limit, n int, at time.Time) {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.Allow(RateKey{Bucket: b, Partner: partner}, limit, at)
			}()
		}
		wg.Wait()
		for range n {
			l.Allow(RateKey{Bucket: b, IP: netipLoopback}, limit, at)
		}
	}
	want := func(step string, partner string, hour time.Time, b Bucket, admitted, refused uint64) {
		t.Helper()
		got, err := u.history(context.Background(), partner, since)
		if err != nil {
			t.Fatal(err)
		}
		var tally usageTally
		if h := got[hour.Unix()]; h != nil {
			tally = h[b]
		}
		if tally != (usageTally{admitted, refused}) {
			t.Fatalf("%s: %s %s at %s = %+v, want %d/%d", step, partner, b, hour, tally, admitted, refused)
		}
	}
	send("ptn_a", BucketHeavy, 10, 25, h0.Add(10*time.Minute))
	send("ptn_a", BucketRead, 100, 7, h0.Add(10*time.Minute))
	want("in the shards", "ptn_a", h0, BucketHeavy, 10, 15)
	want("in the shards", "ptn_a", h0, BucketRead, 7, 0)

	store.failing = true
	if err := u.flush(context.Background()); err == nil {
		t.Fatal("a flush to a failing store succeeded")
	}
	send("ptn_a", BucketHeavy, 10, 3, h0.Add(90*time.Minute)) // the next hour, a new window
	want("unsaved", "ptn_a", h0, BucketHeavy, 10, 15)
	want("unsaved and in the shards", "ptn_a", h0.Add(time.Hour), BucketHeavy, 3, 0)

	store.failing = false
	if err := u.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	send("ptn_b", BucketHeavy, 10, 1, h0.Add(90*time.Minute))
	want("stored", "ptn_a", h0, BucketHeavy, 10, 15)
	want("stored", "ptn_a", h0.Add(time.Hour), BucketHeavy, 3, 0)
	want("another partner", "ptn_b", h0.Add(time.Hour), BucketHeavy, 1, 0)
	want("another partner", "ptn_b", h0, BucketHeavy, 0, 0)

	if err := u.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(store.rows) != 4 {
		t.Fatalf("stored rows %v: anonymous keys counted, or a count lost", store.rows)
	}
	pending := map[usageKey]usageTally{}
	l.pendingUsage("ptn_b", pending)
	if len(pending) != 0 {
		t.Fatalf("counts left in the shards after close: %v", pending)
	}
}

// Peek reports the window without counting.
func TestLimiterPeek(t *testing.T) {
	l := NewLimiter()
	t0 := time.Unix(1_700_000_000, 0)
	key := RateKey{Bucket: BucketRead, Partner: "p"}
	if rr, used := l.Peek(key, 5, t0); used != 0 || rr.Remaining != 5 || rr.Reset != t0.Unix()+60 || rr.Bucket != BucketRead {
		t.Fatalf("no window: %+v used %d", rr, used)
	}
	l.Allow(key, 5, t0)
	l.Allow(key, 5, t0.Add(time.Second))
	for range 3 {
		if rr, used := l.Peek(key, 5, t0.Add(2*time.Second)); used != 2 || rr.Remaining != 3 || rr.Reset != t0.Unix()+60 {
			t.Fatalf("open window: %+v used %d", rr, used)
		}
	}
	if rr, used := l.Peek(key, 1, t0.Add(2*time.Second)); used != 2 || rr.Remaining != 0 || rr.Allowed {
		t.Fatalf("a limit lowered below the window's count: %+v used %d", rr, used)
	}
}

// The header values, as the draft writes them, from one decision.
func TestRateHeaderValues(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		rr            RateResult
		policy, limit string
		retryAfter    int64
	}{
		{RateResult{Bucket: BucketHeavy, Limit: 2000, Remaining: 1999, Reset: now.Unix() + 37, Allowed: true}, `"heavy";q=2000;w=60`, `"heavy";r=1999;t=37`, 37},
		{RateResult{Bucket: BucketRead, Limit: 3, Remaining: 0, Reset: now.Unix() + 60}, `"read";q=3;w=60`, `"read";r=0;t=60`, 60},
		// The window ends this second: t=0, but a retry waits at least 1 s.
		{RateResult{Bucket: BucketRead, Limit: 3, Remaining: 0, Reset: now.Unix()}, `"read";q=3;w=60`, `"read";r=0;t=0`, 1},
	}
	for _, tc := range tests {
		if got := string(appendRatePolicy(nil, tc.rr)); got != tc.policy {
			t.Errorf("policy %q, want %q", got, tc.policy)
		}
		if got := string(appendRateLimit(nil, tc.rr, now)); got != tc.limit {
			t.Errorf("limit %q, want %q", got, tc.limit)
		}
		if got := retryAfter(tc.rr, now); got != tc.retryAfter {
			t.Errorf("retry after %d, want %d", got, tc.retryAfter)
		}
	}
}

var netipLoopback = netip.MustParseAddr("127.0.0.1")
