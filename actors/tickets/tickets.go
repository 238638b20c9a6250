// Package tickets keeps the compact record (quote.Ticket) of every issued
// quote for its lifetime, so that execute and status find a quote by id at
// any quote rate within a fixed memory bound.
//
// A quote's ticket is encoded on the quote path (by the caller's goroutine)
// and handed to the keeper, which commits what has gathered in one append
// to the store without waiting for a sync, while the next tickets gather:
// the quote never waits for disk. Until its batch is committed a ticket is
// served from memory; the bytes held so are bounded, and a quote that would
// exceed the bound waits for the commit in flight rather than a ticket
// being dropped. Committed tickets live in the store's files (the ticket
// log's segments, in the page cache rather than the Go heap) and are swept
// once expired and past a grace period, during which a late execute is
// told the quote expired rather than that it never existed.
package tickets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// Store keeps committed tickets; *local.TicketLog is one. PutTickets
// is called by the keeper's goroutine alone; Ticket and QuoteByDeposit by
// many.
type Store interface {
	PutTickets(ctx context.Context, ts []store.EncodedTicket) error
	Ticket(ctx context.Context, id string) (*quote.Ticket, error)
	SweepTickets(ctx context.Context, before time.Time) error
	QuoteByDeposit(ctx context.Context, address, memo string) (string, error)
}

// Defaults of Options. DefaultGrace is what a store that drops old
// tickets on open keeps past quote.TTL.
const (
	DefaultMaxPendingBytes = 8 << 20
	DefaultGrace           = 15 * time.Second
	DefaultSweepEvery      = 10 * time.Second
	DefaultCommitEvery     = 5 * time.Millisecond
)

// Options tunes a Keeper. The zero value is ready to use.
type Options struct {
	// MaxPendingBytes bounds the encoded tickets held in memory awaiting
	// their commit (default 8 MiB, some 15,000 tickets).
	MaxPendingBytes int
	// Grace is how long past its expiry a ticket is kept (default 15 s):
	// an execute racing the expiry still finds it, and nothing needs it
	// later, since a quote id carries its issue time and a late execute
	// is told its quote expired from the id alone. Kept short because the
	// tickets live for TTL plus Grace: at 20,000 quotes a second (some
	// 1.6 KiB each, calldata included, kept uncompressed by the ticket
	// log, which sweeps by whole 10 s files) that is some 2.7 GB on disk
	// and 30 MB of index in memory.
	Grace time.Duration
	// SweepEvery is how often expired tickets are dropped (default 10 s).
	SweepEvery time.Duration
	// CommitEvery is the least time between the starts of two commits
	// (default 5 ms). Each commit is a write system call per file it
	// touches; committing every ticket as it comes cost the quote path
	// 5-8% of its CPU at 15,000 quotes a second. Tickets are served from
	// memory until committed, so the spacing delays nothing a client sees.
	CommitEvery time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Shared says that the store is shared by the keepers of several
	// nodes (a cluster on one PostgreSQL store): a quote issued on one
	// node is executed on any other, whose keeper never held its ticket.
	// Two rules then close the moment between a quote's answer and its
	// ticket's commit by the issuing node (some CommitEvery and one insert,
	// unsynced):
	//   - A lookup by id that misses a ticket issued less than SharedLag
	//     ago reads the store again, backing off, until the ticket's issue
	//     time is SharedLag past: the id carries its issue second, so only
	//     a quote that could still be in another node's buffer waits, and
	//     never longer than SharedLag. The quote path pays nothing for it.
	//   - A ticket with a deposit target (an intents quote) or a quote
	//     reference (a multi-step quote) is committed before Keep returns,
	//     so before its quote is answered: a deposit names only its target,
	//     and a registered step 1 only its reference, neither of which
	//     carries a time to wait by. These quotes are a small share; their
	//     commit starts at once, without CommitEvery's spacing, and takes
	//     the other pending tickets with it.
	Shared bool
	// SharedLag bounds the wait of a lookup by id in a Shared keeper
	// (default DefaultSharedLag).
	SharedLag time.Duration
}

// DefaultSharedLag is how long a Shared keeper's lookup by id keeps
// looking for a ticket another node issued: far above a commit's usual
// few milliseconds, so that a loaded store still makes it.
const DefaultSharedLag = 2 * time.Second

