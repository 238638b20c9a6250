package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// answerGrace is how long a round trip already sent to the server waits
// for its answer after the caller's context ends.
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
// starting, and one already sent is answered: the write is then either
// not made, or made and acknowledged. Only a server silent for longer
// than the grace leaves the outcome in doubt, as a lost connection does.
const answerGrace = 10 * time.Second

// answerBeforeCancel builds a connection's context handler that lets a
// round trip in flight finish (within answerGrace) when its context ends.
func answerBeforeCancel(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: answerGrace}
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
