package persistence_test

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/persistence/storetest"
)

// The contract suites of every aggregate, on Pebble. A crash is simulated
// with Pebble's crashable in-memory file system: the store's files are
// cloned as a crash would leave them (only what was synced), and the
// store is opened again on the clone.

// crashable opens a fresh store on a crashable file system and returns it
// with a crash that reopens the store on what a crash leaves.
func crashable(t *testing.T) (*persistence.Store, func(t *testing.T) *persistence.Store) {
	t.Helper()
	// The secret key file lives on the operating system's file system in
	// dir; Pebble's files on fs under the same name.
	dir := t.TempDir()
	fs := vfs.NewCrashableMem()
	syncedMkdirAll(t, fs, dir)
	s, err := persistence.Open(dir, persistence.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	cur := s
	t.Cleanup(func() { _ = cur.Close() })
	crash := func(t *testing.T) *persistence.Store {
		t.Helper()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		// Closing after the clone writes nothing the clone sees.
		_ = cur.Close()
		fs = crashed
		next, err := persistence.Open(dir, persistence.Options{FS: fs})
		if err != nil {
			t.Fatalf("open after a crash: %v", err)
		}
		cur = next
		return next
	}
	return s, crash
}

// onPebble makes a suite's factory of Pebble stores seen as S.
func onPebble[S any](as func(*persistence.Store) S) storetest.Factory[S] {
	return func(t *testing.T) storetest.Handle[S] {
		s, crash := crashable(t)
		return storetest.Handle[S]{Store: as(s), Crash: func(t *testing.T) S { return as(crash(t)) }}
	}
}

func TestContractAccounts(t *testing.T) {
	storetest.RunAccounts(t, onPebble(func(s *persistence.Store) storetest.Accounts { return s }))
}

// syncedMkdirAll makes dir and its parents on fs, syncing each parent so
// that a crash clone keeps them.
func syncedMkdirAll(t *testing.T, fs vfs.FS, dir string) {
	t.Helper()
	if parent := filepath.Dir(dir); parent != dir {
		syncedMkdirAll(t, fs, parent)
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := fs.OpenDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func TestContractFeeWallets(t *testing.T) {
	storetest.RunFeeWallets(t, onPebble(func(s *persistence.Store) storetest.FeeWallets { return s }))
}

func TestContractLedger(t *testing.T) {
	storetest.RunLedger(t, onPebble(func(s *persistence.Store) storetest.Ledger { return s }))
}

func TestContractSettlement(t *testing.T) {
	storetest.RunSettlement(t, onPebble(func(s *persistence.Store) storetest.Settlement { return s }))
}
