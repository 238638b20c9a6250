package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// srv is the test binary's PostgreSQL server (pgtest.Main).
var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &srv)) }

// fakeClock is a settable clock for CreatedAt and UpdatedAt assertions.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testDB is a fresh database and data directory, opened as often as a
// test needs.
type testDB struct {
	dsn, dir string
}

func newTestDB(t *testing.T) testDB {
	t.Helper()
	return testDB{dsn: srv.DSN(t), dir: t.TempDir()}
}

// open opens a Store on db, closed when the test ends.
func (db testDB) open(t *testing.T, opts Options) *Store {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = db.dir
	}
	s, err := Open(context.Background(), db.dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openTest opens a Store on a fresh database.
func openTest(t *testing.T, opts Options) *Store {
	t.Helper()
	return newTestDB(t).open(t, opts)
}

func digestOf(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func TestOpenTwiceSharesTheDatabase(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	if err := a.CreatePartner(ctx, newPartner("ptn_a", "k")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Partner(ctx, "ptn_a"); err != nil {
		t.Fatalf("the second store does not see the first's partner: %v", err)
	}
}

func TestOpenConcurrentlyMigratesOnce(t *testing.T) {
	db := newTestDB(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), db.dsn, Options{DataDir: db.dir})
			if err == nil {
				_ = s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open: %v", err)
		}
	}
	s := db.open(t, Options{})
	var n, maxV int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_version`).Scan(&n, &maxV); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion || maxV != SchemaVersion {
		t.Fatalf("schema_version has %d rows up to %d, want %d", n, maxV, SchemaVersion)
	}
}

func TestSchemaTooNewIsRefused(t *testing.T) {
	db := newTestDB(t)
	s := db.open(t, Options{})
	if _, err := s.pool.Exec(context.Background(), `INSERT INTO schema_version (version, name) VALUES ($1, 'from the future')`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), db.dsn, Options{DataDir: db.dir})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaTooNew", err)
	}
}

func TestOpenRefusesAnotherSecretKey(t *testing.T) {
	db := newTestDB(t)
	_ = db.open(t, Options{})
	if _, err := os.Stat(filepath.Join(db.dir, local.SecretKeyFile)); err != nil {
		t.Fatalf("Open made no key file: %v", err)
	}
	cases := []struct {
		name string
		dir  func(t *testing.T) string
		want error
	}{
		{"a directory without the key", func(t *testing.T) string { return t.TempDir() }, local.ErrSecretKeyMissing},
		{"a directory with another key", func(t *testing.T) string {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, local.SecretKeyFile), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return d
		}, local.ErrSecretKeyMismatch},
		{"the same directory", func(*testing.T) string { return db.dir }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(context.Background(), db.dsn, Options{DataDir: c.dir(t)})
			if err == nil {
				_ = s.Close()
			}
			if (c.want == nil && err != nil) || !errors.Is(err, c.want) {
				t.Fatalf("Open = %v, want %v", err, c.want)
			}
		})
	}
}

func TestClosedStoreRefuses(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Ping after Close = %v", err)
	}
	if _, err := s.Partner(ctx, "ptn_a"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Partner after Close = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := openTest(t, Options{}).Ping(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with a cancelled context = %v", err)
	}
}

func TestOpenNeedsDataDir(t *testing.T) {
	if _, err := Open(context.Background(), srv.DSN(t), Options{}); err == nil {
		t.Fatal("Open without a data directory succeeded")
	}
}

// TestPoolsDurability: the main pool's commits wait for their WAL flush,
// the unsynced pool's do not, whatever the server's default.
func TestPoolsDurability(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	for _, c := range []struct {
		name string
		q    interface {
			QueryRow(context.Context, string, ...any) pgx.Row
		}
		want string
	}{{"main", s.pool, "on"}, {"unsynced", s.async, "off"}} {
		var got string
		if err := c.q.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s pool: synchronous_commit %q (%v), want %q", c.name, got, err, c.want)
		}
	}
}
