package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// slowCommits is a store whose outcome commits take a while, as on a slow
// disk: outcomes finishing meanwhile must join the next batch.
type slowCommits struct {
	*pebblestore.Store
	delay time.Duration
}

func (s slowCommits) FinishAttempts(ctx context.Context, outs []hook.AttemptOutcome) error {
	time.Sleep(s.delay)
	return s.Store.FinishAttempts(ctx, outs)
}

func TestOutcomesShareCommits(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	var hooks []*hook.Registration
	for _, pid := range []string{"ptn_a", "ptn_b"} {
		hooks = append(hooks, register(t, s, pid, rc.srv.URL, hook.SwapCompleted))
	}
	p := startPool(t, newSystem(t), slowCommits{Store: s, delay: 30 * time.Millisecond}, Config{TLSConfig: tlsFor(rc), PoolSize: 8})
	const events = 20
	for i := range events {
		for _, w := range hooks {
			if err := p.Publish(context.Background(), w.PartnerID, swapEvent("tx-"+string(rune('a'+i)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 10*time.Second, "every delivery recorded", func() bool {
		n := 0
		for _, w := range hooks {
			recs, _ := s.Deliveries(context.Background(), w.PartnerID, w.ID, 100)
			for _, r := range recs {
				if r.State == hook.DeliveryDelivered {
					n++
				}
			}
		}
		return n == events*len(hooks)
	})
	if got := rc.n.Load(); got != int64(events*len(hooks)) {
		t.Fatalf("receiver saw %d requests for %d deliveries", got, events*len(hooks))
	}
	// 40 attempts, each commit taking 30 ms while four attempts run at a
	// time: one commit per attempt would mean no sharing at all.
	if c, a := p.Stats().Commits.Load(), p.Stats().Attempts.Load(); c == 0 || c*2 > a {
		t.Fatalf("%d commits for %d attempts", c, a)
	}
}

// TestEntryCommittedLateIsDelivered commits an outbox entry stamped well
// before the scans that ran meanwhile, as an event source with a slow batch
// would, and expects the periodic full scan to find it below the wake-up
// scans' floor.
func TestEntryCommittedLateIsDelivered(t *testing.T) {
	s := openStore(t, t.TempDir())
	rc := newReceiver(t, nil)
	w := register(t, s, "ptn_a", rc.srv.URL, hook.SwapCompleted)
	other := register(t, s, "ptn_b", rc.srv.URL, hook.SwapCompleted)
	p := startPool(t, newSystem(t), s, Config{TLSConfig: tlsFor(rc), ScanInterval: 200 * time.Millisecond})

	b := s.DB().NewBatch()
	defer b.Close()
	if err := s.EnqueueEvent(b, "ptn_a", swapEvent("tx-late")); err != nil {
		t.Fatal(err)
	}
	// Wake-up scans move the floor past the entry's due time.
	for i := range 3 {
		if err := p.Publish(context.Background(), "ptn_b", swapEvent("tx-other-"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * floorMargin / 3)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	p.Wake()
	eventually(t, 3*time.Second, "late entry delivered", func() bool { return lastState(t, s, w).State == hook.DeliveryDelivered })
	if st := lastState(t, s, other).State; st != hook.DeliveryDelivered {
		t.Fatalf("other partner's delivery %s", st)
	}
}
