package storecontract

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
)

// Idempotency is the answers remembered for Idempotency-Keys
// (edge.IdempotencyStore): one record per key and scope, replaced by a
// later write, durable before the answer it remembers is sent.
type Idempotency = edge.IdempotencyStore

// sameAnswer compares the fields a remembered answer is replayed from.
func sameAnswer(a, b *idempotency.Record) bool {
	return a.Fingerprint == b.Fingerprint && a.Status == b.Status && bytes.Equal(a.Body, b.Body) && a.RequestID == b.RequestID &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

// answerOf is the record remembered under k, nil for none.
func answerOf(t testing.TB, s Idempotency, k idempotency.Key) *idempotency.Record {
	t.Helper()
	rec, err := s.IdempotentAnswer(context.Background(), k)
	if errors.Is(err, account.ErrNotFound) {
		return nil
	}
	mustNil(t, "idempotent answer", err)
	return rec
}

// RunIdempotency holds an Idempotency implementation to its contract.
func RunIdempotency(t *testing.T, open Factory[Idempotency]) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	key := idempotency.Key{Scope: idempotency.PartnerScope("ptn_a"), Value: "k/1"}
	first := idempotency.NewRecord(idempotency.Fingerprint{1, 2, 3}, 201, []byte(`{"data":{"id":"wh_1"},"error":null}`), now)
	first.RequestID = "req-1"
	second := idempotency.NewRecord(idempotency.Fingerprint{4}, 409, []byte(`{"data":null}`), now.Add(time.Second))
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Idempotency])
	}{
		{"an answer reads back in its scope only, and a later one replaces it", func(t *testing.T, h *Handle[Idempotency]) {
			s := h.Store
			if answerOf(t, s, key) != nil {
				t.Fatal("an answer before any write")
			}
			mustNil(t, "remember", s.RememberAnswer(ctx, key, first))
			if got := answerOf(t, s, key); got == nil || !sameAnswer(got, first) {
				t.Fatalf("read back %+v, want %+v", got, first)
			}
			for _, other := range []idempotency.Key{{Scope: idempotency.PartnerScope("ptn_b"), Value: "k/1"}, {Scope: key.Scope, Value: "k/2"}} {
				if answerOf(t, s, other) != nil {
					t.Fatalf("key %+v sees another key's answer", other)
				}
			}
			mustNil(t, "replace", s.RememberAnswer(ctx, key, second))
			if got := answerOf(t, s, key); got == nil || !sameAnswer(got, second) {
				t.Fatalf("after replacement %+v", got)
			}
		}},
		{"malformed keys are refused", func(t *testing.T, h *Handle[Idempotency]) {
			for _, bad := range []idempotency.Key{{Scope: "", Value: "k"}, {Scope: "partner.x", Value: ""}, {Scope: "a/b", Value: "k"}} {
				if err := h.Store.RememberAnswer(ctx, bad, first); err == nil {
					t.Errorf("remember under %+v accepted", bad)
				}
				if _, err := h.Store.IdempotentAnswer(ctx, bad); err == nil || errors.Is(err, account.ErrNotFound) {
					t.Errorf("read of %+v: %v, want a refusal", bad, err)
				}
			}
		}},
		{"an interrupted write keeps the old answer, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Idempotency]) {
			mustNil(t, "remember", h.Store.RememberAnswer(ctx, key, first))
			Interrupt(t, h, func(ctx context.Context, s Idempotency) error {
				return s.RememberAnswer(ctx, key, second)
			}, func(t testing.TB, s Idempotency) {
				if got := answerOf(t, s, key); got == nil || !sameAnswer(got, first) {
					t.Fatalf("an interrupted write left %+v", got)
				}
			}, func(t testing.TB, s Idempotency) {
				if got := answerOf(t, s, key); got == nil || !sameAnswer(got, second) {
					t.Fatalf("the acknowledged answer is %+v", got)
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}
