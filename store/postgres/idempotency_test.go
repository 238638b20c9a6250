package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's idempotency tests (store/pebble/idempotency_test.go),
// run against PostgreSQL; the expiry index's own checks become row counts.

func sameRecord(a, b *idempotency.Record) bool {
	return a.Fingerprint == b.Fingerprint && a.Status == b.Status && bytes.Equal(a.Body, b.Body) && a.RequestID == b.RequestID &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

// countRows counts the rows of table.
func countRows(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRememberAnswerRoundTripAndScopes(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	partner := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "k/1"}
	other := idempotency.Key{Scope: idempotency.PartnerScope("ptn_b"), Value: "k/1"}
	tricky := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a") + "/k", Value: "1"}
	if err := s.RememberAnswer(ctx, tricky, idempotency.NewRecord(idempotency.Fingerprint{9}, 201, nil, clock.Now())); err == nil {
		t.Fatal("a scope with '/' was accepted")
	}
	if _, err := s.IdempotentAnswer(ctx, partner); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any write: %v, want ErrNotFound", err)
	}
	want := idempotency.NewRecord(idempotency.Fingerprint{1, 2, 3}, 201, []byte(`{"data":{"id":"wh_1"},"error":null}`), clock.Now())
	want.RequestID = "req-1"
	if err := s.RememberAnswer(ctx, partner, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.IdempotentAnswer(ctx, partner)
	if err != nil || !sameRecord(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if _, err := s.IdempotentAnswer(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another partner's scope sees the record: %v", err)
	}
	for _, bad := range []idempotency.Key{{Scope: "", Value: "k"}, {Scope: "partner.x", Value: ""}, {Scope: "a/b", Value: "k"}} {
		if _, err := s.IdempotentAnswer(ctx, bad); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("IdempotentAnswer(%+v) = %v, want a layout error", bad, err)
		}
	}
	// A nil body and an empty one both read back empty; nanoseconds
	// survive.
	odd := idempotency.NewRecord(idempotency.Fingerprint{4}, 204, nil, clock.Now().Add(123456789*time.Nanosecond))
	k := idempotency.Key{Scope: "ip.203.0.113.7", Value: "x"}
	if err := s.RememberAnswer(ctx, k, odd); err != nil {
		t.Fatal(err)
	}
	if got, err := s.IdempotentAnswer(ctx, k); err != nil || !sameRecord(got, odd) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, odd)
	}
}

// TestRememberAnswerReplacesExpired overwrites an expired record: one row
// is left, the new one, and a sweep does not take it.
func TestRememberAnswerReplacesExpired(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	k := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "key-1"}
	if err := s.RememberAnswer(ctx, k, idempotency.NewRecord(idempotency.Fingerprint{1}, 201, []byte("a"), clock.Now())); err != nil {
		t.Fatal(err)
	}
	clock.Advance(idempotency.Lifetime + time.Hour)
	fresh := idempotency.NewRecord(idempotency.Fingerprint{2}, 202, []byte("b"), clock.Now())
	if err := s.RememberAnswer(ctx, k, fresh); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "idempotency"); n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
	if n, err := s.SweepAnswers(ctx, 100); err != nil || n != 0 {
		t.Fatalf("sweep removed %d (%v), want 0: the only record is live", n, err)
	}
	got, err := s.IdempotentAnswer(ctx, k)
	if err != nil || !sameRecord(got, fresh) {
		t.Fatalf("read %+v, %v; want the new record", got, err)
	}
}

