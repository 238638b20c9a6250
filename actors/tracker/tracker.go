// Package tracker follows swaps after their quote until they reach a
// terminal status. Each tracked swap is polled at its provider (LI.FI's
// status API, the sandbox's simulated bridging, ...) on the schedule of
// package swap: quickly at first, then backing off, up to a give-up
// horizon. Every transition is persisted with the webhook event it
// publishes and the partner's activity record in one synced batch, so
// tracking survives a restart: a started tracker resumes every open swap.
//
// Concurrency: one scheduler goroutine owns the queue of due polls (a heap
// by due time); polls run on a bounded set of goroutines; a swap is in the
// queue at most once and polled by one goroutine at a time, so its
// transitions never race.
//
// In a cluster (Options.Owner set) each node follows only the swaps it owns
// ("swap/" and the hash, placed over the live members): Track starts
// polling a new swap only on its owner, which otherwise adopts it from the
// store at its next scan; every node scans the store's open swaps when the
// topology changes and every RescanInterval, adopting those it now owns
// (a dead node's within a refresh of the membership and a scan), and a poll
// of a swap the node no longer owns is dropped. While the topology
// changes two nodes may briefly both poll one swap: every transition is
// then written fenced (FencedStore), so the one that read a state no longer
// stored writes nothing and publishes nothing.
package tracker

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Store keeps tracked swaps; store.Swaps promises it (both backends).
type Store interface {
	CreateSwap(ctx context.Context, t *swap.Swap) (*swap.Swap, bool, error)
	SaveSwap(ctx context.Context, t *swap.Swap, events []webhook.Event) error
	Swap(ctx context.Context, hash string) (*swap.Swap, error)
	EachOpenSwap(ctx context.Context, fn func(*swap.Swap) bool) error
}

// FencedStore writes a transition only while the stored swap is still
// prev, the one read, and fails with store.ErrStale otherwise; the
// PostgreSQL store is one. A tracker with an Owner needs it.
type FencedStore interface {
	SaveSwapFrom(ctx context.Context, prev, t *swap.Swap, events []webhook.Event) error
}

// Owner says which swaps this node follows in a cluster; *cluster.Node is
// one. Keys are "swap/" and the swap's hash (lower case).
type Owner interface {
	Owns(key string) bool
	// Watch receives after each change of the cluster's topology.
	Watch() (<-chan struct{}, func())
}

// OwnerKey is the ownership key of the swap whose source hash is id.
func OwnerKey(id string) string { return "swap/" + swap.NormalizeHash(id) }

// Source observes a swap at its provider.
type Source interface {
	SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error)
}

// Options tunes a Tracker.
type Options struct {
	// Sources observe swaps by provider name; a swap whose provider has no
	// source is observed by Fallback.
	Sources  map[string]Source
	Fallback Source
	// Schedule is the polling schedule; zero means swap.DefaultSchedule.
	Schedule swap.Schedule
	// Workers bounds concurrent polls (default 8).
	Workers int
	// PollTimeout bounds one poll (default 10 s).
	PollTimeout time.Duration
	// Recorded, when set, returns once the partner quotes recorded so far
	// are in the store (the ledger's Recorded): a fee-free partner quote is
	// answered before its activity line is committed, and a swap's save
	// moves that line to the swap's status, so it must be there first.
	Recorded func(ctx context.Context) error
	// Published is called after a transition published events, so that
	// delivery need not wait for its periodic scan; nil does nothing.
	Published func()
	// Owner, set in a cluster, limits the tracker to the swaps this node
	// owns (see the package comment); the store must then be a
	// FencedStore. Nil follows every swap, as a single node does.
	Owner Owner
	// RescanInterval paces a clustered tracker's scans of the store for
	// open swaps it owns and does not follow (default
	// DefaultRescanInterval); topology changes scan at once.
	RescanInterval time.Duration
	Logger         *slog.Logger
	Now            func() time.Time
}

