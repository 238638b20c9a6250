package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's fee wallet tests (store/pebble/feewallet_test.go), run
// against PostgreSQL.

func TestFeeWalletLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
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
	s := openTest(t, Options{})
	for _, tc := range []struct{ pid, eco, addr string }{
		{"", "evm", "x"}, {"a/b", "evm", "x"}, {"ptn", "", "x"}, {"ptn", "e/vm", "x"}, {"ptn", "evm", ""},
	} {
		if err := s.PutFeeWallet(ctx, tc.pid, tc.eco, tc.addr); err == nil {
			t.Errorf("PutFeeWallet(%q, %q, %q) accepted", tc.pid, tc.eco, tc.addr)
		}
	}
}

// TestFeeWalletSeenByAnotherNode: two stores on one database (two nodes),
// each reading the wallet before and after every change of the other's:
// the node that changed it reads the change at once, the other as soon as
// the change's notification reaches it, and neither keeps an old address.
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
		if addr, _, err := a.FeeWallet(ctx, "ptn_a", "evm"); err != nil || addr != st.addr {
			t.Fatalf("step %d: the writing node reads %q %v, want %q", i, addr, err, st.addr)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			addr, ok, err := b.FeeWallet(ctx, "ptn_a", "evm")
			if err != nil {
				t.Fatal(err)
			}
			if ok == (st.addr != "") && addr == st.addr {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("step %d: the other node still reads %q, want %q", i, addr, st.addr)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// waitListening waits until s's wallet cache listens (it keeps nothing
// before).
func waitListening(t *testing.T, s *Store) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.wallets.mu.Lock()
		live := s.wallets.live
		s.wallets.mu.Unlock()
		if live {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the wallet cache never listened")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFeeWalletCache: once the store listens, the first read is a miss
// and the next a hit; the store's own change is read at once; without its
// listening connection (terminated by the server) it keeps nothing and
// reads the database, and it caches again once it listens again.
func TestFeeWalletCache(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	waitListening(t, s)
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x00000000000000000000000000000000000000aa"); err != nil {
		t.Fatal(err)
	}
	stats := func() [2]uint64 {
		var got [2]uint64
		n := 0
		s.CacheStats(func(cache string, hits, misses uint64) {
			n++
			if cache == "fee_wallet" {
				got = [2]uint64{hits, misses}
			}
		})
		if n != 1 {
			t.Fatalf("%d caches reported", n)
		}
		return got
	}
	read := func(want string) {
		t.Helper()
		if addr, _, err := s.FeeWallet(ctx, "ptn_a", "evm"); err != nil || addr != want {
			t.Fatalf("FeeWallet = %q %v, want %q", addr, err, want)
		}
	}
	read("0x00000000000000000000000000000000000000aa")
	read("0x00000000000000000000000000000000000000aa")
	if got := stats(); got != [2]uint64{1, 1} {
		t.Fatalf("hits and misses %v, want 1 and 1", got)
	}
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x00000000000000000000000000000000000000bb"); err != nil {
		t.Fatal(err)
	}
	read("0x00000000000000000000000000000000000000bb")

	// The server ends the listening connection: nothing is kept until the
	// store listens again, and a change made meanwhile behind its back (by
	// hand, notified to nobody) is read.
	if _, err := s.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'swapgate-listen' AND datname = current_database()`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		s.wallets.mu.Lock()
		live := s.wallets.live
		s.wallets.mu.Unlock()
		if !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cache still listens after its connection ended")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE fee_wallets SET address = '0x00000000000000000000000000000000000000cc'`); err != nil {
		t.Fatal(err)
	}
	read("0x00000000000000000000000000000000000000cc")
	waitListening(t, s)
	before := stats()
	read("0x00000000000000000000000000000000000000cc")
	read("0x00000000000000000000000000000000000000cc")
	if got := stats(); got[0] != before[0]+1 || got[1] != before[1]+1 {
		t.Fatalf("after listening again: hits and misses %v, were %v", got, before)
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

// TestFeeWalletCacheNeverKeepsAnOldAddress: one node reads a wallet in a
// loop while another changes it again and again; once the changes stop,
// the reader reads the last one, whatever its reads raced.
func TestFeeWalletCacheNeverKeepsAnOldAddress(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	waitListening(t, b)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := b.FeeWallet(ctx, "ptn_a", "evm"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	last := ""
	for i := range 200 {
		last = fmt.Sprintf("0x%040x", i)
		if i%7 == 6 {
			if err := a.DeleteFeeWallet(ctx, "ptn_a", "evm"); err != nil {
				t.Fatal(err)
			}
			last = ""
			continue
		}
		if err := a.PutFeeWallet(ctx, "ptn_a", "evm", last); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // the last notification's way
	close(stop)
	wg.Wait()
	for range 3 {
		if addr, _, err := b.FeeWallet(ctx, "ptn_a", "evm"); err != nil || addr != last {
			t.Fatalf("the reader reads %q %v, want the last change %q", addr, err, last)
		}
	}
}
