// Package postgres keeps Swapgate's durable state in PostgreSQL, so that
// several processes can share one store. Its methods have the signatures
// and the promises of the Pebble store's (store/pebble): the same
// sentinel errors (store.ErrNotFound, store.ErrExists, …, so
// that callers' errors.Is holds on either backend), the same validation
// of identifiers, the same orderings.
//
// # Durability
//
// Every connection runs with synchronous_commit on, so a write is on the
// server's stable storage when its transaction's COMMIT returns: what the
// Pebble store commits with pebble.Sync is a committed transaction here,
// and records that belong together (a partner and its key digest, a quote
// and its ledger entry) are written in one transaction. A write the Pebble
// store leaves unsynced (store.Unsynced ledger batches, quote
// references, tickets, sweeps) commits on a second pool whose connections
// run with synchronous_commit off: it survives a crash
// of this process, and a crash of the server loses at most the last few
// hundred milliseconds of such writes (wal_writer_delay, three times over
// at worst), never a synced one.
//
// # Secrets
//
// Webhook signing secrets are sealed with the data directory's secrets.key
// exactly as in the Pebble store (local.SecretSealer): the database
// holds their ciphertext alone, bound to each webhook's partner and ID, and
// the check value of the key that sealed them (table meta), so that a node
// opened with another key, or without one, is refused. Every node sharing a
// database needs a copy of the same key file. API keys are stored as their
// SHA-256 digests.
//
// # Schema
//
// The schema is in migrations/, one numbered file per version, embedded in
// the binary and applied at Open under an advisory lock (so that nodes
// starting together migrate once), each in its own transaction with its
// row in schema_version. It only moves forward: a database whose version
// is newer than this build's is refused (store.ErrSchemaTooNew).
// Identifiers compare byte by byte (COLLATE "C") and times are Unix
// nanoseconds, so that orderings and times are the Pebble store's exactly;
// records the Pebble store keeps as JSON are JSON here too (activity
// lines as the Pebble store encodes them, json; trackers' records, outbox
// entries and delivery rows, jsonb).
//
// # Several nodes
//
// What the Pebble store serialises under its process's locks is decided
// here by the database, so that processes sharing it keep the same
// promises: unique keys (a partner's ID and key digest, an idempotency
// key, a quote's ledger row, a tracked swap's hash), row locks where a
// record is read and rewritten (UpdatePartner, settlement), transaction
// advisory locks where a rule spans rows (a partner's webhook limit, one
// settlement run of an ecosystem at a time), and leases on outbox entries
// (outbox.go). The fee wallets' cache (walletcache.go) hears every node's
// changes.
//
// # What differs
//
// The Pebble store's methods that take a *pebble.Batch (PutActivity,
// EnqueueEvent, EnqueueDelivery) and DB have no counterpart: their callers
// write through the methods that commit a whole transition (SaveSwap,
// SaveOnrampOrder, Publish, …). The ticket log's methods (PutTickets,
// Ticket, QuoteByDeposit, SweepTickets) are here too (tickets.go), so
// that processes sharing the store share the issued quotes.
package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// Options tunes Open.
type Options struct {
	// DataDir is the process's data directory, which holds secrets.key
	// (local.SecretKeyFile), the key sealing webhook secrets. It is
	// required: created with the key when missing and the database never
	// had one.
	DataDir string
	// Now returns the current time; nil means time.Now. Tests inject a
	// clock to check CreatedAt and UpdatedAt.
	Now func() time.Time
	// OutboxLease is how long a node holds an outbox entry it claimed
	// before another may take it over (0: DefaultOutboxLease; see
	// outbox.go).
	OutboxLease time.Duration
	// LeaseOnEnqueue makes the store that commits an outbox entry hold its
	// lease from the commit on, for a cluster (see outbox.go): its own
	// delivery pool delivers it, handed over directly or found by its
	// scans, and another node takes it only once the lease lapses. Off,
	// a new entry is anyone's until a scan claims it.
	LeaseOnEnqueue bool
	// MaxConns bounds the pool's connections (0: pgxpool's default, the
	// larger of 4 and the number of CPUs, unless the DSN sets
	// pool_max_conns).
	MaxConns int32
}

// Store is the service's durable state in PostgreSQL. It is safe for
// concurrent use, by several processes too.
type Store struct {
	pool *pgxpool.Pool
	// async is a second, smaller pool whose connections commit without
	// waiting for the WAL flush (synchronous_commit off), for the writes
	// the Pebble store leaves unsynced: each is then one statement.
	async  *pgxpool.Pool
	now    func() time.Time
	seal   *local.SecretSealer
	closed atomic.Bool

	// owner names this store's leases on outbox entries and its fee wallet
	// notifications (random, so that every opened store is a node of its
	// own); lease is the leases' length.
	owner string
	lease time.Duration
	// leaseOnEnqueue is Options.LeaseOnEnqueue.
	leaseOnEnqueue bool

	// wallets caches fee wallets for the quote path (walletcache.go);
	// partnerWatchers hear of partner changes (listen.go). stopListening
	// ends the listener that serves both, which closes listening when done.
	wallets         walletCache
	partnerWatchers watchers
	stopListening   context.CancelFunc
	listening       chan struct{}

	// idemNextSweep is the earliest Unix nanosecond this node's next sweep
	// of expired idempotent answers may start (idempotency.go).
	idemNextSweep atomic.Int64
}

