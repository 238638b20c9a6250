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
//
// A partner quote without a fee carries no earning: its record is only
// analytics (stats and the transactions list). Its quote does not wait for
// it: the record joins the next commit, and a commit of such records alone
// is not synced. A crash of the process can therefore lose the records
// still queued (at most one commit's worth, a few milliseconds of quotes),
// and a crash of the machine also those committed since the last sync;
// never an earning, which is synced before its quote is answered. Unsynced
// records queued are bounded (Options.MaxUnsynced): past the bound a
// fee-free quote waits for its record like one with a fee, so a store that
// falls behind slows quotes down rather than growing memory.
package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Appender writes quote records in one batch, synced or not.
type Appender interface {
	RecordQuotes(ctx context.Context, recs []store.EncodedQuote, d store.Durability) ([]bool, error)
}

// DefaultMaxBatch bounds how many rows one commit carries.
const DefaultMaxBatch = 512

// DefaultSyncInterval is the commit spacing the service runs with when
// busy: at most that much added latency, in exchange for several times the
// rows per sync under load (see the package comment and the benchmarks).
const DefaultSyncInterval = 2 * time.Millisecond

// DefaultBusyBatch is the commit size from which the ledger counts as busy.
const DefaultBusyBatch = 8

// DefaultMaxUnsynced bounds the fee-free records queued without a waiting
// quote: at 10,000 quotes a second, over a second and a half of them.
const DefaultMaxUnsynced = 16384

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
	// MaxUnsynced bounds the fee-free records queued that no quote waits
	// for; 0 means DefaultMaxUnsynced.
	MaxUnsynced int
	// Logger reports lost fee-free records; nil discards.
	Logger *slog.Logger
}

// Ledger is the handle the quote engine records rows through.
type Ledger struct {
	root        *actor.RootContext
	pid         *actor.PID
	st          *stats
	maxUnsynced int64
}

type stats struct {
	commits atomic.Int64
	rows    atomic.Int64
	// queued counts the fee-free records sent that no commit has taken yet.
	queued atomic.Int64
	// failed counts commits that failed.
	failed atomic.Int64
	// batch is the rows of each commit; synced and unsynced the time each
	// commit took, by its durability. Only the ledger actor observes them.
	batch            *actors.Histogram
	synced, unsynced *actors.Histogram
}

func newStats() *stats {
	return &stats{
		batch:    actors.NewHistogram(1, actors.ExponentialBounds(1, 2, 14)...), // 1 to 8,192 rows
		synced:   actors.NewDurationHistogram(25*time.Microsecond, 2, 14),       // 25 µs to 205 ms
		unsynced: actors.NewDurationHistogram(25*time.Microsecond, 2, 14),
	}
}

// appendReq is one record to commit. A record no quote waits for is
// detached and has no reply.
type appendReq struct {
	rec      store.EncodedQuote
	reply    actors.Reply[error]
	detached bool
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
	// appended and committed count the records taken and committed (or
	// failed); each barrier waits for committed to reach the appended
	// count it arrived at.
	appended, committed uint64
	barriers            []barrier
	st                  *stats
	log                 *slog.Logger
}

// barrier is a Recorded call waiting for the records sent before it.
type barrier struct {
	mark  uint64
	reply actors.Reply[error]
}

