package pebblestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/store"
)

func sameRecord(a, b *idempotency.Record) bool {
	return a.Fingerprint == b.Fingerprint && a.Status == b.Status && bytes.Equal(a.Body, b.Body) && a.RequestID == b.RequestID &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

func TestRememberAnswerRoundTripAndScopes(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTestStore(t, clock)
	partner := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "k/1"}
	// The same key in another scope, and a key whose '/' could be mistaken
	// for a scope boundary, are different records.
	other := idempotency.Key{Scope: idempotency.PartnerScope("ptn_b"), Value: "k/1"}
	tricky := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a") + "/k", Value: "1"}
	if err := s.RememberAnswer(ctx, tricky, idempotency.NewRecord(idempotency.Fingerprint{9}, 201, nil, clock.Now())); err == nil {
		t.Fatal("a scope with '/' was accepted")
	}
	if _, err := s.IdempotentAnswer(ctx, partner); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any write: %v, want store.ErrNotFound", err)
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
}

// TestIdempotencyRecordEncoding pins the stored bytes.
func TestIdempotencyRecordEncoding(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := idempotency.NewRecord(idempotency.Fingerprint{0xab, 0x01}, 201, []byte(`{}`), at)
	rec.RequestID = "5f0c7a52-9e4b-4d6e-9d0f-3c1b2a7e8f61"
	got, err := encodeIdem(rec)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"v":1,"fingerprint":"ab01000000000000000000000000000000000000000000000000000000000000","status":201,"body":"e30=","requestId":"5f0c7a52-9e4b-4d6e-9d0f-3c1b2a7e8f61","createdAt":"2026-03-01T12:00:00Z","expiresAt":"2026-03-02T12:00:00Z"}`
	if string(got) != want {
		t.Fatalf("encoding\n got %s\nwant %s", got, want)
	}
	back, err := decodeIdem(got)
	if err != nil || !sameRecord(back, rec) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for _, bad := range []string{
		`{"v":2,"fingerprint":"ab","status":201}`,
		`{"v":1,"fingerprint":"ab01","status":201}`,
		`{"v":1,"fingerprint":"` + string(bytes.Repeat([]byte("zz"), 32)) + `","status":201}`,
	} {
		if _, err := decodeIdem([]byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
	var raw map[string]any
	if err := json.Unmarshal(got, &raw); err != nil || raw["v"] != float64(1) {
		t.Fatalf("record is not a versioned JSON object: %s", got)
	}
}

// TestRememberAnswerReplacesExpired overwrites an expired record and checks
// that its old expiry entry went with it, so that exactly one entry is left
// and a sweep at the old expiry cannot take the new record.
func TestRememberAnswerReplacesExpired(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTestStore(t, clock)
	k := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "key-1"}
	if err := s.RememberAnswer(ctx, k, idempotency.NewRecord(idempotency.Fingerprint{1}, 201, []byte("a"), clock.Now())); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(idempotency.Lifetime + time.Hour)
	fresh := idempotency.NewRecord(idempotency.Fingerprint{2}, 202, []byte("b"), clock.Now())
	if err := s.RememberAnswer(ctx, k, fresh); err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(t, s, prefixIdemExpiry); n != 1 {
		t.Fatalf("%d expiry entries, want 1", n)
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
	s := openTestStore(t, clock)
	key := func(v string) idempotency.Key {
		return idempotency.Key{Scope: idempotency.ClientScope(netip.MustParseAddr("203.0.113.7")), Value: v}
	}
	// Five records an hour apart.
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		if err := s.RememberAnswer(ctx, key(v), idempotency.NewRecord(idempotency.Fingerprint{byte(i)}, 201, []byte(v), start.Add(time.Duration(i)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	// A stale expiry entry pointing at a live record must not remove it.
	stale := idemExpiryKey(start.Add(idempotency.Lifetime+30*time.Minute), key("e"))
	if err := s.db.Set(stale, nil, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at      time.Duration // after start
		limit   int
		removed int
		left    []string
		entries int
	}{
		{at: idempotency.Lifetime - time.Nanosecond, limit: 10, removed: 0, left: []string{"a", "b", "c", "d", "e"}, entries: 6},
		// At a's expiry: a and the stale entry (before b's expiry) go; e stays.
		{at: idempotency.Lifetime + time.Hour - time.Nanosecond, limit: 10, removed: 2, left: []string{"b", "c", "d", "e"}, entries: 4},
		// Past b, c and d's expiry, two at a time.
		{at: idempotency.Lifetime + 3*time.Hour, limit: 2, removed: 2, left: []string{"d", "e"}, entries: 2},
		{at: idempotency.Lifetime + 3*time.Hour, limit: 2, removed: 1, left: []string{"e"}, entries: 1},
		{at: idempotency.Lifetime + 4*time.Hour, limit: 2, removed: 1, left: nil, entries: 0},
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
		if !equalStrings(left, tt.left) {
			t.Fatalf("step %d: records %v left, want %v", i, left, tt.left)
		}
		if n := countPrefix(t, s, prefixIdemExpiry); n != tt.entries {
			t.Fatalf("step %d: %d expiry entries, want %d", i, n, tt.entries)
		}
	}
}

// TestRememberAnswerSweeps checks that writes sweep on their own: once the
// sweep interval has passed, a write removes what expired.
func TestRememberAnswerSweeps(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	s := openTestStore(t, clock)
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
	if n := countPrefix(t, s, prefixIdem); n != 1 {
		t.Fatalf("%d records after a write past their expiry, want 1 (the new one)", n)
	}
	if _, err := s.IdempotentAnswer(ctx, k("new")); err != nil {
		t.Fatal(err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