// Defaults of Options.
const (
	DefaultWorkers     = 8
	DefaultPollTimeout = 10 * time.Second
	// DefaultRescanInterval bounds how long a swap tracked on a node that
	// does not own it waits for its owner to adopt it.
	DefaultRescanInterval = 2 * time.Second
)

// Tracker is the running tracker.
type Tracker struct {
	store Store
	opts  Options
	// fenced is the store's fenced write, used in a cluster.
	fenced FencedStore

	mu     sync.Mutex
	queue  dueQueue
	queued map[string]bool
	// polling holds the swaps being polled now, so that a scan adopts
	// neither one in the queue nor one in flight.
	polling map[string]bool
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	sem     chan struct{}
	polls   sync.WaitGroup
}

// Start resumes every open swap of store and starts polling.
func Start(ctx context.Context, store Store, o Options) (*Tracker, error) {
	if o.Schedule == (swap.Schedule{}) {
		o.Schedule = swap.DefaultSchedule()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RescanInterval <= 0 {
		o.RescanInterval = DefaultRescanInterval
	}
	t := &Tracker{store: store, opts: o, queued: map[string]bool{}, polling: map[string]bool{}, wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), sem: make(chan struct{}, o.Workers)}
	if o.Owner != nil {
		f, ok := store.(FencedStore)
		if !ok {
			return nil, errors.New("tracker: a clustered tracker needs a store with fenced writes")
		}
		t.fenced = f
	}
	if err := t.adoptOpen(ctx); err != nil {
		return nil, fmt.Errorf("tracker: resume open swaps: %w", err)
	}
	go t.run()
	if o.Owner != nil {
		watch, cancel := o.Owner.Watch()
		t.polls.Add(1)
		go t.rescan(watch, cancel)
	}
	return t, nil
}

// owns reports whether this node follows the swap id.
func (t *Tracker) owns(id string) bool {
	return t.opts.Owner == nil || t.opts.Owner.Owns(OwnerKey(id))
}

// adoptOpen queues every open swap this node owns and does not follow yet.
func (t *Tracker) adoptOpen(ctx context.Context) error {
	return t.store.EachOpenSwap(ctx, func(s *swap.Swap) bool {
		if t.owns(s.ID) {
			t.adopt(s.ID, s.NextPoll)
		}
		return true
	})
}

// rescan adopts the open swaps this node owns after each topology change
// and every RescanInterval, until Stop.
func (t *Tracker) rescan(watch <-chan struct{}, cancel func()) {
	defer t.polls.Done()
	defer cancel()
	tick := time.NewTicker(t.opts.RescanInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-watch:
		case <-tick.C:
		}
		ctx, done := context.WithTimeout(context.Background(), t.opts.PollTimeout)
		if err := t.adoptOpen(ctx); err != nil {
			t.opts.Logger.Warn("tracker: scan open swaps", "err", err)
		}
		done()
	}
}

// Track starts following a swap (or returns the one already followed
// under its source hash) and polls it at once.
func (t *Tracker) Track(ctx context.Context, s *swap.Swap) (*swap.Swap, error) {
	now := t.opts.Now()
	s.ID = swap.NormalizeHash(s.ID)
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.UpdatedAt, s.NextPoll = now, now
	stored, created, err := t.store.CreateSwap(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("tracker: track %s: %w", s.ID, err)
	}
	// In a cluster a node that does not own the swap leaves it to its
	// owner's next scan.
	if created && t.owns(stored.ID) {
		t.enqueue(stored.ID, now)
	}
	return stored, nil
}

// Swap returns a tracked swap by its source hash, or store.ErrNotFound.
func (t *Tracker) Swap(ctx context.Context, hash string) (*swap.Swap, error) {
	return t.store.Swap(ctx, hash)
}

// Stop stops polling and waits for polls in flight.
func (t *Tracker) Stop() {
	close(t.stop)
	<-t.done
	t.polls.Wait()
}

func (t *Tracker) enqueue(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.enqueueLocked(id, at)
}

// adopt queues a swap a scan found, unless it is queued or being polled.
func (t *Tracker) adopt(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.polling[id] {
		return
	}
	t.enqueueLocked(id, at)
}

