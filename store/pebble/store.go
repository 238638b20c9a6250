package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// SchemaVersion is the on-disk layout version this build reads and writes.
// Version 2 keeps a quote's ledger row inside its activity record; version
// 3 keeps issued quotes' tickets and their deposit index out of Pebble, in
// the ticket log; version 4 keeps webhook secrets sealed (secrets.go);
// version 5 indexes swaps by wallet (walletswap/, wallet.go). An
// older directory is migrated when it is opened (see migrate.go).
const SchemaVersion = 5

var (
	// ErrLocked means another process (or another Store in this process)
	// holds the data directory. The operator CLI uses it to tell "the server
	// is running" apart from a broken directory and to go through the admin
	// listener instead.
	ErrLocked = errors.New("pebblestore: data directory is locked by another process")
)

// Options tunes Open. The zero value is ready to use.
type Options struct {
	// Logger receives Pebble's error reports. Pebble's informational lines
	// (compactions, WAL recycling) are always dropped: they are noise for an
	// operator. Nil discards everything.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. Tests inject a clock
	// to check CreatedAt and UpdatedAt.
	Now func() time.Time
	// MemTableSize is the size of Pebble's memtable (default
	// DefaultMemTableSize). Under quote load the store takes every partner
	// quote's record: Pebble's 4 MiB default flushes several times a second
	// and compacts the small tables again and again (a third of the
	// service's CPU in profiles at 12,000 quotes a second); 32 MiB cuts
	// that by about three quarters for 32 MiB more resident memory, at most
	// twice over while one flushes.
	MemTableSize int
	// CacheSize is Pebble's block cache (default DefaultCacheSize).
	CacheSize int
	// FS is the file system Pebble's files live on; nil is the operating
	// system's. The secret key file (secrets.go) is always on the
	// operating system's, in the same directory. Tests pass vfs.NewCrashableMem() to see what a crash
	// leaves (its CrashClone keeps only what was synced).
	FS vfs.FS

	// uncompressedTables writes tables without block compression, so that
	// this package's tests can grep their raw bytes for what must not be
	// there.
	uncompressedTables bool
}

// Defaults of Options.
const (
	DefaultMemTableSize = 32 << 20
	DefaultCacheSize    = 64 << 20
)

