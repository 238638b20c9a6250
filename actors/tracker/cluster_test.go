package tracker

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// fencedPebble gives the Pebble store the fenced write the PostgreSQL
// store has, under one lock, for trackers sharing it as nodes share a
// database.
type fencedPebble struct {
	*pebblestore.Store
	mu sync.Mutex
}

func (f *fencedPebble) SaveSwapFrom(ctx context.Context, prev, t *swap.Swap, events []webhook.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.Swap(ctx, t.ID)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(cur, prev) {
		return store.ErrStale
	}
	return f.SaveSwap(ctx, t, events)
}

func outboxEvents(t *testing.T, store *pebblestore.Store) []string {
	t.Helper()
	var events []string
	if err := store.DueDeliveries(context.Background(), time.Time{}, time.Now().Add(time.Hour), nil, func(e *webhook.OutboxEntry) bool {
		events = append(events, e.Event)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return events
}

// TestClusteredTrackers runs two trackers on one store as two nodes: a swap
// tracked on a node that does not own it is polled by its owner, and when
// the owner dies the other takes it over; when both believe they own it,
// each transition is still recorded, and published, once.
func TestClusteredTrackers(t *testing.T) {
	cases := []struct {
		name string
		// run drives the cluster once the swap is tracked on node b.
		run func(t *testing.T, m *clustertest.Members, a *Tracker, aSrc, bSrc *script)
	}{
		{"owner dies", func(t *testing.T, m *clustertest.Members, a *Tracker, aSrc, bSrc *script) {
			waitFor(t, "the owner's polls", func() bool { return aSrc.count() >= 2 })
			if n := bSrc.count(); n != 0 {
				t.Fatalf("node b polled a swap it does not own %d times", n)
			}
			a.Stop()
			m.Set("b")
		}},
		{"both own during a change", func(t *testing.T, m *clustertest.Members, a *Tracker, aSrc, bSrc *script) {
			m.Set("a", "b")
			waitFor(t, "both nodes polling", func() bool { return bSrc.count() >= 1 })
			defer a.Stop()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			pebble, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer pebble.Close()
			store := &fencedPebble{Store: pebble}
			if err := store.CreateWebhook(ctx, &webhook.Registration{PartnerID: "ptn_a", URL: "https://example.com/h",
				Events: []string{webhook.SwapPending, webhook.SwapCompleted}, Secret: "s", Active: true}); err != nil {
				t.Fatal(err)
			}
			m := clustertest.New("a")
			sched := swap.Schedule{First: 5 * time.Millisecond, Max: 10 * time.Millisecond, Horizon: time.Hour}
			pending := swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction}
			done := swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed,
				Receiving: swap.Leg{TxHash: "0xdst", ChainID: 8453, Amount: "5"}}
			aSrc := &script{obs: []swap.Observation{pending}}
			bSrc := &script{obs: []swap.Observation{pending, pending, pending, done}}
			opts := func(n string, src *script) Options {
				return Options{Sources: map[string]Source{"aggregator": src}, Schedule: sched,
					Owner: m.Node(n), RescanInterval: 20 * time.Millisecond}
			}
			a, err := Start(ctx, store, opts("a", aSrc))
			if err != nil {
				t.Fatal(err)
			}
			b, err := Start(ctx, store, opts("b", bSrc))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Stop()
			if _, err := b.Track(ctx, &swap.Swap{ID: "0xAB", QuoteID: "qt_1", PartnerID: "ptn_a",
				Provider: "aggregator", Sending: swap.Leg{TxHash: "0xAB", ChainID: 42161}}); err != nil {
				t.Fatal(err)
			}
			c.run(t, m, a, aSrc, bSrc)
			waitFor(t, "done", func() bool {
				s, err := store.Swap(ctx, "0xab")
				return err == nil && s.Status == swap.StatusDone
			})
			if got := outboxEvents(t, pebble); !slices.Equal(got, []string{webhook.SwapPending, webhook.SwapCompleted}) {
				t.Fatalf("events %v, want one pending then one completed", got)
			}
		})
	}
}

// TestClusteredTrackerNeedsFencedWrites refuses an Owner over a store
// that cannot fence its writes.
func TestClusteredTrackerNeedsFencedWrites(t *testing.T) {
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := Start(context.Background(), store, Options{Owner: clustertest.New().Node("a")}); err == nil {
		t.Fatal("a clustered tracker started on a store without fenced writes")
	}
}
