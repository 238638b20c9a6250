package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

var srv *Server

func TestMain(m *testing.M) { os.Exit(Main(m, &srv)) }

// TestDSN: each test database is fresh, private to its test, on a server
// whose commits are durable.
func TestDSN(t *testing.T) {
	ctx := context.Background()
	a, b := srv.DSN(t), srv.DSN(t)
	if a == b {
		t.Fatalf("two tests share database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a fresh database has %d tables", n)
	}
	for _, c := range []struct{ setting, want string }{
		{"fsync", "on"},
		{"synchronous_commit", "on"},
	} {
		var got string
		if err := ca.QueryRow(ctx, "SELECT current_setting($1)", c.setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s = %s, want %s", c.setting, got, c.want)
		}
	}
}
