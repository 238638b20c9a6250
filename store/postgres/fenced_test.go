package postgres

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// TestFencedTransitionsApplyOnce has several writers (the nodes of a
// cluster during a topology change) move one record from the state they
// all read, at once: exactly one commits; the others get ErrStale and
// write nothing, so the transition's event is in the outbox once and the
// activity line's earning is pending once. A writer that reads again moves
// on from the stored state.
func TestFencedTransitionsApplyOnce(t *testing.T) {
	at := time.Unix(1_767_225_600, 0).UTC()
	cases := []struct {
		name  string
		event string
		// setup stores the record and returns a mover: from the record
		// as read, it makes the next state and saves it fenced.
		setup func(t *testing.T, s *Store) (move func(ctx context.Context) error, check func(t *testing.T))
	}{
		{"swap", webhook.SwapCompleted, func(t *testing.T, s *Store) (func(context.Context) error, func(*testing.T)) {
			ctx := context.Background()
			tr := &swap.Swap{ID: "0xfe", PartnerID: "ptn_a", Status: swap.StatusPending, CreatedAt: at, NextPoll: at}
			if _, _, err := s.CreateSwap(ctx, tr); err != nil {
				t.Fatal(err)
			}
			prev, err := s.Swap(ctx, "0xfe")
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
					next := *prev
					next.Status, next.NextPoll, next.Polls = swap.StatusDone, time.Time{}, prev.Polls+1
					return s.SaveSwapFrom(ctx, prev, &next, []webhook.Event{swap.Event(webhook.SwapCompleted, &next, at)})
				}, func(t *testing.T) {
					got, err := s.Swap(ctx, "0xfe")
					if err != nil || got.Status != swap.StatusDone || got.Polls != 1 {
						t.Fatalf("stored %+v %v", got, err)
					}
					// A writer that read the old state again is refused too.
					again := *got
					again.Polls = 7
					if err := s.SaveSwapFrom(ctx, prev, &again, nil); !errors.Is(err, store.ErrStale) {
						t.Fatalf("write from an old read: %v", err)
					}
					if err := s.SaveSwapFrom(ctx, got, &again, nil); err != nil {
						t.Fatalf("write from a fresh read: %v", err)
					}
				}
		}},
		{"on-ramp order", webhook.OnrampCompleted, func(t *testing.T, s *Store) (func(context.Context) error, func(*testing.T)) {
			ctx := context.Background()
			o := newOnrampOrder(t, "ptn_a", 100, at)
			if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
			moveAndSave(t, s, o, onramp.PaymentReceived, at.Add(time.Second), "", "")
			moveAndSave(t, s, o, onramp.CryptoSent, at.Add(2*time.Second), "0xdd", "")
			prev, err := s.OnrampOrder(ctx, o.UID)
			if err != nil {
				t.Fatal(err)
			}
			pending := pendingIndexSize(t, s)
			return func(ctx context.Context) error {
					next := *prev
					next.History = append([]onramp.Step(nil), prev.History...)
					ev, err := next.Move(onramp.Completed, at.Add(3*time.Second), "", "")
					if err != nil {
						return err
					}
					return s.SaveOnrampOrderFrom(ctx, prev, &next, []webhook.Event{*ev})
				}, func(t *testing.T) {
					got, err := s.OnrampOrder(ctx, o.UID)
					if err != nil || got.State != onramp.Completed || len(got.History) != len(prev.History)+1 {
						t.Fatalf("stored %+v %v", got, err)
					}
					if n := pendingIndexSize(t, s); n != pending+1 {
						t.Fatalf("%d earnings pending, want %d", n, pending+1)
					}
				}
		}},
		{"multi-step deposit", webhook.DepositReceived, func(t *testing.T, s *Store) (func(context.Context) error, func(*testing.T)) {
			ctx := context.Background()
			d := &inbound.Record{PartnerID: "ptn_a", Deposit: inbound.Deposit{
				Registration: inbound.Registration{TxHash: common.HexToHash("0xAB"), FromAddress: common.HexToAddress("0x01"),
					ToAddress: common.HexToAddress("0x02"), OutputToken: common.HexToAddress("0x03"), DestinationDomain: 369},
				SourceChain: 8453, AmountIn: big.NewInt(5_000_000), State: inbound.Received, CreatedAt: at, UpdatedAt: at}}
			if _, _, err := s.CreateInboundDeposit(ctx, d, nil); err != nil {
				t.Fatal(err)
			}
			prev, err := s.InboundDepositByHash(ctx, d.Deposit.Registration.TxHash.Hex())
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
					next := *prev
					next.Deposit.State, next.Deposit.UpdatedAt = inbound.Bridging, at.Add(time.Second)
					ev := webhook.Event{Name: webhook.DepositReceived, Time: at, Data: map[string]string{"txHash": "0xab"}}
					return s.SaveInboundDepositFrom(ctx, prev, &next, []webhook.Event{ev})
				}, func(t *testing.T) {
					got, err := s.InboundDepositByHash(ctx, d.Deposit.Registration.TxHash.Hex())
					if err != nil || got.Deposit.State != inbound.Bridging {
						t.Fatalf("stored %+v %v", got, err)
					}
				}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t, Options{})
			if err := s.CreateWebhook(ctx, newHook("ptn_a", c.event)); err != nil {
				t.Fatal(err)
			}
			move, check := c.setup(t, s)
			before := countEvents(t, s, c.event)
			// The writers run on connections of their own, at once, as
			// the nodes' do.
			const writers = 4
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = move(ctx)
				}()
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, store.ErrStale):
					t.Fatalf("a writer failed otherwise: %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d writers committed, want 1 (%v)", won, errs)
			}
			if n := countEvents(t, s, c.event) - before; n != 1 {
				t.Fatalf("%d %s events published, want 1", n, c.event)
			}
			check(t)
		})
	}
}

