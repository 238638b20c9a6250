package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// answerGrace is how long a write already sent to the server waits for
// its answer after the caller's context ends.
//
// pgx's default abandons a round trip the moment its context ends (it
// closes the connection's deadline at once). For a write that leaves the
// outcome unknown: a COMMIT, or a statement committing on its own, the
// server received may still commit after the caller was told it failed,
// and a reader looking at once sees the state before it, then a moment
// later the state after it. The caller's retry, a settlement's conflict
// check, the fee wallets' cache (invalidated by the writer on its way
// out, before such a late commit) all need a write that failed to have
// not happened. So a cancelled context stops the next round trip from
// starting, and a write already sent is answered: it is then either not
// made, or made and acknowledged. Only a server silent for longer than
// the grace leaves the outcome in doubt, as a lost connection does.
// (internal/storecontract's Interrupt fails a store whose write reported
// failure but was made.)
//
// A read has no outcome to be in doubt about, so it gets no grace: its
// context's end sends the server a cancel request, and the connection
// goes back to the pool as soon as the server stops the statement (within
// readCancelGrace, after which the connection is closed). Waiting out a
// cancelled read instead held its pool connection and its server backend
// for the whole grace, so that a burst of abandoned reads (clients gone,
// deadlines passed) could take every connection of the pool.
const answerGrace = 10 * time.Second

// readCancelGrace is how long a cancelled read's connection waits for the
// server to stop the statement before it is closed instead.
const readCancelGrace = 2 * time.Second

// answerBeforeCancel builds a connection's context handler: a statement
// traced as a read (readTracer) is cancelled on the server when its
// context ends; any other round trip is answered (within answerGrace).
func answerBeforeCancel(c *pgconn.PgConn) ctxwatch.Handler {
	return &statementWatcher{
		write: &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: answerGrace},
		read:  &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: readCancelGrace},
	}
}

// statementWatcher picks, when a round trip's context ends, the handling
// its statement deserves. pgx calls HandleUnwatchAfterCancel only after
// HandleCancel has returned, so active needs no lock.
type statementWatcher struct {
	write, read, active ctxwatch.Handler
}

func (w *statementWatcher) HandleCancel(ctx context.Context) {
	w.active = w.write
	if _, ok := ctx.Value(readOnlyKey{}).(bool); ok {
		w.active = w.read
	}
	w.active.HandleCancel(ctx)
}

func (w *statementWatcher) HandleUnwatchAfterCancel() {
	w.active.HandleUnwatchAfterCancel()
	w.active = nil
}

// readOnlyKey marks a statement's context as a read's (readTracer).
type readOnlyKey struct{}

// readTracer marks the context of every statement that only reads, so
// that statementWatcher cancels it at once. A statement only reads when it
// begins with SELECT and calls none of the functions this store uses for
// their effects (notifications, advisory locks, sequences); everything
// else (INSERT, UPDATE, DELETE, WITH … a data-modifying CTE, BEGIN,
// COMMIT, ROLLBACK) keeps the write's answer. A batch is not traced here
// and so is always a write's. Classifying by the statement's text rather
// than at each call site keeps a new read from holding connections and,
// above all, a new write from being cancelled by mistake: what is not
// recognised as a read is treated as a write.
type readTracer struct{}

func (readTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if readOnly(data.SQL) {
		return context.WithValue(ctx, readOnlyKey{}, true)
	}
	return ctx
}

func (readTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// effects are the functions whose call makes a SELECT a write.
var effects = []string{"pg_notify", "pg_advisory", "nextval", "setval", "set_config"}

// readOnly reports whether sql is a SELECT with no effect (readTracer).
func readOnly(sql string) bool {
	sql = strings.TrimSpace(sql)
	if len(sql) < len("select") || !strings.EqualFold(sql[:len("select")], "select") {
		return false
	}
	lower := strings.ToLower(sql)
	for _, f := range effects {
		if strings.Contains(lower, f) {
			return false
		}
	}
	return true
}

// cancelAtOnce is pgx's default handler, kept for the fee wallets'
// listener: it only reads, and its wait for a notification must end as
// soon as the store closes.
func cancelAtOnce(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
}

// runTx runs fn in a transaction on pool, committed when fn returns nil
// and rolled back otherwise, with both ends definite: once fn has
// succeeded the COMMIT is sent and answered whatever ctx does since (the
// write is then acknowledged), and a failed fn's ROLLBACK is sent and
// answered too, rather than the connection dropped. A dropped connection
// leaves its transaction to the server, which ends it only when it next
// notices the socket closed: until then its row locks stay, and another
// node's FOR UPDATE SKIP LOCKED passes over rows the failed write never
// changed (an outbox entry would look delivered for that moment).
func runTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) (err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerGrace)
	defer cancel()
	if err := fn(tx); err != nil {
		_ = tx.Rollback(end)
		return err
	}
	return tx.Commit(end)
}
