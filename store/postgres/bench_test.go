package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// recorder is what both backends' ledgers offer the group-commit actor.
type recorder interface {
	RecordQuotes(context.Context, []store.EncodedQuote, store.Durability) ([]bool, error)
	FeeWallet(ctx context.Context, partnerID, ecosystem string) (string, bool, error)
	PutFeeWallet(ctx context.Context, partnerID, ecosystem, address string) error
}

// backends opens each backend for a benchmark.
func backends(b *testing.B) map[string]recorder {
	b.Helper()
	pb, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pb.Close() })
	pg, err := Open(context.Background(), srv.DSN(b), Options{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pg.Close() })
	return map[string]recorder{"pebble": pb, "postgres": pg}
}

// BenchmarkRecordQuotes commits batches of fee-bearing quotes, synced, from
// parallel goroutines, as the ledger actor's group commit does: ns/op is
// per quote.
func BenchmarkRecordQuotes(b *testing.B) {
	for _, size := range []int{1, 64} {
		for name, s := range backends(b) {
			b.Run(fmt.Sprintf("%s/batch%d", name, size), func(b *testing.B) {
				var n atomic.Int64
				at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					batch := make([]store.EncodedQuote, 0, size)
					flush := func() {
						if _, err := s.RecordQuotes(ctx, batch, store.Synced); err != nil {
							b.Error(err)
						}
						batch = batch[:0]
					}
					for pb.Next() {
						i := n.Add(1)
						q, err := store.EncodeQuote(feeQuote("ptn_a", fmt.Sprintf("qt_%d_%d", size, i), "evm", 1, at.Add(time.Duration(i))))
						if err != nil {
							b.Fatal(err)
						}
						if batch = append(batch, q); len(batch) == size {
							flush()
						}
					}
					if len(batch) > 0 {
						flush()
					}
				})
			})
		}
	}
}

// BenchmarkFeeWallet reads a fee wallet as every partner quote does.
func BenchmarkFeeWallet(b *testing.B) {
	for name, s := range backends(b) {
		if err := s.PutFeeWallet(context.Background(), "ptn_a", "evm", "0x1111111111111111111111111111111111111111"); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, ok, err := s.FeeWallet(context.Background(), "ptn_a", "evm"); err != nil || !ok {
						b.Error(ok, err)
					}
				}
			})
		})
	}
}
