package postgres

import (
	"context"
	"testing"

	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/internal/storecontract"
)

// The contract suites of every aggregate, on PostgreSQL: each case gets a
// database of its own (pgtest), empty.
//
// In TestContract a crash is the process's: the store's pool is dropped without
// a word to the server and a new store opened on the same database and
// data directory, as a node killed and started again would. Every write
// the store acknowledges is a committed transaction with synchronous_commit
// on, so what it promises is decided at COMMIT and survives a crash of the
// process and of the server alike; the server's own crash (its processes
// killed, its write-ahead log replayed) is TestContractServerCrash's, on a
// private server shared by its cases, and TestAcknowledgedWritesSurviveACrash's
// under load.
//
// The tickets' suite does not run here: tickets stay in the data
// directory's ticket log whichever backend holds the rest (the package
// comment's "Not here"), and that log's suite runs in store/local.

// reopenable opens a fresh store on a fresh database and returns it with a
// reopen that drops it and opens another on the same database and
// directory; the last one opened is closed when the test ends.
func reopenable(t *testing.T) (*Store, func(t *testing.T) *Store) {
	t.Helper()
	db := newTestDB(t)
	open := func(t *testing.T) *Store {
		s, err := Open(context.Background(), db.dsn, Options{DataDir: db.dir})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	}
	cur := open(t)
	t.Cleanup(func() { _ = cur.Close() })
	return cur, func(t *testing.T) *Store {
		t.Helper()
		// Close ends the pool's connections; a transaction not committed
		// on one is rolled back by the server, as when a process dies.
		_ = cur.Close()
		cur = open(t)
		return cur
	}
}

// TestContract runs every aggregate's suite on PostgreSQL.
func TestContract(t *testing.T) {
	storecontract.RunAll(t, func(t *testing.T) storecontract.Handle[storecontract.Store] {
		s, reopen := reopenable(t)
		return storecontract.Handle[storecontract.Store]{Store: s,
			Crash:  func(t *testing.T) storecontract.Store { return reopen(t) },
			Reopen: func(t *testing.T) storecontract.Store { return reopen(t) }}
	})
}

// TestContractServerCrash runs the suites again with the server's own
// crash: one private server for the whole run (the cases run one after
// another), each case a database of its own on it, and Crash kills every
// server process without a checkpoint ("immediate" stop), restarts it to
// replay its write-ahead log, and opens the store again. Only what had
// reached the log's files survives: every acknowledged write must.
func TestContractServerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server at every crash")
	}
	server := pgtest.Private(t)
	storecontract.RunAll(t, func(t *testing.T) storecontract.Handle[storecontract.Store] {
		dsn, dir := server.DSN(t), t.TempDir()
		open := func(t *testing.T) *Store {
			s, err := Open(context.Background(), dsn, Options{DataDir: dir})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		}
		cur := open(t)
		t.Cleanup(func() { _ = cur.Close() })
		crash := func(t *testing.T) storecontract.Store {
			t.Helper()
			server.Crash(t)
			_ = cur.Close()
			server.Restart(t)
			cur = open(t)
			return cur
		}
		reopen := func(t *testing.T) storecontract.Store {
			t.Helper()
			_ = cur.Close()
			cur = open(t)
			return cur
		}
		return storecontract.Handle[storecontract.Store]{Store: cur, Crash: crash, Reopen: reopen}
	})
}
