package tracker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// script is a Source that answers each swap's polls from a list, repeating
// the last answer.
type script struct {
	mu    sync.Mutex
	obs   []swap.Observation
	err   error
	polls int
}

func (s *script) SwapStatus(context.Context, *swap.Swap) (swap.Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls++
	if s.err != nil {
		return swap.Observation{}, s.err
	}
	o := s.obs[0]
	if len(s.obs) > 1 {
		s.obs = s.obs[1:]
	}
	return o, nil
}

func (s *script) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.polls }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTrackerFollowsASwapToDoneAcrossARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateWebhook(ctx, &webhook.Registration{PartnerID: "ptn_a", URL: "https://example.com/h",
		Events: []string{webhook.SwapPending, webhook.SwapCompleted}, Secret: "s", Active: true}); err != nil {
		t.Fatal(err)
	}
	sched := swap.Schedule{First: 10 * time.Millisecond, Max: 20 * time.Millisecond, Horizon: time.Hour}
	pending := &script{obs: []swap.Observation{{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction}}}
	var published sync.WaitGroup
	published.Add(1)
	once := sync.Once{}
	tr, err := Start(ctx, store, Options{Sources: map[string]Source{"aggregator": pending}, Schedule: sched,
		Published: func() { once.Do(published.Done) }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tr.Track(ctx, &swap.Swap{ID: "0xAB", QuoteID: "qt_1", PartnerID: "ptn_a",
		Provider: "aggregator", Sending: swap.Leg{TxHash: "0xAB", ChainID: 42161}})
	if err != nil || s.ID != "0xab" {
		t.Fatalf("track %+v %v", s, err)
	}
	if again, err := tr.Track(ctx, &swap.Swap{ID: "0xab", Provider: "aggregator"}); err != nil || again.QuoteID != "qt_1" {
		t.Fatalf("a second report replaced the swap: %+v %v", again, err)
	}
	published.Wait()
	waitFor(t, "several polls", func() bool { return pending.count() >= 3 })
	tr.Stop()
	got, _ := store.Swap(ctx, "0xab")
	if got.Status != swap.StatusPending {
		t.Fatalf("before the restart: %+v", got)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// A new tracker on the reopened store resumes the open swap.
	if store, err = pebblestore.Open(dir, pebblestore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	done := &script{obs: []swap.Observation{{Status: swap.StatusDone, Substatus: swap.Completed,
		Receiving: swap.Leg{TxHash: "0xdst", ChainID: 8453, Amount: "5"}}}}
	tr, err = Start(ctx, store, Options{Sources: map[string]Source{"aggregator": done}, Schedule: sched})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "done", func() bool {
		s, err := store.Swap(ctx, "0xab")
		return err == nil && s.Status == swap.StatusDone
	})
	polls := done.count()
	time.Sleep(60 * time.Millisecond)
	tr.Stop()
	if done.count() != polls {
		t.Fatalf("a terminal swap was polled again: %d → %d", polls, done.count())
	}
	var events []string
	if err := store.DueDeliveries(ctx, time.Time{}, time.Now().Add(time.Hour), nil, func(e *webhook.OutboxEntry) bool {
		events = append(events, e.Event)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0] != webhook.SwapPending || events[1] != webhook.SwapCompleted {
		t.Fatalf("events %v, want one pending then one completed", events)
	}
}

func TestFailedPollsAreRetriedAndTheHorizonEndsTracking(t *testing.T) {
	ctx := context.Background()
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	broken := &script{err: errors.New("upstream down")}
	tr, err := Start(ctx, store, Options{Fallback: broken,
		Schedule: swap.Schedule{First: 5 * time.Millisecond, Max: 5 * time.Millisecond, Horizon: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Stop()
	if _, err := tr.Track(ctx, &swap.Swap{ID: "0xcd", Provider: "unknown", Status: swap.StatusPending}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the horizon", func() bool {
		s, err := store.Swap(ctx, "0xcd")
		return err == nil && s.Substatus == swap.UnknownError && s.NextPoll.IsZero()
	})
	if broken.count() < 3 {
		t.Fatalf("only %d polls before giving up", broken.count())
	}
}

// orderedStore notes each swap save in the log the test shares with its
// Recorded, so that their order shows.
type orderedStore struct {
	*pebblestore.Store
	mu  *sync.Mutex
	log *[]string
}

func (o orderedStore) SaveSwap(ctx context.Context, s *swap.Swap, events []webhook.Event) error {
	o.mu.Lock()
	*o.log = append(*o.log, "save "+s.Status)
	o.mu.Unlock()
	return o.Store.SaveSwap(ctx, s, events)
}

// TestPartnerSwapsWaitForTheQuoteRecords: every save of a partner's swap
// transition comes after Recorded (the ledger's, which commits the quote's
// activity line the save moves), and while Recorded fails the transition is
// not saved (the poll is retried).
func TestPartnerSwapsWaitForTheQuoteRecords(t *testing.T) {
	ctx := context.Background()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var (
		mu   sync.Mutex
		log  []string
		fail error
	)
	recorded := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, "recorded")
		return fail
	}
	done := &script{obs: []swap.Observation{{Status: swap.StatusDone, Substatus: swap.Completed,
		Receiving: swap.Leg{TxHash: "0xdst", ChainID: 8453, Amount: "5"}}}}
	sched := swap.Schedule{First: 10 * time.Millisecond, Max: 20 * time.Millisecond, Horizon: time.Hour}
	tr, err := Start(ctx, orderedStore{Store: st, mu: &mu, log: &log}, Options{Sources: map[string]Source{"aggregator": done},
		Schedule: sched, Recorded: recorded})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Stop()
	if _, err := tr.Track(ctx, &swap.Swap{ID: "0xAB", QuoteID: "qt_1", PartnerID: "ptn_a",
		Provider: "aggregator", Sending: swap.Leg{TxHash: "0xAB", ChainID: 42161}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "done", func() bool {
		s, err := st.Swap(ctx, "0xab")
		return err == nil && s.Status == swap.StatusDone
	})
	mu.Lock()
	saves := 0
	for i, e := range log {
		if e != "recorded" {
			saves++
			if i == 0 || log[i-1] != "recorded" {
				t.Errorf("%q at %d not right after a Recorded: %v", e, i, log)
			}
		}
	}
	if saves == 0 {
		t.Errorf("log %v, want the tracked swap's transition saved", log)
	}
	fail, log = errors.New("ledger stopped"), nil
	mu.Unlock()
	if _, err := tr.Track(ctx, &swap.Swap{ID: "0xCD", QuoteID: "qt_2", PartnerID: "ptn_a",
		Provider: "aggregator", Sending: swap.Leg{TxHash: "0xCD", ChainID: 42161}}); err != nil {
		t.Fatal(err)
	}
	polls := done.count()
	waitFor(t, "polls of the second swap", func() bool { return done.count() >= polls+3 })
	if s, err := st.Swap(ctx, "0xcd"); err != nil || s.Status == swap.StatusDone {
		t.Fatalf("the transition was saved without its quote's record: %+v %v", s, err)
	}
}
