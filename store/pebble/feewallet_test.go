package pebblestore

import (
	"context"
	"errors"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
	"testing"
	"time"
)

func openTestStore(t *testing.T, clock *fakeClock) *Store {
	t.Helper()
	opts := Options{}
	if clock != nil {
		opts.Now = clock.Now
	}
	s, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestFeeWalletLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTestStore(t, clock)
	const pid = "ptn_a"

	if _, ok, err := s.FeeWallet(ctx, pid, "evm"); err != nil || ok {
		t.Fatalf("FeeWallet before put: ok=%v err=%v", ok, err)
	}
	if err := s.DeleteFeeWallet(ctx, pid, "evm"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete missing: %v, want store.ErrNotFound", err)
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
	s := openTestStore(t, nil)
	for _, tc := range []struct{ pid, eco, addr string }{
		{"", "evm", "x"}, {"a/b", "evm", "x"}, {"ptn", "", "x"}, {"ptn", "e/vm", "x"}, {"ptn", "evm", ""},
	} {
		if err := s.PutFeeWallet(ctx, tc.pid, tc.eco, tc.addr); err == nil {
			t.Errorf("PutFeeWallet(%q, %q, %q) accepted", tc.pid, tc.eco, tc.addr)
		}
	}
}

// TestCacheStats: the fee-wallet cache counts a first lookup as a miss and
// the next as a hit; the webhook cache and Pebble's block cache are reported
// too, and only the store's own caches once it is closed.
func TestCacheStats(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x00000000000000000000000000000000000000aa"); err != nil {
		t.Fatal(err)
	}
	s.wallets.m.Clear() // the write filled the cache; start cold
	for range 2 {
		if _, ok, err := s.FeeWallet(ctx, "ptn_a", "evm"); err != nil || !ok {
			t.Fatalf("FeeWallet: %v %v", ok, err)
		}
	}
	got := map[string][2]uint64{}
	s.CacheStats(func(cache string, hits, misses uint64) { got[cache] = [2]uint64{hits, misses} })
	if got["fee_wallet"] != [2]uint64{1, 1} {
		t.Fatalf("fee_wallet hits and misses %v, want 1 and 1", got["fee_wallet"])
	}
	if _, ok := got["pebble_block"]; !ok || len(got) != 3 {
		t.Fatalf("caches reported: %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	clear(got)
	s.CacheStats(func(cache string, hits, misses uint64) { got[cache] = [2]uint64{hits, misses} })
	if _, ok := got["webhook"]; !ok || len(got) != 2 {
		t.Fatalf("caches reported by a closed store: %v", got)
	}
}
