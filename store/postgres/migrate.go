package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/swapgate/swapgate/store"
)

// migrationFiles holds the schema, one file per version: NNNN_name.sql
// moves the database from version NNNN-1 to NNNN. A released file is never
// edited; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded steps in order; migration i has version i+1.
var migrations = mustLoadMigrations()

// SchemaVersion is the schema version this build reads and writes.
var SchemaVersion = len(migrations)

func mustLoadMigrations() []migration {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return ms
}

// loadMigrations reads the steps in fsys's migrations/ and checks that
// their versions run 1, 2, … without a gap or a repeat.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	out := make([]migration, 0, len(names))
	for i, name := range names { // fs.Glob sorts them
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("postgres: migration %s: want version %d", base, i+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	return out, nil
}

// schemaLockKey is the advisory lock taken while migrating (an arbitrary
// constant, "swapgate" in ASCII): nodes starting together wait for the
// first to finish rather than apply a step twice.
const schemaLockKey int64 = 0x7377617067617465

// migrate brings the database to version target, each step in its own
// transaction with its schema_version row, under the advisory lock. A
// database already past SchemaVersion is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, target int) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, schemaLockKey); err != nil {
		return fmt.Errorf("postgres: migrate: take the schema lock: %w", err)
	}
	defer func() {
		// A session lock outlives a failed query: release it on a fresh
		// context so that a cancelled start does not keep it held while
		// the connection goes back to the pool.
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, schemaLockKey)
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("postgres: migrate: schema_version: %w", err)
	}
	cur, err := currentVersion(ctx, conn)
	if err != nil {
		return err
	}
	if cur > len(migrations) {
		return fmt.Errorf("%w: database has %d, build knows %d", store.ErrSchemaTooNew, cur, len(migrations))
	}
	for _, m := range migrations[cur:target] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: migrate to version %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

// currentVersion is the newest version applied, 0 for a new database.
func currentVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: read schema version: %w", err)
	}
	return v, nil
}
