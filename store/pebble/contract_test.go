package pebblestore_test

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/swapgate/swapgate/internal/storecontract"
	"github.com/swapgate/swapgate/store/local"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// The contract suites of every aggregate, on Pebble. A crash is simulated
// with Pebble's crashable in-memory file system: the store's files are
// cloned as a crash would leave them (only what was synced), and the
// store is opened again on the clone.

// crashable opens a fresh store on a crashable file system and returns it
// with a crash that reopens the store on what a crash leaves, and a clean
// reopen.
func crashable(t *testing.T) (s *pebblestore.Store, crash, reopen func(t *testing.T) *pebblestore.Store) {
	t.Helper()
	// The secret key file lives on the operating system's file system in
	// dir; Pebble's files on fs under the same name.
	dir := t.TempDir()
	fs := vfs.NewCrashableMem()
	syncedMkdirAll(t, fs, dir)
	s, err := pebblestore.Open(dir, pebblestore.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	cur := s
	reopen = func(t *testing.T) *pebblestore.Store {
		t.Helper()
		if err := cur.Close(); err != nil {
			t.Fatal(err)
		}
		next, err := pebblestore.Open(dir, pebblestore.Options{FS: fs})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		cur = next
		return next
	}
	t.Cleanup(func() { _ = cur.Close() })
	crash = func(t *testing.T) *pebblestore.Store {
		t.Helper()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		// Closing after the clone writes nothing the clone sees.
		_ = cur.Close()
		fs = crashed
		next, err := pebblestore.Open(dir, pebblestore.Options{FS: fs})
		if err != nil {
			t.Fatalf("open after a crash: %v", err)
		}
		cur = next
		return next
	}
	return s, crash, reopen
}

// TestContract runs every aggregate's suite on Pebble.
func TestContract(t *testing.T) {
	storecontract.RunAll(t, func(t *testing.T) storecontract.Handle[storecontract.Store] {
		s, crash, reopen := crashable(t)
		return storecontract.Handle[storecontract.Store]{Store: s,
			Crash:  func(t *testing.T) storecontract.Store { return crash(t) },
			Reopen: func(t *testing.T) storecontract.Store { return reopen(t) }}
	})
}

// TestContractTickets runs the tickets' suite on the ticket log, which
// writes unsynced by design: it has no crash case, only a clean reopen.
func TestContractTickets(t *testing.T) {
	storecontract.RunTickets(t, func(t *testing.T) storecontract.Handle[storecontract.Tickets] {
		dir := t.TempDir()
		l, err := local.OpenTicketLog(dir, local.TicketLogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur := l
		t.Cleanup(func() { _ = cur.Close() })
		return storecontract.Handle[storecontract.Tickets]{Store: l, Reopen: func(t *testing.T) storecontract.Tickets {
			if err := cur.Close(); err != nil {
				t.Fatal(err)
			}
			next, err := local.OpenTicketLog(dir, local.TicketLogOptions{})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			cur = next
			return next
		}}
	})
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
