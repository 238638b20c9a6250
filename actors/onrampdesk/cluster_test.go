package onrampdesk

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// fencedPebble gives the Pebble store the fenced write the PostgreSQL
// store has, under one lock, for desks sharing it as nodes share a
// database.
type fencedPebble struct {
	*pebblestore.Store
	mu sync.Mutex
}

func (f *fencedPebble) SaveOnrampOrderFrom(ctx context.Context, prev, o *onramp.Order, events []webhook.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.OnrampOrder(ctx, o.UID)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(cur, prev) {
		return store.ErrStale
	}
	return f.SaveOnrampOrder(ctx, o, events)
}

// TestClusteredDesks runs two desks on one store as two nodes, node a
// owning the order: a payment made on node b is carried through by a, and
// an order paid on a, whose owner then dies, is completed by b; each event
// is published once and the crypto delivered once.
func TestClusteredDesks(t *testing.T) {
	cases := []struct {
		name string
		// aStep paces node a's steps; on is the node the order is opened
		// and paid on; dies makes a die after the payment and b own it.
		aStep time.Duration
		on    string
		dies  bool
	}{
		{name: "paid on a node that does not own it", aStep: short, on: "b"},
		{name: "owner dies after the payment", aStep: long, on: "a", dies: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			store := &fencedPebble{Store: e.store}
			m := clustertest.New("a")
			start := func(name string, step time.Duration) *Desk {
				o := e.options(step)
				o.Owner, o.RescanInterval = m.Node(name), 10*time.Millisecond
				d, err := Start(context.Background(), store, o)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			desks := map[string]*Desk{"a": start("a", c.aStep), "b": start("b", short)}
			stopped := map[string]bool{}
			defer func() {
				for name, d := range desks {
					if !stopped[name] {
						d.Stop()
					}
				}
			}()
			p := e.partner("ptn_a", 100)
			o, _, err := desks[c.on].Checkout(context.Background(), p, request(t), e.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := desks[c.on].Act(context.Background(), o.UID, onramp.Pay); err != nil {
				t.Fatal(err)
			}
			if c.dies {
				desks["a"].Stop()
				stopped["a"] = true
				m.Set("b")
			}
			done := e.waitState(o.UID, onramp.Completed)
			checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
			want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}
			if got := e.events(o.UID); !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			if n := len(e.delivery.made()); n != 1 {
				t.Fatalf("%d deliveries, want 1", n)
			}
		})
	}
}
