package storecontract

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// ChainLog is the sandbox chains' operation log and the deliveries they
// made: an operation is durable before the chain answers for it, numbered
// once per chain, and replayed in order. Its consumer is the simulator's
// chain owner (actors/sandboxchain: Store and DeliveryStore), which only
// the composition root may import, so the methods are restated here; the
// composition root's tests hold ChainLog to both of its interfaces.
type ChainLog interface {
	AppendChainOp(ctx context.Context, chainID, seq uint64, rec []byte) error
	ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, rec []byte) error) error
	SandboxDelivery(ctx context.Context, ref string) (string, error)
	PutSandboxDelivery(ctx context.Context, ref, txHash string) error
}

// opsOf is chain's log as "seq:record" strings.
func opsOf(t testing.TB, s ChainLog, chainID uint64) string {
	t.Helper()
	var out []string
	mustNil(t, "chain ops", s.ChainOps(context.Background(), chainID, func(seq uint64, rec []byte) error {
		out = append(out, fmt.Sprintf("%d:%s", seq, rec))
		return nil
	}))
	return fmt.Sprint(out)
}

// deliveryOf is the delivery made for ref, "" for none.
func deliveryOf(t testing.TB, s ChainLog, ref string) string {
	t.Helper()
	h, err := s.SandboxDelivery(context.Background(), ref)
	if errors.Is(err, account.ErrNotFound) {
		return ""
	}
	mustNil(t, "sandbox delivery", err)
	return h
}

// RunChainLog holds a ChainLog implementation to its contract.
func RunChainLog(t *testing.T, open Factory[ChainLog]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[ChainLog])
	}{
		{"operations replay in sequence order, chain by chain", func(t *testing.T, h *Handle[ChainLog]) {
			s := h.Store
			for _, op := range []struct {
				chain, seq uint64
				rec        string
			}{{42161, 1, "a"}, {8453, 1, "x"}, {42161, 2, "b"}, {42161, 10, "c"}, {42161, 3, "d"}} {
				mustNil(t, "append", s.AppendChainOp(ctx, op.chain, op.seq, []byte(op.rec)))
			}
			if got := opsOf(t, s, 42161); got != "[1:a 2:b 3:d 10:c]" {
				t.Fatalf("chain 42161 replays %s", got)
			}
			if got := opsOf(t, s, 8453); got != "[1:x]" {
				t.Fatalf("chain 8453 replays %s", got)
			}
			if got := opsOf(t, s, 1); got != "[]" {
				t.Fatalf("an empty chain replays %s", got)
			}
		}},
		{"a sequence number is taken once", func(t *testing.T, h *Handle[ChainLog]) {
			mustNil(t, "append", h.Store.AppendChainOp(ctx, 42161, 1, []byte("a")))
			if err := h.Store.AppendChainOp(ctx, 42161, 1, []byte("other")); !errors.Is(err, account.ErrExists) {
				t.Fatalf("second append of seq 1: %v, want ErrExists", err)
			}
			if got := opsOf(t, h.Store, 42161); got != "[1:a]" {
				t.Fatalf("after a refused append %s", got)
			}
		}},
		{"a replay stops at its callback's error", func(t *testing.T, h *Handle[ChainLog]) {
			for seq := uint64(1); seq <= 3; seq++ {
				mustNil(t, "append", h.Store.AppendChainOp(ctx, 42161, seq, []byte("r")))
			}
			stop, n := errors.New("stop"), 0
			err := h.Store.ChainOps(ctx, 42161, func(uint64, []byte) error {
				n++
				if n == 2 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || n != 2 {
				t.Fatalf("replay returned %v after %d operations", err, n)
			}
		}},
		{"deliveries are remembered by reference", func(t *testing.T, h *Handle[ChainLog]) {
			if deliveryOf(t, h.Store, "ref-1") != "" {
				t.Fatal("a delivery before any")
			}
			mustNil(t, "put", h.Store.PutSandboxDelivery(ctx, "ref-1", "0xaa"))
			if deliveryOf(t, h.Store, "ref-1") != "0xaa" || deliveryOf(t, h.Store, "ref-2") != "" {
				t.Fatal("deliveries read back wrong")
			}
		}},
		{"an interrupted append leaves nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[ChainLog]) {
			mustNil(t, "append", h.Store.AppendChainOp(ctx, 42161, 1, []byte("a")))
			Interrupt(t, h, func(ctx context.Context, s ChainLog) error {
				return s.AppendChainOp(ctx, 42161, 2, []byte("b"))
			}, func(t testing.TB, s ChainLog) {
				if got := opsOf(t, s, 42161); got != "[1:a]" {
					t.Fatalf("an interrupted append left %s", got)
				}
			}, func(t testing.TB, s ChainLog) {
				if got := opsOf(t, s, 42161); got != "[1:a 2:b]" {
					t.Fatalf("after the append %s", got)
				}
			})
		}},
		{"an acknowledged delivery survives a crash", func(t *testing.T, h *Handle[ChainLog]) {
			Interrupt(t, h, func(ctx context.Context, s ChainLog) error {
				return s.PutSandboxDelivery(ctx, "ref-1", "0xaa")
			}, func(t testing.TB, s ChainLog) {
				if got := deliveryOf(t, s, "ref-1"); got != "" {
					t.Fatalf("an interrupted put left %q", got)
				}
			}, func(t testing.TB, s ChainLog) {
				if got := deliveryOf(t, s, "ref-1"); got != "0xaa" {
					t.Fatalf("after the put %q", got)
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