// Start spawns the ledger actor; props may set its dispatcher.
func Start(sys *actor.ActorSystem, store Appender, o Options, props ...actor.PropsOption) (*Ledger, error) {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.BusyBatch <= 0 {
		o.BusyBatch = DefaultBusyBatch
	}
	if o.MaxUnsynced <= 0 {
		o.MaxUnsynced = DefaultMaxUnsynced
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	st := newStats()
	p := actor.PropsFromProducer(func() actor.Actor {
		return &ledgerActor{root: sys.Root, store: store, maxBatch: o.MaxBatch, interval: o.SyncInterval, busy: o.BusyBatch, st: st, log: o.Logger}
	}, props...)
	pid, err := sys.Root.SpawnNamed(p, "ledger")
	if err != nil {
		return nil, fmt.Errorf("ledger: spawn: %w", err)
	}
	return &Ledger{root: sys.Root, pid: pid, st: st, maxUnsynced: int64(o.MaxUnsynced)}, nil
}

// Record takes a partner quote's record (its activity, holding its earning
// when it carried a fee). A record with an earning is durable when Record
// returns: it returns once the record is synced (or was already recorded
// for that quote) or ctx ends; a ctx that ends first does not withdraw it,
// it may still be committed. A record without one is queued for the next
// commit and Record returns at once, unless MaxUnsynced records are queued
// already, in which case it waits like one with an earning (see the
// package comment).
func (l *Ledger) Record(ctx context.Context, a *account.Activity) error {
	// Encoding here spreads it over the callers' goroutines; the actor
	// only assembles and commits.
	rec, err := store.EncodeQuote(a)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if a.Earning == nil {
		if l.st.queued.Add(1) <= l.maxUnsynced {
			l.root.Send(l.pid, &appendReq{rec: rec, detached: true})
			return nil
		}
		l.st.queued.Add(-1)
	}
	req := &appendReq{rec: rec, reply: actors.NewReply[error]()}
	l.root.Send(l.pid, req)
	err, werr := req.reply.Wait(ctx)
	if werr != nil {
		return fmt.Errorf("ledger: record quote: %w", werr)
	}
	return err
}

// Recorded returns once every record sent before the call has been
// committed (a failed commit of fee-free records counts: they are lost and
// logged), or ctx ends. A fee-free partner quote is answered before its
// record is in the store; what follows the quote in the store (a tracked
// swap moving the quote's activity line to its status) calls this first,
// so that the line is there to move.
func (l *Ledger) Recorded(ctx context.Context) error {
	b := barrier{reply: actors.NewReply[error]()}
	// The mark is the actor's own count: set by it when the barrier
	// arrives, every record sent before is counted already.
	l.root.Send(l.pid, barrierAt{b})
	err, werr := b.reply.Wait(ctx)
	if werr != nil {
		return fmt.Errorf("ledger: wait for records: %w", werr)
	}
	return err
}

// barrierAt asks the actor to mark a barrier with its appended count.
type barrierAt struct{ barrier }

// Commits and Rows report how many batches and rows were committed, so that
// tests and metrics can see rows sharing syncs.
func (l *Ledger) Commits() int64 { return l.st.commits.Load() }

// Rows reports how many rows were committed.
func (l *Ledger) Rows() int64 { return l.st.rows.Load() }

// Queued reports the fee-free records sent that no commit has taken yet.
func (l *Ledger) Queued() int64 { return l.st.queued.Load() }

// Failed reports the commits that failed.
func (l *Ledger) Failed() int64 { return l.st.failed.Load() }

// Collector exposes the ledger's figures to Prometheus, read at scrape
// time from the atomics the actor updates: the rows of each commit and the
// time it took (what --ledger-sync-interval trades against each other),
// commits, rows, failed commits and the fee-free records queued.
func (l *Ledger) Collector() prometheus.Collector { return ledgerCollector{l.st} }

var (
	batchRowsDesc = prometheus.NewDesc("swapgate_ledger_batch_rows",
		"Partner quote records per ledger commit.", nil, nil)
	commitSecondsDesc = prometheus.NewDesc("swapgate_ledger_commit_seconds",
		"Time a ledger commit took, by durability: synced (a quote waits for it) or unsynced (fee-free records alone).",
		[]string{"durability"}, nil)
	commitsDesc  = prometheus.NewDesc("swapgate_ledger_commits_total", "Ledger commits that succeeded.", nil, nil)
	rowsDesc     = prometheus.NewDesc("swapgate_ledger_rows_total", "Partner quote records committed.", nil, nil)
	failuresDesc = prometheus.NewDesc("swapgate_ledger_commit_failures_total", "Ledger commits that failed.", nil, nil)
	queuedDesc   = prometheus.NewDesc("swapgate_ledger_queued_rows",
		"Fee-free partner quote records queued for a commit that no quote waits for (bounded by --ledger-max-unsynced).", nil, nil)
)

type ledgerCollector struct{ st *stats }

func (c ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{batchRowsDesc, commitSecondsDesc, commitsDesc, rowsDesc, failuresDesc, queuedDesc} {
		ch <- d
	}
}

func (c ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- c.st.batch.Metric(batchRowsDesc)
	ch <- c.st.synced.Metric(commitSecondsDesc, "synced")
	ch <- c.st.unsynced.Metric(commitSecondsDesc, "unsynced")
	ch <- prometheus.MustNewConstMetric(commitsDesc, prometheus.CounterValue, float64(c.st.commits.Load()))
	ch <- prometheus.MustNewConstMetric(rowsDesc, prometheus.CounterValue, float64(c.st.rows.Load()))
	ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.CounterValue, float64(c.st.failed.Load()))
	ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(c.st.queued.Load()))
}

// Stop commits what is queued and stops the actor.
func (l *Ledger) Stop() {
	_ = l.root.StopFuture(l.pid).Wait()
}

func (a *ledgerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *appendReq:
		a.appended++
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
	case barrierAt:
		m.mark = a.appended
		if a.committed >= m.mark {
			m.reply.Send(nil)
			return
		}
		a.barriers = append(a.barriers, m.barrier)
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
	recs := make([]store.EncodedQuote, n)
	// Only a batch that a quote waits for is synced: the others hold
	// analytics alone (see the package comment).
	d, detached := store.Unsynced, int64(0)
	for i, r := range batch {
		recs[i] = r.rec
		if r.detached {
			detached++
		} else {
			d = store.Synced
		}
	}
	began := time.Now()
	_, err := a.store.RecordQuotes(context.Background(), recs, d)
	took := time.Since(began)
	a.st.batch.Observe(int64(n))
	if d == store.Synced {
		a.st.synced.ObserveDuration(took)
	} else {
		a.st.unsynced.ObserveDuration(took)
	}
	a.st.queued.Add(-detached)
	if err == nil {
		a.st.commits.Add(1)
		a.st.rows.Add(int64(n))
	} else {
		a.st.failed.Add(1)
		err = fmt.Errorf("ledger: commit %d rows: %w", n, err)
		if detached > 0 {
			a.log.Error("fee-free quote records lost", slog.Int64("rows", detached), slog.Any("err", err))
		}
	}
	for _, r := range batch {
		if !r.detached {
			r.reply.Send(err)
		}
	}
	a.pending = append(a.pending[:0], a.pending[n:]...)
	a.committed += uint64(n)
	kept := a.barriers[:0]
	for _, b := range a.barriers {
		if a.committed >= b.mark {
			b.reply.Send(nil)
		} else {
			kept = append(kept, b)
		}
	}
	a.barriers = kept
}
