package webhook

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	hook "github.com/swapgate/swapgate/routing/domain/webhook"
)

// outcomeMsg hands an attempt's outcome from a worker to the committer.
type outcomeMsg struct{ out hook.AttemptOutcome }

// commitMsg asks the committer to write what it has gathered.
type commitMsg struct{}

// settledMsg tells the dispatcher that these entries' outcomes are in the
// store (or could not be written, in which case the entries are still in
// the outbox at their old keys and a full scan finds them again). Only now
// may the dispatcher forget them: until then a scan would still find the
// old key and deliver the entry twice. nextRetry is the earliest retry the
// batch scheduled, zero when none: the dispatcher scans when it comes due.
type settledMsg struct {
	entries   []*hook.OutboxEntry
	nextRetry time.Time
}

// committer records attempt outcomes by group commit, like actors/ledger
// does for quotes: every outcome that arrives while a commit is syncing
// joins the next one, so a busy pool costs one WAL sync per batch rather
// than one per attempt, and a worker moves on to its next delivery as soon
// as its attempt is over instead of waiting for the disk.
type committer struct {
	p        *Pool
	pending  []hook.AttemptOutcome
	flushing bool
}

func (c *committer) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *outcomeMsg:
		c.pending = append(c.pending, m.out)
		if !c.flushing {
			// The commit request lands behind every outcome already in
			// the mailbox, so all of them join this batch.
			c.flushing = true
			ctx.Send(ctx.Self(), commitMsg{})
		}
	case commitMsg:
		c.commit(ctx)
		c.flushing = false
		if len(c.pending) > 0 {
			c.flushing = true
			ctx.Send(ctx.Self(), commitMsg{})
		}
	}
}

// commit writes up to Config.CommitBatch outcomes in one synced batch and
// reports them settled. While the pool stops, nothing is written: the
// entries stay in the outbox and the next process delivers them again,
// exactly as after a crash.
func (c *committer) commit(ctx actor.Context) {
	n := min(len(c.pending), c.p.cfg.CommitBatch)
	batch := c.pending[:n]
	settled := &settledMsg{entries: make([]*hook.OutboxEntry, n)}
	if c.p.enter() {
		err := c.p.store.FinishAttempts(c.p.ctx, batch)
		c.p.leave()
		if err == nil {
			c.p.stats.Commits.Add(1)
			for _, o := range batch {
				if !o.RetryAt.IsZero() && (settled.nextRetry.IsZero() || o.RetryAt.Before(settled.nextRetry)) {
					settled.nextRetry = o.RetryAt
				}
			}
		}
		if err != nil && !c.p.isShutdown(err) {
			c.p.stats.CommitFailures.Add(1)
			c.p.cfg.Logger.Error("record delivery outcomes", slog.Int("outcomes", n), slog.Any("err", err))
		}
	}
	for i := range batch {
		settled.entries[i] = batch[i].Entry
	}
	ctx.Send(ctx.Parent(), settled)
	rest := copy(c.pending, c.pending[n:])
	clear(c.pending[rest:])
	c.pending = c.pending[:rest]
}
