// Package ledger is the actor that makes partner quotes durable. Each
// partner quote sends its record (holding its earning when it carried a
// fee) here and waits; the actor gathers every record that arrived while
// the previous commit was syncing and writes them in one synced Pebble
// batch (group commit), so a burst of concurrent quotes costs one WAL sync,
// and no quote is answered before its record is on disk.
//
// A WAL sync costs far more than a row (on the machines measured, about
// 170 µs of CPU against some 20 µs for a row's own share), so when the
// ledger is busy (its last commit carried at least BusyBatch rows) it also
// spaces its commits by a minimum interval and lets rows gather in between.
// A ledger that is not busy commits at once, so a partner sending one quote
// at a time never waits for the interval; a busy one adds at most the
// interval.
package ledger

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/routing/account"
)

// Appender writes quote records in one durable batch.
type Appender interface {
	RecordQuotes(ctx context.Context, recs []persistence.EncodedQuote) ([]bool, error)
}

var _ Appender = (*persistence.Store)(nil)

// DefaultMaxBatch bounds how many rows one commit carries.
const DefaultMaxBatch = 512

// DefaultSyncInterval is the commit spacing the service runs with when
// busy: at most that much added latency, in exchange for several times the
// rows per sync under load (see the package comment and the benchmarks).
const DefaultSyncInterval = 2 * time.Millisecond

// DefaultBusyBatch is the commit size from which the ledger counts as busy.
const DefaultBusyBatch = 8

// Options tunes the ledger. The zero value is ready to use.
type Options struct {
	// MaxBatch bounds the rows of one commit; 0 means DefaultMaxBatch. A
	// full batch is committed without waiting for the interval.
	MaxBatch int
	// SyncInterval is the least time between the starts of two commits
	// while the ledger is busy; 0 commits as soon as the previous commit
	// ends.
	SyncInterval time.Duration
	// BusyBatch is the size of a commit after which the next one waits
	// for SyncInterval; 0 means DefaultBusyBatch.
	BusyBatch int
}

// Ledger is the handle the quote engine records rows through.
type Ledger struct {
	root *actor.RootContext
	pid  *actor.PID
	st   *stats
}

type stats struct {
	commits atomic.Int64
	rows    atomic.Int64
}

type appendReq struct {
	rec   persistence.EncodedQuote
	reply actors.Reply[error]
}

// flush commits the pending rows. gen tells a flush that is still due from
// one a full batch has overtaken.
type flush struct{ gen uint64 }

type ledgerActor struct {
	root     *actor.RootContext
	store    Appender
	maxBatch int
	interval time.Duration
	busy     int
	pending  []*appendReq
	// flushing is set while a flush is scheduled; gen numbers schedulings.
	flushing  bool
	gen       uint64
	lastStart time.Time
	lastBatch int
	st        *stats
}

// Start spawns the ledger actor; props may set its dispatcher.
func Start(sys *actor.ActorSystem, store Appender, o Options, props ...actor.PropsOption) (*Ledger, error) {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.BusyBatch <= 0 {
		o.BusyBatch = DefaultBusyBatch
	}
	st := &stats{}
	p := actor.PropsFromProducer(func() actor.Actor {
		return &ledgerActor{root: sys.Root, store: store, maxBatch: o.MaxBatch, interval: o.SyncInterval, busy: o.BusyBatch, st: st}
	}, props...)
	pid, err := sys.Root.SpawnNamed(p, "ledger")
	if err != nil {
		return nil, fmt.Errorf("ledger: spawn: %w", err)
	}
	return &Ledger{root: sys.Root, pid: pid, st: st}, nil
}

// Record makes a partner quote's record (its activity, holding its earning
// when it carried a fee) durable, returning once it is synced (or was
// already recorded for that quote) or ctx ends. A ctx that ends first does
// not withdraw it: it may still be committed.
func (l *Ledger) Record(ctx context.Context, a *account.Activity) error {
	// Encoding here spreads it over the callers' goroutines; the actor
	// only assembles and commits.
	rec, err := persistence.EncodeQuote(a)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	req := &appendReq{rec: rec, reply: actors.NewReply[error]()}
	l.root.Send(l.pid, req)
	err, werr := req.reply.Wait(ctx)
	if werr != nil {
		return fmt.Errorf("ledger: record quote: %w", werr)
	}
	return err
}

// Commits and Rows report how many batches and rows were committed, so that
// tests and metrics can see rows sharing syncs.
func (l *Ledger) Commits() int64 { return l.st.commits.Load() }

// Rows reports how many rows were committed.
func (l *Ledger) Rows() int64 { return l.st.rows.Load() }

// Stop commits what is queued and stops the actor.
func (l *Ledger) Stop() {
	_ = l.root.StopFuture(l.pid).Wait()
}

func (a *ledgerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *appendReq:
		a.pending = append(a.pending, m)
		switch {
		case !a.flushing:
			a.schedule(c)
		case len(a.pending) == a.maxBatch:
			// A full batch does not wait out the interval.
			a.gen++
			c.Send(c.Self(), flush{gen: a.gen})
		}
	case flush:
		if m.gen != a.gen {
			return // overtaken by a full batch's flush
		}
		a.lastStart = time.Now()
		a.commit()
		a.flushing = false
		if len(a.pending) > 0 {
			a.schedule(c)
		}
	case *actor.Stopping:
		for len(a.pending) > 0 {
			a.commit()
		}
	}
}

// schedule arranges the next flush: at once unless the ledger is busy and
// the interval since the last commit started has not passed, in which case
// when it does. Either way the flush lands behind every request already
// queued, so all of them join it.
func (a *ledgerActor) schedule(c actor.Context) {
	a.flushing = true
	a.gen++
	f := flush{gen: a.gen}
	var wait time.Duration
	if a.lastBatch >= a.busy {
		wait = a.interval - time.Since(a.lastStart)
	}
	if wait <= 0 || len(a.pending) >= a.maxBatch {
		c.Send(c.Self(), f)
		return
	}
	self := c.Self()
	time.AfterFunc(wait, func() { a.root.Send(self, f) })
}

func (a *ledgerActor) commit() {
	n := min(len(a.pending), a.maxBatch)
	a.lastBatch = n
	batch := a.pending[:n]
	recs := make([]persistence.EncodedQuote, n)
	for i, r := range batch {
		recs[i] = r.rec
	}
	_, err := a.store.RecordQuotes(context.Background(), recs)
	if err == nil {
		a.st.commits.Add(1)
		a.st.rows.Add(int64(n))
	} else {
		err = fmt.Errorf("ledger: commit %d rows: %w", n, err)
	}
	for _, r := range batch {
		r.reply.Send(err)
	}
	a.pending = append(a.pending[:0], a.pending[n:]...)
}