func TestSweepAnswers(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	s := openTest(t, Options{Now: clock.Now})
	key := func(v string) idempotency.Key {
		return idempotency.Key{Scope: idempotency.ClientScope(netip.MustParseAddr("203.0.113.7")), Value: v}
	}
	// Five records an hour apart.
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		if err := s.RememberAnswer(ctx, key(v), idempotency.NewRecord(idempotency.Fingerprint{byte(i)}, 201, []byte(v), start.Add(time.Duration(i)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		at      time.Duration // after start
		limit   int
		removed int
		left    []string
	}{
		{at: idempotency.Lifetime - time.Nanosecond, limit: 10, removed: 0, left: []string{"a", "b", "c", "d", "e"}},
		{at: idempotency.Lifetime + time.Hour - time.Nanosecond, limit: 10, removed: 1, left: []string{"b", "c", "d", "e"}},
		// Past b, c and d's expiry, two at a time, oldest first.
		{at: idempotency.Lifetime + 3*time.Hour, limit: 2, removed: 2, left: []string{"d", "e"}},
		{at: idempotency.Lifetime + 3*time.Hour, limit: 2, removed: 1, left: []string{"e"}},
		{at: idempotency.Lifetime + 4*time.Hour, limit: 2, removed: 1, left: nil},
		{at: idempotency.Lifetime + 4*time.Hour, limit: 2, removed: 0, left: nil},
	}
	for i, tt := range tests {
		clock.t = start.Add(tt.at)
		n, err := s.SweepAnswers(ctx, tt.limit)
		if err != nil || n != tt.removed {
			t.Fatalf("step %d: swept %d (%v), want %d", i, n, err, tt.removed)
		}
		var left []string
		for _, v := range []string{"a", "b", "c", "d", "e"} {
			switch _, err := s.IdempotentAnswer(ctx, key(v)); {
			case err == nil:
				left = append(left, v)
			case !errors.Is(err, store.ErrNotFound):
				t.Fatal(err)
			}
		}
		if !slices.Equal(left, tt.left) {
			t.Fatalf("step %d: records %v left, want %v", i, left, tt.left)
		}
	}
}

// TestRememberAnswerSweeps checks that writes sweep on their own: once the
// sweep interval has passed, a write removes what expired.
func TestRememberAnswerSweeps(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	s := openTest(t, Options{Now: clock.Now})
	k := func(v string) idempotency.Key {
		return idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: v}
	}
	for _, v := range []string{"old-1", "old-2"} {
		if err := s.RememberAnswer(ctx, k(v), idempotency.NewRecord(idempotency.Fingerprint{1}, 201, nil, start)); err != nil {
			t.Fatal(err)
		}
	}
	clock.t = start.Add(idempotency.Lifetime + idemSweepEvery)
	if err := s.RememberAnswer(ctx, k("new"), idempotency.NewRecord(idempotency.Fingerprint{2}, 201, nil, clock.Now())); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "idempotency"); n != 1 {
		t.Fatalf("%d records after a write past their expiry, want 1 (the new one)", n)
	}
	if _, err := s.IdempotentAnswer(ctx, k("new")); err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencyKeyUniqueAcrossNodes: nodes writing answers under the same
// keys at once leave one record per key in the store, each whole (one
// writer's fingerprint, status and body together).
func TestIdempotencyKeyUniqueAcrossNodes(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	nodes := []*Store{db.open(t, Options{}), db.open(t, Options{}), db.open(t, Options{})}
	const keys = 8
	var wg sync.WaitGroup
	for n, s := range nodes {
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: fmt.Sprint("k", i)}
				rec := idempotency.NewRecord(idempotency.Fingerprint{byte(n)}, 200+n, []byte{byte(n)}, time.Now())
				if err := s.RememberAnswer(ctx, k, rec); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	if n := countRows(t, nodes[0], "idempotency"); n != keys {
		t.Fatalf("%d rows for %d keys", n, keys)
	}
	for i := range keys {
		k := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: fmt.Sprint("k", i)}
		rec, err := nodes[1].IdempotentAnswer(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		w := int(rec.Fingerprint[0])
		if rec.Status != 200+w || !bytes.Equal(rec.Body, []byte{byte(w)}) {
			t.Fatalf("key %d mixes writers: %+v", i, rec)
		}
	}
}

// TestIdempotencyKeyClaims: one node at a time holds a key's claim; the
// holder renews it; a release or a lapse lets another node take it; a
// release by a node that does not hold it changes nothing.
func TestIdempotencyKeyClaims(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	k := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "key-1"}
	other := idempotency.Key{Scope: idempotency.PartnerScope("ptn_b"), Value: "key-1"}
	const long, short = time.Minute, 300 * time.Millisecond
	steps := []struct {
		name string
		s    *Store
		k    idempotency.Key
		ttl  time.Duration // 0: release
		want bool
	}{
		{"a claims", a, k, long, true},
		{"b finds it claimed", b, k, long, false},
		{"the same key in another scope is free", b, other, long, true},
		{"a renews", a, k, long, true},
		{"b's release of a's claim changes nothing", b, k, 0, false},
		{"b still finds it claimed", b, k, long, false},
		{"a releases", a, k, 0, false},
		{"b claims, briefly", b, k, short, true},
		{"a finds it claimed", a, k, long, false},
	}
	for _, st := range steps {
		if st.ttl == 0 {
			if err := st.s.ReleaseIdempotencyKey(ctx, st.k); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			continue
		}
		got, err := st.s.ClaimIdempotencyKey(ctx, st.k, st.ttl)
		if err != nil || got != st.want {
			t.Fatalf("%s: claimed %v (%v), want %v", st.name, got, err, st.want)
		}
	}
	time.Sleep(short + 200*time.Millisecond)
	if got, err := a.ClaimIdempotencyKey(ctx, k, long); err != nil || !got {
		t.Fatalf("after b's claim lapsed a claims: %v %v", got, err)
	}
	for _, bad := range []idempotency.Key{{Scope: "", Value: "k"}, {Scope: "a/b", Value: "k"}} {
		if _, err := a.ClaimIdempotencyKey(ctx, bad, long); err == nil {
			t.Errorf("claimed %+v", bad)
		}
	}
	if _, err := a.ClaimIdempotencyKey(ctx, k, 0); err == nil {
		t.Error("claimed for no time")
	}
}

// TestIdempotencyKeyClaimRace: nodes claiming one key at once, one wins.
func TestIdempotencyKeyClaimRace(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	var nodes []*Store
	for range 4 {
		nodes = append(nodes, db.open(t, Options{}))
	}
	k := idempotency.Key{Scope: "ip.203.0.113.7", Value: "race"}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for _, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.ClaimIdempotencyKey(ctx, k, time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d nodes claimed the key", wins)
	}
}
