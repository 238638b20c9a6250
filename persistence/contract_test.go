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
// with a crash that reopens the store on what a crash leaves, and a clean
// reopen.
func crashable(t *testing.T) (s *persistence.Store, crash, reopen func(t *testing.T) *persistence.Store) {
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
	reopen = func(t *testing.T) *persistence.Store {
		t.Helper()
		if err := cur.Close(); err != nil {
			t.Fatal(err)
		}
		next, err := persistence.Open(dir, persistence.Options{FS: fs})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		cur = next
		return next
	}
	t.Cleanup(func() { _ = cur.Close() })
	crash = func(t *testing.T) *persistence.Store {
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
	return s, crash, reopen
}

// onPebble makes a suite's factory of Pebble stores seen as S.
func onPebble[S any](as func(*persistence.Store) S) storetest.Factory[S] {
	return func(t *testing.T) storetest.Handle[S] {
		s, crash, reopen := crashable(t)
		return storetest.Handle[S]{Store: as(s), Crash: func(t *testing.T) S { return as(crash(t)) },
			Reopen: func(t *testing.T) S { return as(reopen(t)) }}
	}
}

func TestContractAccounts(t *testing.T) {
	storetest.RunAccounts(t, onPebble(func(s *persistence.Store) storetest.Accounts { return s }))
}

func TestContractWebhooks(t *testing.T) {
	storetest.RunWebhooks(t, onPebble(func(s *persistence.Store) storetest.Webhooks { return s }))
}

func TestContractSwaps(t *testing.T) {
	storetest.RunSwaps(t, onPebble(func(s *persistence.Store) storetest.Swaps { return s }))
}

func TestContractInboundDeposits(t *testing.T) {
	storetest.RunInboundDeposits(t, onPebble(func(s *persistence.Store) storetest.InboundDeposits { return s }))
}

func TestContractOnrampOrders(t *testing.T) {
	storetest.RunOnrampOrders(t, onPebble(func(s *persistence.Store) storetest.OnrampOrders { return s }))
}

func TestContractIdempotency(t *testing.T) {
	storetest.RunIdempotency(t, onPebble(func(s *persistence.Store) storetest.Idempotency { return s }))
}

func TestContractChainLog(t *testing.T) {
	storetest.RunChainLog(t, onPebble(func(s *persistence.Store) storetest.ChainLog { return s }))
}

// TestContractTickets runs the tickets' suite on the ticket log, which
// writes unsynced by design: it has no crash case, only a clean reopen.
func TestContractTickets(t *testing.T) {
	storetest.RunTickets(t, func(t *testing.T) storetest.Handle[storetest.Tickets] {
		dir := t.TempDir()
		l, err := persistence.OpenTicketLog(dir, persistence.TicketLogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur := l
		t.Cleanup(func() { _ = cur.Close() })
		return storetest.Handle[storetest.Tickets]{Store: l, Reopen: func(t *testing.T) storetest.Tickets {
			if err := cur.Close(); err != nil {
				t.Fatal(err)
			}
			next, err := persistence.OpenTicketLog(dir, persistence.TicketLogOptions{})
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

func TestContractFeeWallets(t *testing.T) {
	storetest.RunFeeWallets(t, onPebble(func(s *persistence.Store) storetest.FeeWallets { return s }))
}

func TestContractLedger(t *testing.T) {
	storetest.RunLedger(t, onPebble(func(s *persistence.Store) storetest.Ledger { return s }))
}

func TestContractSettlement(t *testing.T) {
	storetest.RunSettlement(t, onPebble(func(s *persistence.Store) storetest.Settlement { return s }))
}