// Store is the service's durable state. It is safe for concurrent use.
type Store struct {
	db   *pebble.DB
	lock *pebble.Lock
	now  func() time.Time

	// partnerMu serialises read-modify-write of partner records so that two
	// concurrent updates cannot lose one another's changes and the key index
	// stays consistent with the records.
	partnerMu sync.Mutex

	// usageMu serialises the read-add-write of usage rows (usage.go).
	usageMu sync.Mutex

	// txMu serialises the transaction manager's compare-and-set writes
	// and nonce raises (txintent.go).
	txMu sync.Mutex

	// seal seals webhook secrets with the data directory's key
	// (secrets.go).
	seal *local.SecretSealer

	// signIn holds the portal's sign-in counters (portal_limits.go).
	signIn signInCounters

	// ledger numbers ledger rows (see AppendLedger).
	ledger ledgerSeq

	// wallets caches fee wallets' addresses, "" for none (see FeeWallet).
	wallets readCache[walletKey, string]

	// hooks caches webhook registrations by ID (see Webhook): every
	// delivery attempt and every test event reads one, and a registration
	// never changes after it is created, only deleted. Bounded by
	// maxCachedWebhooks (see Open).
	hooks readCache[string, *webhook.Registration]

	// idemMu lets remembered answers be written concurrently (read-locked)
	// and swept alone (locked), so a sweep never deletes a record that a
	// write is replacing. idemNextSweep is the earliest Unix nanosecond the
	// next sweep may start; idemSweptTo, guarded by idemMu, is where the
	// last sweep stopped (see idempotency.go).
	idemMu        sync.RWMutex
	idemNextSweep atomic.Int64
	idemSweptTo   []byte

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store in dir. It takes the directory
// lock itself before Pebble does so that a lock held elsewhere is reported as
// ErrLocked rather than as an opaque Pebble error.
func Open(dir string, opts Options) (*Store, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pebblestore: create data directory %q: %w", dir, err)
	}
	lock, err := pebble.LockDirectory(dir, fs)
	if err != nil {
		if isLockConflict(err) {
			return nil, fmt.Errorf("%w: %s: %v", ErrLocked, dir, err)
		}
		return nil, fmt.Errorf("pebblestore: lock data directory %q: %w", dir, err)
	}
	if opts.MemTableSize <= 0 {
		opts.MemTableSize = DefaultMemTableSize
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheSize
	}
	cache := pebble.NewCache(int64(opts.CacheSize))
	defer cache.Unref()
	popts := &pebble.Options{
		FS:     fs,
		Lock:   lock,
		Logger: pebbleLogger{log: opts.Logger},
		// A block cache that holds the hot index and filter blocks keeps
		// point lookups off the file system.
		Cache:        cache,
		MemTableSize: uint64(opts.MemTableSize),
	}
	// Bloom filters let point lookups of absent keys (the ledger's
	// one-row-per-quote check runs on every partner quote) skip tables
	// instead of searching each one.
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		popts.Levels[i].FilterType = pebble.TableFilter
		if opts.uncompressedTables {
			popts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
		}
	}
	db, err := pebble.Open(dir, popts)
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("pebblestore: open pebble in %q: %w", dir, err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Store{db: db, lock: lock, now: now}
	s.hooks.limit = maxCachedWebhooks
	if err := s.openSealer(dir); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.checkSchema(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// isLockConflict reports whether err from pebble.LockDirectory means the lock
// is held. Another process shows up as EAGAIN or EACCES from fcntl; another
// handle in this process is caught by Pebble before the system call and
// reported only as a message, which is matched as a last resort.
func isLockConflict(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

// checkSchema stamps a new directory with SchemaVersion, migrates one
// written by an older release and refuses one written by a newer release,
// which could hold records this build would misread or overwrite.
func (s *Store) checkSchema() error {
	val, err := s.get(keySchema)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.stampSchema(SchemaVersion)
	case err != nil:
		return fmt.Errorf("pebblestore: read schema version: %w", err)
	}
	if len(val) != 4 {
		return fmt.Errorf("pebblestore: schema version record has %d bytes, want 4", len(val))
	}
	v := binary.BigEndian.Uint32(val)
	if v > SchemaVersion {
		return fmt.Errorf("%w: directory has %d, build knows %d", store.ErrSchemaTooNew, v, SchemaVersion)
	}
	return s.migrate(v)
}

// stampSchema records the directory's schema version, synced.
func (s *Store) stampSchema(v uint32) error {
	if err := s.db.Set(keySchema, binary.BigEndian.AppendUint32(nil, v), pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: write schema version %d: %w", v, err)
	}
	return nil
}

// syncWAL returns once every batch a reader could see when it was called
// is on stable storage: Pebble makes a batch visible once applied, before
// its WAL record is synced, and writes the WAL in commit order, so a synced
// record written now covers every batch visible now (a WAL switched away
// from was synced when it was closed).
func (s *Store) syncWAL() error {
	return s.db.LogData(nil, pebble.Sync)
}

// DB exposes the underlying Pebble database to sibling stores in this module
// (ledger, webhooks, ...) that add their own key families as documented in the
// package comment. Callers must not close it.
func (s *Store) DB() *pebble.DB { return s.db }

// Ping reports whether the store can serve reads, for the /readyz probe.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	_, closer, err := s.db.Get(keySchema)
	if err != nil {
		return fmt.Errorf("pebblestore: ping: %w", err)
	}
	return closer.Close()
}

// Close flushes and closes the database and releases the directory lock.
// It is safe to call more than once; later calls return the first result.
// Callers stop their users of the store (HTTP edge, actors, admin listener)
// first: methods called after Close return store.ErrClosed, but one already running
// when Close starts may fail with a Pebble error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		dbErr := s.db.Close()
		lockErr := s.lock.Close()
		if dbErr != nil {
			s.closeErr = fmt.Errorf("pebblestore: close pebble: %w", dbErr)
		} else if lockErr != nil {
			s.closeErr = fmt.Errorf("pebblestore: release directory lock: %w", lockErr)
		}
	})
	return s.closeErr
}

// checkOpen guards public methods: Pebble panics when used after Close.
func (s *Store) checkOpen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}