// countEvents counts the outbox entries of event.
func countEvents(t *testing.T, s *Store, event string) int {
	t.Helper()
	n := 0
	for _, e := range dueEntries(t, s, time.Now().Add(time.Hour)) {
		if e.Event == event {
			n++
		}
	}
	return n
}

// TestLeaseOnEnqueue: in a cluster the node that commits an entry holds
// its lease from the commit on, so another node's scan does not deliver it
// while the first delivers it unclaimed, whether it was published to one
// webhook or with a state change; the committing node's own scans read
// it, and once its lease lapses (the node died) another takes it over.
func TestLeaseOnEnqueue(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		publish func(s *Store, w *webhook.Registration) error
	}{
		{"published to one webhook", func(s *Store, w *webhook.Registration) error {
			_, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: time.Now()})
			return err
		}},
		{"published with a state change", func(s *Store, w *webhook.Registration) error {
			tr := &swap.Swap{ID: "0xaa", PartnerID: "ptn_a", Status: swap.StatusDone}
			return s.SaveSwap(ctx, tr, []webhook.Event{swap.Event(webhook.SwapCompleted, tr, time.Now())})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := newTestDB(t)
			const lease = 2 * time.Second
			a := db.open(t, Options{OutboxLease: lease, LeaseOnEnqueue: true})
			b := db.open(t, Options{OutboxLease: lease, LeaseOnEnqueue: true})
			w := newHook("ptn_a", webhook.SwapCompleted)
			if err := a.CreateWebhook(ctx, w); err != nil {
				t.Fatal(err)
			}
			if err := c.publish(a, w); err != nil {
				t.Fatal(err)
			}
			now := time.Now().Add(time.Hour)
			if got := dueEntries(t, b, now); len(got) != 0 {
				t.Fatalf("another node read an entry the committing node holds: %+v", got)
			}
			if got := dueEntries(t, a, now); len(got) != 1 {
				t.Fatalf("the committing node reads %d entries, want its 1", len(got))
			}
			time.Sleep(lease + 500*time.Millisecond)
			if got := dueEntries(t, b, now); len(got) != 1 {
				t.Fatalf("after the lease lapsed another node reads %d entries, want 1", len(got))
			}
		})
	}
}
