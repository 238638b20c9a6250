// Package ledger is the actor that makes partner earnings durable. Each
// partner quote with a fee sends its row here and waits; the actor gathers
// every row that arrived while the previous commit was syncing and writes
// them in one synced Pebble batch (group commit), so a burst of concurrent
// quotes costs one WAL sync, and no quote is answered before its row is on
// disk.
package ledger

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/persistence"
)

// Appender writes quote records in one durable batch.
type Appender interface {
	RecordQuotes(ctx context.Context, recs []persistence.QuoteRecord) ([]bool, error)
}

var _ Appender = (*persistence.Store)(nil)

// DefaultMaxBatch bounds how many rows one commit carries.
const DefaultMaxBatch = 512

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
	rec   persistence.QuoteRecord
	reply actors.Reply[error]
}

type flush struct{}

type ledgerActor struct {
	store    Appender
	maxBatch int
	pending  []*appendReq
	flushing bool
	st       *stats
}

// Start spawns the ledger actor; opts may set its dispatcher.
func Start(sys *actor.ActorSystem, store Appender, maxBatch int, opts ...actor.PropsOption) (*Ledger, error) {
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	st := &stats{}
	props := actor.PropsFromProducer(func() actor.Actor {
		return &ledgerActor{store: store, maxBatch: maxBatch, st: st}
	}, opts...)
	pid, err := sys.Root.SpawnNamed(props, "ledger")
	if err != nil {
		return nil, fmt.Errorf("ledger: spawn: %w", err)
	}
	return &Ledger{root: sys.Root, pid: pid, st: st}, nil
}

// Record makes a quote's records durable, returning once they are synced
// (or the ledger row was already recorded for that quote id) or ctx ends. A
// ctx that ends first does not withdraw them: they may still be committed.
func (l *Ledger) Record(ctx context.Context, rec persistence.QuoteRecord) error {
	// Encoding here spreads it over the callers' goroutines; the actor
	// only assembles and commits.
	if err := rec.Encode(); err != nil {
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
		if !a.flushing {
			// The flush lands behind every request already queued, so
			// all of them join this commit.
			a.flushing = true
			c.Send(c.Self(), flush{})
		}
	case flush:
		a.commit()
		a.flushing = false
		if len(a.pending) > 0 {
			a.flushing = true
			c.Send(c.Self(), flush{})
		}
	case *actor.Stopping:
		for len(a.pending) > 0 {
			a.commit()
		}
	}
}

func (a *ledgerActor) commit() {
	n := min(len(a.pending), a.maxBatch)
	batch := a.pending[:n]
	recs := make([]persistence.QuoteRecord, n)
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
