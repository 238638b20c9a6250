package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	pebblestore "github.com/swapgate/swapgate/store/pebble"
	"github.com/swapgate/swapgate/store/postgres"
)

// StoreConfig says which backend OpenStore opens, and how.
type StoreConfig struct {
	// URL is the PostgreSQL connection string (a postgres:// URL, or
	// libpq's keyword=value form; CheckStoreURL); empty means the Pebble
	// store in DataDir.
	URL string
	// DataDir is the process's data directory: the Pebble store when URL
	// is empty, and with either backend the local files (secrets.key,
	// which seals webhook secrets; the admin listener's file; the ticket
	// log).
	DataDir string
	// Logger receives Pebble's background error reports; nil discards
	// them.
	Logger *slog.Logger
	// MemTableSize and CacheSize size the Pebble store (0: its defaults);
	// PostgreSQL sizes its own.
	MemTableSize, CacheSize int
	// OutboxLease is PostgreSQL's outbox lease (0: its default; a cluster
	// shortens it, see clusterOutboxLease), and LeaseOnEnqueue makes the
	// node that commits an entry hold it from the start (a cluster's
	// nodes, see postgres.Options).
	OutboxLease    time.Duration
	LeaseOnEnqueue bool
}

// CheckStoreURL validates a --store value: empty (Pebble), or a
// PostgreSQL connection string as libpq and pgx read it: a postgres:// or
// postgresql:// URL, or keyword=value pairs ("host=/run/pg dbname=swapgate").
// The value itself is never echoed back, since it may carry a password.
func CheckStoreURL(raw string) error {
	if raw == "" {
		return nil
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("must be a postgres:// or postgresql:// URL, or empty for the Pebble store under --data (scheme %q)", u.Scheme)
	}
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") && !strings.Contains(raw, "=") {
		return errors.New("must be a postgres:// URL (or libpq's keyword=value form), or empty for the Pebble store under --data")
	}
	if _, err := pgconn.ParseConfig(raw); err != nil {
		return errors.New("must be a PostgreSQL connection string: it does not parse as one")
	}
	return nil
}

// OpenStore opens the store cfg names, handed out by kind of state
// (Stores): the same function for `serve` and
// for every CLI subcommand that reads or writes the store, so that
// --store (or SWAPGATE_STORE) means one thing everywhere. Pebble in a data
// directory another process holds fails with pebblestore.ErrLocked (the
// CLI then goes through that process's admin listener); a PostgreSQL
// database opens however many other processes have it open.
func OpenStore(ctx context.Context, cfg StoreConfig) (*Stores, error) {
	if err := CheckStoreURL(cfg.URL); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if cfg.URL == "" {
		s, err := pebblestore.Open(cfg.DataDir, pebblestore.Options{Logger: cfg.Logger,
			MemTableSize: cfg.MemTableSize, CacheSize: cfg.CacheSize})
		if err != nil {
			return nil, err
		}
		return pebbleStores(s), nil
	}
	// The local files' directory, made as the Pebble store makes its own,
	// so that a first start on PostgreSQL needs no more setup than one on
	// Pebble.
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	s, err := postgres.Open(ctx, cfg.URL, postgres.Options{DataDir: cfg.DataDir, OutboxLease: cfg.OutboxLease,
		LeaseOnEnqueue: cfg.LeaseOnEnqueue})
	if err != nil {
		return nil, err
	}
	return postgresStores(s), nil
}

// StoreKind names the backend cfg's store setting picks, for the log:
// "postgres" or "pebble" (the URL itself may carry a password).
func StoreKind(storeURL string) string {
	if storeURL != "" {
		return "postgres"
	}
	return "pebble"
}
