package postgres

import (
	"context"
	"testing"
	"time"
)

// TestCancelledReadEndsAtOnce holds definite.go to its split: a read whose
// context ends is cancelled on the server and gives its pool connection
// back at once, while a write already sent is answered.
//
// Before the split every statement waited up to answerGrace (10 s) for its
// answer and sent no cancel request, so a cancelled read held its pool
// connection, and its server backend, that long.
func TestCancelledReadEndsAtOnce(t *testing.T) {
	s := openTest(t, Options{MaxConns: 2})
	const marker = "swapgate-cancelled-read"

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	var v int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM pg_sleep(30) WHERE $1::text <> ''`, marker).Scan(&v)
	took := time.Since(start)
	if err == nil {
		t.Fatal("a read cancelled after 200 ms of a 30 s sleep succeeded")
	}
	// Generous against a loaded machine; the old behaviour took answerGrace.
	if took > answerGrace/2 {
		t.Fatalf("the cancelled read returned after %v (%v), want it cancelled at once, not after the write's grace of %v", took, err, answerGrace)
	}
	// The server stopped running it: no backend still sleeps on it.
	deadline := time.Now().Add(answerGrace / 2)
	for {
		var running int
		if err := s.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()`).Scan(&running); err != nil {
			t.Fatalf("read pg_stat_activity: %v", err)
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d server backend(s) still run the cancelled read", running)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Both connections are usable: the cancelled one came back to the pool.
	for i := 0; i < 4; i++ {
		if err := s.pool.QueryRow(context.Background(), `SELECT 1`).Scan(&v); err != nil {
			t.Fatalf("read %d after the cancelled one: %v", i, err)
		}
	}
}

// TestCancelledWriteIsAnswered: a write whose context ends while the server
// runs it is answered (made and acknowledged), not abandoned with its
// outcome unknown.
func TestCancelledWriteIsAnswered(t *testing.T) {
	s := openTest(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO meta (key, value) SELECT 'definite-test', '\x01'::bytea FROM pg_sleep(1)`)
	v, rerr := s.metaValue(context.Background(), "definite-test")
	if rerr != nil {
		t.Fatal(rerr)
	}
	switch {
	case err == nil && v == nil:
		t.Fatal("the write was acknowledged but is not there")
	case err != nil && v != nil:
		t.Fatalf("the write reported failure (%v) but was made", err)
	case err != nil:
		t.Fatalf("the write sent before its context ended was abandoned (%v), want it answered", err)
	}
}

func TestReadOnlyStatements(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		read bool
	}{
		{`SELECT record FROM tickets WHERE id = $1`, true},
		{"\n\t  select count(*) from outbox", true},
		{`SELECT pg_notify($1, $2)`, false},
		{`SELECT pg_advisory_xact_lock(hashtextextended('settle/' || $1, 0))`, false},
		{`SELECT nextval('ledger_seq')`, false},
		{`INSERT INTO meta (key, value) VALUES ($1, $2)`, false},
		{`WITH w AS (INSERT INTO fee_wallets VALUES ($1)) SELECT pg_notify($2, $3) FROM w`, false},
		{`WITH t AS (SELECT 1) SELECT * FROM t`, false}, // not recognised: kept a write's
		{`UPDATE partners SET disabled = true WHERE id = $1`, false},
		{`commit`, false},
		{`sel`, false},
		{``, false},
	} {
		if got := readOnly(tc.sql); got != tc.read {
			t.Errorf("readOnly(%q) = %v, want %v", tc.sql, got, tc.read)
		}
	}
}
