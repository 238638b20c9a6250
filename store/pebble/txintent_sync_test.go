package pebblestore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// TestPutTxIntentsArrivingTogetherShareSyncs: the transaction manager's
// callers submit at once, and each submit is a synced put; puts that wait
// together share the WAL's fsyncs instead of taking one each in turn (the
// store's lock used to be held through the sync: 64 puts, 64 syncs). Every
// put is still synced before it returns: each intent is there, once, and
// the WAL synced at least once.
func TestPutTxIntentsArrivingTogetherShareSyncs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir(), Options{})
	const n = 64
	before, ok := s.WALSyncs()
	if !ok {
		t.Fatal("no WAL sync figures")
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			in := &txintent.Intent{ID: fmt.Sprintf("tx_%04d", i), Purpose: "payout", Key: fmt.Sprintf("k%d", i), ChainID: 42161,
				From: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", To: "0x000000000000000000000000000000000000dEaD", Value: "1", GasLimit: 21_000, State: txintent.Queued, CreatedAt: now, UpdatedAt: now}
			_, created, err := s.PutTxIntent(ctx, in)
			if err == nil && !created {
				err = fmt.Errorf("%s: not created", in.Key)
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	after, _ := s.WALSyncs()
	syncs := after.Count - before.Count
	if syncs < 1 || syncs >= n {
		t.Fatalf("%d puts arriving together took %d WAL syncs: want at least one and fewer than one each", n, syncs)
	}
	for i := range n {
		if got, err := s.TxIntentByKey(ctx, fmt.Sprintf("k%d", i)); err != nil || got.ID != fmt.Sprintf("tx_%04d", i) {
			t.Fatalf("k%d: %+v, %v", i, got, err)
		}
	}
	t.Logf("%d puts, %d WAL syncs", n, syncs)
}