func (t *Tracker) enqueueLocked(id string, at time.Time) {
	if t.queued[id] {
		return
	}
	t.queued[id] = true
	heap.Push(&t.queue, due{id: id, at: at})
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run hands due swaps to pollers until Stop.
func (t *Tracker) run() {
	defer close(t.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		var next due
		ready := false
		if t.queue.Len() > 0 {
			next = t.queue[0]
			ready = !next.at.After(t.opts.Now())
			if ready {
				heap.Pop(&t.queue)
				delete(t.queued, next.id)
				t.polling[next.id] = true
			}
		}
		wait := time.Hour
		if !ready && t.queue.Len() > 0 {
			wait = time.Until(t.queue[0].at)
		}
		t.mu.Unlock()
		if ready {
			select {
			case t.sem <- struct{}{}:
			case <-t.stop:
				t.mu.Lock()
				delete(t.polling, next.id)
				t.mu.Unlock()
				return
			}
			t.polls.Add(1)
			go t.poll(next.id)
			continue
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-t.stop:
			return
		case <-t.wake:
		case <-timer.C:
		}
	}
}

// poll observes one swap, records what changed and schedules the next poll.
func (t *Tracker) poll(id string) {
	defer t.polls.Done()
	defer func() { <-t.sem }()
	defer func() {
		t.mu.Lock()
		delete(t.polling, id)
		t.mu.Unlock()
	}()
	if !t.owns(id) {
		// Another node owns it now (the topology changed since it was
		// queued) and adopts it at its scan.
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.opts.PollTimeout)
	defer cancel()
	s, err := t.store.Swap(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			t.opts.Logger.Warn("tracker: read swap", "swap", id, "err", err)
			t.enqueue(id, t.opts.Now().Add(t.opts.Schedule.First))
		}
		return
	}
	if s.Terminal() {
		return
	}
	prev := *s
	src := t.opts.Sources[s.Provider]
	if src == nil {
		src = t.opts.Fallback
	}
	var events []webhook.Event
	now := t.opts.Now()
	if src != nil {
		obs, err := src.SwapStatus(ctx, s)
		if err != nil {
			// A failed poll is retried on the schedule; the swap's status
			// stays what it was.
			t.opts.Logger.Warn("tracker: poll", "swap", id, "provider", s.Provider, "err", err)
		} else {
			for _, ev := range swap.Apply(s, obs, now) {
				events = append(events, swap.Event(ev, s, now))
			}
		}
	}
	t.opts.Schedule.Next(s, now)
	if err := t.save(ctx, &prev, s, events); err != nil {
		if errors.Is(err, store.ErrStale) {
			// Another node moved it meanwhile: this poll's outcome is
			// dropped and the next poll starts from what is stored.
			t.opts.Logger.Info("tracker: swap moved by another node", "swap", id)
		} else {
			t.opts.Logger.Warn("tracker: save swap", "swap", id, "err", err)
		}
		t.enqueue(id, now.Add(t.opts.Schedule.First))
		return
	}
	if len(events) > 0 && t.opts.Published != nil {
		t.opts.Published()
	}
	if !s.NextPoll.IsZero() {
		t.enqueue(id, s.NextPoll)
	}
}

// save writes a poll's outcome: fenced by prev, the swap as read, in a
// cluster.
func (t *Tracker) save(ctx context.Context, prev, s *swap.Swap, events []webhook.Event) error {
	if t.opts.Recorded != nil && s.PartnerID != "" && s.QuoteID != "" {
		if err := t.opts.Recorded(ctx); err != nil {
			return fmt.Errorf("tracker: swap %s: %w", s.ID, err)
		}
	}
	if t.fenced != nil {
		return t.fenced.SaveSwapFrom(ctx, prev, s, events)
	}
	return t.store.SaveSwap(ctx, s, events)
}

// due is one queued poll.
type due struct {
	id string
	at time.Time
}

// dueQueue is a min-heap of polls by due time.
type dueQueue []due

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q dueQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)        { *q = append(*q, x.(due)) }
func (q *dueQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