// Open connects to the database at dsn (a postgres:// URL or a keyword/value
// string), migrates its schema to this build's version and loads the data
// directory's sealing key.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.DataDir == "" {
		return nil, errors.New("postgres: open: no data directory for the secrets key")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse connection string: %w", err)
	}
	// Whatever the server's default, acknowledged writes wait for their
	// WAL flush (see Durability in the package comment).
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	cfg.ConnConfig.RuntimeParams["application_name"] = "swapgate"
	// A write sent is answered before a cancelled caller returns, and a
	// cancelled read is stopped on the server at once (definite.go).
	cfg.ConnConfig.BuildContextWatcherHandler = answerBeforeCancel
	cfg.ConnConfig.Tracer = readTracer{}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	acfg := cfg.Copy()
	acfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	acfg.ConnConfig.RuntimeParams["application_name"] = "swapgate-unsynced"
	acfg.MaxConns = max(2, cfg.MaxConns/4)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	async, err := pgxpool.NewWithConfig(ctx, acfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	closePools := func() {
		pool.Close()
		async.Close()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	lease := opts.OutboxLease
	if lease <= 0 {
		lease = DefaultOutboxLease
	}
	var owner [12]byte
	if _, err := rand.Read(owner[:]); err != nil {
		closePools()
		return nil, fmt.Errorf("postgres: lease owner: %w", err)
	}
	s := &Store{pool: pool, async: async, now: now, owner: hex.EncodeToString(owner[:]), lease: lease, leaseOnEnqueue: opts.LeaseOnEnqueue}
	if err := migrate(ctx, pool, len(migrations)); err != nil {
		closePools()
		return nil, err
	}
	if err := s.openSealer(ctx, opts.DataDir); err != nil {
		closePools()
		return nil, err
	}
	lcfg := cfg.ConnConfig.Copy()
	lcfg.RuntimeParams["application_name"] = "swapgate-listen"
	lcfg.BuildContextWatcherHandler = cancelAtOnce
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopListening, s.listening = cancel, make(chan struct{})
	go s.listen(lctx, lcfg, s.listening)
	return s, nil
}

// keySecretCheck is meta's row holding the sealing key's check value.
const keySecretCheck = "secret_key_check"

// openSealer loads the data directory's key and checks it against the
// check value in the database, storing it when the database has none. Two
// nodes first opened together with different keys cannot both win: the
// check is inserted only where absent, then read back and compared.
func (s *Store) openSealer(ctx context.Context, dir string) error {
	stored, err := s.metaValue(ctx, keySecretCheck)
	if err != nil {
		return err
	}
	sl, err := local.LoadSecretSealer(dir, stored)
	if err != nil {
		return err
	}
	if stored == nil {
		if _, err := s.pool.Exec(ctx,
			`INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
			keySecretCheck, sl.Check()); err != nil {
			return fmt.Errorf("postgres: write the secret key's check value: %w", err)
		}
		won, err := s.metaValue(ctx, keySecretCheck)
		if err != nil {
			return err
		}
		if !bytes.Equal(won, sl.Check()) {
			return fmt.Errorf("%w: %s: another node stored the check value of another key first", local.ErrSecretKeyMismatch, dir)
		}
	}
	s.seal = sl
	return nil
}

// metaValue returns meta's value for key, nil when there is none.
func (s *Store) metaValue(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read meta %s: %w", key, err)
	}
	return v, nil
}

// Ping reports whether the store can serve reads, for the /readyz probe.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close closes the pool's connections, waiting for those in use to be
// released. It is safe to call more than once. Methods called after Close
// return store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.stopListening()
		<-s.listening
		s.pool.Close()
		s.async.Close()
	}
	return nil
}

// checkOpen guards public methods.
func (s *Store) checkOpen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// inTx runs fn in a transaction committed when fn returns nil and rolled
// back otherwise, both answered by the server (runTx, definite.go).
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return runTx(ctx, s.pool, fn)
}

// uniqueViolation returns the name of the unique constraint err violated,
// "" when err is not a unique violation.
func uniqueViolation(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName
	}
	return ""
}

// nanos and fromNanos convert times to and from their stored form, Unix
// nanoseconds (see migrations/0001_accounts.sql), in UTC as the Pebble
// store's JSON records decode them.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
