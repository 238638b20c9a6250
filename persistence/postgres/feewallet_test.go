package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// The Pebble store's fee wallet tests (persistence/feewallet_test.go), run
// against PostgreSQL.

func TestFeeWalletLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	const pid = "ptn_a"

	if _, ok, err := s.FeeWallet(ctx, pid, "evm"); err != nil || ok {
		t.Fatalf("FeeWallet before put: ok=%v err=%v", ok, err)
	}
	if err := s.DeleteFeeWallet(ctx, pid, "evm"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("delete missing: %v, want persistence.ErrNotFound", err)
	}
	start := clock.Now()
	created := map[string]time.Time{}
	steps := []struct {
		eco, addr string
	}{
		{"solana", "So11111111111111111111111111111111111111112"},
		{"evm", "0x1111111111111111111111111111111111111111"},
		{"evm", "0x2222222222222222222222222222222222222222"},
	}
	for _, st := range steps {
		if err := s.PutFeeWallet(ctx, pid, st.eco, st.addr); err != nil {
			t.Fatalf("PutFeeWallet(%s): %v", st.eco, err)
		}
		w := walletOf(t, s, pid, st.eco)
		if _, ok := created[st.eco]; !ok {
			created[st.eco] = clock.Now()
		}
		if !w.CreatedAt.Equal(created[st.eco]) || !w.UpdatedAt.Equal(clock.Now()) {
			t.Fatalf("%s %s: createdAt %v updatedAt %v, want %v and %v", st.eco, st.addr, w.CreatedAt, w.UpdatedAt, created[st.eco], clock.Now())
		}
		clock.Advance(time.Minute)
	}
	addr, ok, err := s.FeeWallet(ctx, pid, "evm")
	if err != nil || !ok || addr != "0x2222222222222222222222222222222222222222" {
		t.Fatalf("FeeWallet(evm) = %q %v %v, want the replacement", addr, ok, err)
	}
	list, err := s.FeeWallets(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Ecosystem != "evm" || list[1].Ecosystem != "solana" {
		t.Fatalf("FeeWallets order = %+v, want evm then solana", list)
	}
	if !list[0].CreatedAt.Equal(start.Add(time.Minute)) || !list[0].UpdatedAt.Equal(start.Add(2*time.Minute)) {
		t.Fatalf("replaced wallet times %v %v", list[0].CreatedAt, list[0].UpdatedAt)
	}
	// Another partner whose id starts the same sees nothing.
	if other, err := s.FeeWallets(ctx, "ptn_"); err != nil || len(other) != 0 {
		t.Fatalf("prefix partner sees %+v %v", other, err)
	}
	if err := s.DeleteFeeWallet(ctx, pid, "evm"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.FeeWallet(ctx, pid, "evm"); ok {
		t.Fatal("wallet still there after delete")
	}
	// Registering again after a delete is a new wallet with a new CreatedAt.
	clock.Advance(time.Minute)
	if err := s.PutFeeWallet(ctx, pid, "evm", "0x3333333333333333333333333333333333333333"); err != nil {
		t.Fatal(err)
	}
	if w := walletOf(t, s, pid, "evm"); !w.CreatedAt.Equal(clock.Now()) {
		t.Fatalf("re-register kept the old CreatedAt: %+v", w)
	}
}

// walletOf returns the listed wallet of partner in eco.
func walletOf(t *testing.T, s *Store, partner, eco string) account.FeeWallet {
	t.Helper()
	list, err := s.FeeWallets(context.Background(), partner)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list {
		if w.Ecosystem == eco {
			return w
		}
	}
	t.Fatalf("no %s wallet for %s in %+v", eco, partner, list)
	return account.FeeWallet{}
}

func TestFeeWalletRefusesBadKeys(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	for _, tc := range []struct{ pid, eco, addr string }{
		{"", "evm", "x"}, {"a/b", "evm", "x"}, {"ptn", "", "x"}, {"ptn", "e/vm", "x"}, {"ptn", "evm", ""},
	} {
		if err := s.PutFeeWallet(ctx, tc.pid, tc.eco, tc.addr); err == nil {
			t.Errorf("PutFeeWallet(%q, %q, %q) accepted", tc.pid, tc.eco, tc.addr)
		}
	}
}

// TestFeeWalletSeenByAnotherNode: two stores on one database (two nodes)
// see each other's wallet changes at once; neither caches a stale one.
func TestFeeWalletSeenByAnotherNode(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	steps := []struct {
		put, del bool
		addr     string
	}{
		{put: true, addr: "0x1111111111111111111111111111111111111111"},
		{put: true, addr: "0x2222222222222222222222222222222222222222"},
		{del: true},
		{put: true, addr: "0x3333333333333333333333333333333333333333"},
	}
	for i, st := range steps {
		switch {
		case st.put:
			if err := a.PutFeeWallet(ctx, "ptn_a", "evm", st.addr); err != nil {
				t.Fatal(err)
			}
		case st.del:
			if err := a.DeleteFeeWallet(ctx, "ptn_a", "evm"); err != nil {
				t.Fatal(err)
			}
		}
		addr, ok, err := b.FeeWallet(ctx, "ptn_a", "evm")
		if err != nil || ok != (st.addr != "") || addr != st.addr {
			t.Fatalf("step %d: the other node reads %q %v %v, want %q", i, addr, ok, err, st.addr)
		}
	}
}

// TestPutFeeWalletConcurrent: concurrent registrations of one wallet leave
// one row, with the CreatedAt of the first.
func TestPutFeeWalletConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x"+string(rune('a'+i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, err := s.FeeWallets(ctx, "ptn_a")
	if err != nil || len(list) != 1 {
		t.Fatalf("FeeWallets = %+v, %v", list, err)
	}
}