// Keeper is the ticket keeper. It is safe for concurrent use.
type Keeper struct {
	store Store
	opts  Options

	mu      sync.Mutex
	drained *sync.Cond // signalled after each commit
	pending map[string]store.EncodedTicket
	// deposits indexes the pending tickets of intents quotes by deposit
	// target, as the store does once they are committed.
	deposits map[string]string
	// refs indexes the pending tickets of multi-step quotes by quote
	// reference, as the store's reference index does once they are
	// committed.
	refs   map[[32]byte]string
	queue  []store.EncodedTicket
	bytes  int
	err    error // the last commit's failure, reported to the next Keep
	closed bool

	wake chan struct{}
	// urgent cuts the spacing before the next commit short: a Keep waits
	// for that commit (see Options.Shared).
	urgent chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// Start returns a running keeper over st.
func Start(st Store, o Options) *Keeper {
	if o.MaxPendingBytes <= 0 {
		o.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	if o.CommitEvery <= 0 {
		o.CommitEvery = DefaultCommitEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SharedLag <= 0 {
		o.SharedLag = DefaultSharedLag
	}
	k := &Keeper{store: st, opts: o, pending: map[string]store.EncodedTicket{}, deposits: map[string]string{}, refs: map[[32]byte]string{},
		wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	k.drained = sync.NewCond(&k.mu)
	go k.run()
	return k
}

// ErrClosed is returned by Keep after Close.
var ErrClosed = errors.New("tickets: keeper closed")

// Keep takes an issued quote's ticket. It returns once the ticket is held
// (in memory until its commit), or with the error of a failed commit, in
// which case the caller should not hand the quote out.
func (k *Keeper) Keep(ctx context.Context, is *quote.Issued) error {
	t, err := store.EncodeTicket(is)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	waking := false
	for k.bytes+t.Size() > k.opts.MaxPendingBytes && k.bytes > 0 && !k.closed && k.err == nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The end of ctx wakes the wait, so that a quote whose deadline
		// passes while the buffer is full is refused then, not whenever
		// a commit next drains it.
		if !waking {
			waking = true
			stop := context.AfterFunc(ctx, func() {
				k.mu.Lock()
				k.drained.Broadcast()
				k.mu.Unlock()
			})
			defer stop()
		}
		k.drained.Wait()
	}
	switch {
	case k.closed:
		return ErrClosed
	case k.err != nil:
		err, k.err = k.err, nil
		return fmt.Errorf("tickets: %w", err)
	}
	k.pending[t.ID] = t
	if dk := t.DepositKey(); dk != "" {
		k.deposits[dk] = t.ID
	}
	if ref, ok := t.QuoteRef(); ok {
		k.refs[ref] = t.ID
	}
	if call, ok := t.CallRef(); ok {
		k.refs[call] = t.ID
	}
	k.queue = append(k.queue, t)
	k.bytes += t.Size()
	select {
	case k.wake <- struct{}{}:
	default:
	}
	if k.opts.Shared && (t.DepositKey() != "" || t.IsMultiStep()) {
		select {
		case k.urgent <- struct{}{}:
		default:
		}
		return k.awaitCommit(ctx, t.ID, waking)
	}
	return nil
}

// awaitCommit waits, with k.mu held, until ticket id is committed (a
// Shared keeper's ticket with a deposit target, see Options.Shared): nil
// once it is, the commit's error if it failed (the ticket stays queued and
// is retried with the next batch), ctx's if it ends first. waking says
// whether ctx's end already wakes the wait.
func (k *Keeper) awaitCommit(ctx context.Context, id string, waking bool) error {
	if !waking {
		stop := context.AfterFunc(ctx, func() {
			k.mu.Lock()
			k.drained.Broadcast()
			k.mu.Unlock()
		})
		defer stop()
	}
	for {
		if _, held := k.pending[id]; !held {
			return nil
		}
		if k.err != nil {
			err := k.err
			k.err = nil
			return fmt.Errorf("tickets: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		k.drained.Wait()
	}
}

// Ticket returns the ticket of quote id, from memory while its commit is
// pending and from the store after; a quote never issued, or swept, is
// store.ErrNotFound.
func (k *Keeper) Ticket(ctx context.Context, id string) (*quote.Ticket, error) {
	k.mu.Lock()
	t, ok := k.pending[id]
	k.mu.Unlock()
	if ok {
		return store.DecodeTicket(t)
	}
	tk, err := k.store.Ticket(ctx, id)
	if !k.opts.Shared || !errors.Is(err, store.ErrNotFound) {
		return tk, err
	}
	return k.awaitPeer(ctx, id, err)
}

// awaitPeer looks for a ticket another node of a Shared keeper's cluster
// may not have committed yet (see Options.Shared): the store is read again,
// backing off from 2 ms to 100 ms, until SharedLag has passed since the
// ticket's issue second ended (or now, for an id that claims a later one), or ctx
// ends. miss is the first read's answer, returned when nothing turns up.
func (k *Keeper) awaitPeer(ctx context.Context, id string, miss error) (*quote.Ticket, error) {
	at, ok := quote.IssuedAt(id)
	if !ok {
		return nil, miss
	}
	if now := k.opts.Now(); at.After(now) {
		at = now
	}
	// The id's time is its issue second, up to a second before the issue.
	deadline := at.Add(time.Second + k.opts.SharedLag)
	for wait := 2 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		left := deadline.Sub(k.opts.Now())
		if left <= 0 {
			return nil, miss
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, miss
		case <-t.C:
		}
		tk, err := k.store.Ticket(ctx, id)
		if !errors.Is(err, store.ErrNotFound) {
			return tk, err
		}
	}
}

// PendingQuoteByRef returns the id of the multi-step quote whose
// reference (or step-1 calldata's, store.EncodedTicket.CallRef) is ref
// while its ticket's commit (which writes the store's
// reference index) is pending: a step-1 transaction can be registered
// within moments of its quote, before the index has it.
func (k *Keeper) PendingQuoteByRef(ref [32]byte) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, ok := k.refs[ref]
	return id, ok
}

// QuoteByDeposit returns the id of the intents quote whose deposit target
// is address (and memo), from memory while its ticket's commit is pending
// and from the store after.
func (k *Keeper) QuoteByDeposit(ctx context.Context, address, memo string) (string, error) {
	k.mu.Lock()
	id, ok := k.deposits[store.DepositIndexKey(address, memo)]
	k.mu.Unlock()
	if ok {
		return id, nil
	}
	return k.store.QuoteByDeposit(ctx, address, memo)
}

// run commits gathered tickets and sweeps expired ones until Close.
func (k *Keeper) run() {
	defer close(k.done)
	sweep := time.NewTicker(k.opts.SweepEvery)
	defer sweep.Stop()
	spacing := time.NewTimer(0)
	defer spacing.Stop()
	for {
		select {
		case <-k.wake:
			// Wait out the spacing since the last commit started (or for
			// Close), so that the tickets arriving meanwhile share this
			// commit; wakes that come in the meantime coalesce. A quote
			// waiting for its ticket's commit does not wait for the
			// spacing.
			select {
			case <-spacing.C:
			case <-k.urgent:
				spacing.Stop()
			case <-k.stop:
				k.commit()
				return
			}
			spacing.Reset(k.opts.CommitEvery)
			k.commit()
		case <-sweep.C:
			// A failure (the store closing) is retried at the next tick.
			_ = k.store.SweepTickets(context.Background(), k.opts.Now().Add(-quote.TTL-k.opts.Grace))
		case <-k.stop:
			k.commit()
			return
		}
	}
}

// commit writes every queued ticket in one batch and releases their bytes.
func (k *Keeper) commit() {
	k.mu.Lock()
	batch := k.queue
	k.queue = nil
	k.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := k.store.PutTickets(context.Background(), batch)
	k.mu.Lock()
	defer k.mu.Unlock()
	defer k.drained.Broadcast()
	if err != nil {
		// The tickets stay held and are retried with the next batch; the
		// next Keep reports the failure, so no further quote is handed out
		// on the strength of a store that does not take tickets.
		k.queue = append(batch, k.queue...)
		k.err = err
		return
	}
	for _, t := range batch {
		delete(k.pending, t.ID)
		delete(k.deposits, t.DepositKey())
		if ref, ok := t.QuoteRef(); ok {
			delete(k.refs, ref)
		}
		if call, ok := t.CallRef(); ok {
			delete(k.refs, call)
		}
		k.bytes -= t.Size()
	}
}

// Close commits what is pending and stops the keeper. It is safe to call
// more than once.
func (k *Keeper) Close() {
	k.mu.Lock()
	already := k.closed
	k.closed = true
	k.drained.Broadcast()
	k.mu.Unlock()
	if !already {
		close(k.stop)
	}
	<-k.done
}
