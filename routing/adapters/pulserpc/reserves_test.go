package pulserpc

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/internal/standin/evmrpc"
	"github.com/swapgate/swapgate/internal/standin/kit"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// standinReserves is a Reserves over the JSON-RPC node stand-in's chain
// 369, whose router answers getAmountsOut and getAmountsIn from the same
// pools with its own arithmetic, and the router reader the Reserves falls
// back on.
type standinReserves struct {
	node   *evmrpc.Server
	res    *Reserves
	router *Chain
	clock  *fakeClock
	stop   func()
}

func startStandinReserves(t *testing.T, maxAge time.Duration) *standinReserves {
	t.Helper()
	node, srv, err := evmrpc.Start(evmrpc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := context.Background()
	url := evmrpc.URL(srv.URL, quote.PulseChainID)
	contracts := pulseroute.DefaultContracts()
	router, err := Dial(ctx, contracts, map[uint64]string{quote.PulseChainID: url}, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	res, err := DialReserves(ctx, url, contracts, pulseroute.PricedPairs(reg, contracts), router,
		ReservesConfig{MaxAge: maxAge, Poll: 5 * time.Millisecond, Timeout: 5 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := &standinReserves{node: node, res: res, router: router, clock: clock, stop: res.Start(ctx)}
	t.Cleanup(s.stop)
	return s
}

// waitBlock waits until the snapshot is block's.
func (s *standinReserves) waitBlock(t *testing.T, block uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if snap := s.res.snap.Load(); snap != nil && snap.block == block {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot of block %d", block)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func exp10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// TestReservesPriceAsTheRouter holds the amounts priced from the reserves
// snapshot equal to the router's getAmountsOut and getAmountsIn over
// eth_call on the same pools (the stand-in's router, whose arithmetic is
// its own), over one- and two-hop paths from dust to a quarter of a pool,
// and again after a swap moved a pool and the head moved: the reader saw
// the new block and read the reserves again. While the snapshot is
// current, nothing is asked of the router.
func TestReservesPriceAsTheRouter(t *testing.T) {
	s := startStandinReserves(t, time.Minute)
	s.waitBlock(t, evmrpc.DefaultBlockNumber)
	contracts := pulseroute.DefaultContracts()
	usdch, wpls := contracts.USDCh().Token, contracts.PulseX().WPLS
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	hex := common.HexToAddress("0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39")
	paths := [][]common.Address{
		{usdch, wpls}, {wpls, usdch}, {plsx, usdch},
		{plsx, usdch, hex}, {wpls, usdch, plsx},
	}
	amounts := []*big.Int{big.NewInt(1), big.NewInt(999), big.NewInt(1_000_000), exp10(10), exp10(17), new(big.Int).Mul(big.NewInt(25), exp10(22))}
	ctx := context.Background()
	compare := func(t *testing.T) {
		t.Helper()
		before := s.node.Calls("eth_call")
		type answer struct {
			amounts []*big.Int
			err     error
		}
		var local, router []answer
		for _, path := range paths {
			for _, a := range amounts {
				got, err := s.res.AmountsOut(ctx, a, path)
				local = append(local, answer{got, err})
				got, err = s.res.AmountsIn(ctx, a, path)
				local = append(local, answer{got, err})
			}
		}
		if n := s.node.Calls("eth_call") - before; n != 0 {
			t.Errorf("the snapshot's prices asked the node %d eth_calls", n)
		}
		for _, path := range paths {
			for _, a := range amounts {
				got, err := s.router.AmountsOut(ctx, a, path)
				router = append(router, answer{got, err})
				got, err = s.router.AmountsIn(ctx, a, path)
				router = append(router, answer{got, err})
			}
		}
		priced := 0
		for i := range local {
			l, r := local[i], router[i]
			if (l.err != nil) != (r.err != nil) || (l.err != nil && errors.Is(l.err, pulseroute.ErrNoPair) != errors.Is(r.err, pulseroute.ErrNoPair)) {
				t.Errorf("answer %d: from reserves %v, %v; router %v, %v", i, l.amounts, l.err, r.amounts, r.err)
				continue
			}
			if l.err != nil {
				continue
			}
			priced++
			if len(l.amounts) != len(r.amounts) {
				t.Errorf("answer %d: from reserves %v, router %v", i, l.amounts, r.amounts)
				continue
			}
			for j := range l.amounts {
				if l.amounts[j].Cmp(r.amounts[j]) != 0 {
					t.Errorf("answer %d: from reserves %v, router %v", i, l.amounts, r.amounts)
					break
				}
			}
		}
		if priced < len(local)/2 {
			t.Errorf("only %d of %d answers were amounts", priced, len(local))
		}
	}
	compare(t)

	// A large swap into the WPLS pool: USDCh in, WPLS out.
	wplsBefore, err := s.res.AmountsOut(ctx, big.NewInt(1_000_000), []common.Address{usdch, wpls})
	if err != nil {
		t.Fatal(err)
	}
	pools := evmrpc.DefaultPools(mustTable(t), contracts)
	var moved bool
	for _, p := range pools {
		if (p.A == wpls && p.B == usdch) || (p.A == usdch && p.B == wpls) {
			ra, rb := new(big.Int).Mul(p.ReserveA, big.NewInt(2)), new(big.Int).Div(p.ReserveB, big.NewInt(2))
			if err := s.node.SetPool(p.A, p.B, ra, rb); err != nil {
				t.Fatal(err)
			}
			moved = true
		}
	}
	if !moved {
		t.Fatal("no WPLS/USDCh pool in the stand-in")
	}
	if err := s.node.SetBlockNumber(quote.PulseChainID, evmrpc.DefaultBlockNumber+1); err != nil {
		t.Fatal(err)
	}
	s.waitBlock(t, evmrpc.DefaultBlockNumber+1)
	wplsAfter, err := s.res.AmountsOut(ctx, big.NewInt(1_000_000), []common.Address{usdch, wpls})
	if err != nil {
		t.Fatal(err)
	}
	if wplsAfter[1].Cmp(wplsBefore[1]) == 0 {
		t.Errorf("after the pool moved and a new block, 1 USDCh still buys %s WPLS", wplsAfter[1])
	}
	compare(t)
	if n := s.res.Fallbacks(); n != 0 {
		t.Errorf("%d fallbacks with a current snapshot", n)
	}
}

// TestReservesStaleSnapshotFallsBack stops the reader's refreshes and
// moves the clock past --pulse-reserves-max-age: the amounts are the
// router's getAmountsOut and getAmountsIn again, each counted as a
// fallback; and with a max age of 0 nothing is read from the reserves at
// all.
func TestReservesStaleSnapshotFallsBack(t *testing.T) {
	contracts := pulseroute.DefaultContracts()
	path := []common.Address{contracts.USDCh().Token, contracts.PulseX().WPLS}
	ctx := context.Background()

	s := startStandinReserves(t, 30*time.Second)
	s.waitBlock(t, evmrpc.DefaultBlockNumber)
	before := s.node.Calls("eth_call")
	if _, err := s.res.AmountsOut(ctx, big.NewInt(1_000_000), path); err != nil || s.node.Calls("eth_call") != before {
		t.Fatalf("current snapshot: %v, %d eth_calls", err, s.node.Calls("eth_call")-before)
	}
	s.stop()
	s.clock.add(29 * time.Second)
	if _, err := s.res.AmountsOut(ctx, big.NewInt(1_000_000), path); err != nil || s.node.Calls("eth_call") != before {
		t.Fatalf("a snapshot 29 s old (max 30 s): %v, %d eth_calls", err, s.node.Calls("eth_call")-before)
	}
	s.clock.add(2 * time.Second)
	if age, ok := s.res.Age(); !ok || age != 31*time.Second {
		t.Errorf("age %s, %v; want 31s", age, ok)
	}
	out, err := s.res.AmountsOut(ctx, big.NewInt(1_000_000), path)
	if err != nil || len(out) != 2 || out[1].Sign() <= 0 {
		t.Fatalf("stale snapshot: %v, %v", out, err)
	}
	if _, err := s.res.AmountsIn(ctx, big.NewInt(1_000_000), path); err != nil {
		t.Fatalf("stale snapshot backwards: %v", err)
	}
	if n := s.node.Calls("eth_call") - before; n != 2 {
		t.Errorf("a stale snapshot made %d eth_calls, want 2 (getAmountsOut, getAmountsIn)", n)
	}
	if n := s.res.Fallbacks(); n != 2 {
		t.Errorf("%d fallbacks, want 2", n)
	}

	off := startStandinReserves(t, 0)
	time.Sleep(20 * time.Millisecond)
	if _, err := off.res.AmountsOut(ctx, big.NewInt(1_000_000), path); err != nil {
		t.Fatal(err)
	}
	if off.node.Calls("eth_blockNumber") != 0 || off.node.Calls("eth_call") != 1 {
		t.Errorf("max age 0: %d eth_blockNumber, %d eth_call; want 0 and 1", off.node.Calls("eth_blockNumber"), off.node.Calls("eth_call"))
	}
	if _, ok := off.res.Age(); ok {
		t.Error("max age 0 reports a snapshot age")
	}
}

// TestReservesReadsOncePerBlock holds the reader to its reads: getPair
// and token0 once per pair, getReserves once per pair and block, however
// many polls see the same head.
func TestReservesReadsOncePerBlock(t *testing.T) {
	s := startStandinReserves(t, time.Minute)
	s.waitBlock(t, evmrpc.DefaultBlockNumber)
	pairs := len(s.res.wanted)
	deadline := time.Now().Add(10 * time.Second)
	for s.node.Calls("eth_blockNumber") < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.node.SetBlockNumber(quote.PulseChainID, evmrpc.DefaultBlockNumber+1); err != nil {
		t.Fatal(err)
	}
	s.waitBlock(t, evmrpc.DefaultBlockNumber+1)
	s.stop()
	// A pair the stand-in does not pool is answered the zero address by
	// getPair, and nothing more is read of it.
	var pooled int
	for _, p := range s.res.pairs {
		if !p.none {
			pooled++
		}
	}
	if pooled == 0 {
		t.Fatal("no pair found")
	}
	if got := s.node.Calls("eth_call"); got != pairs+pooled+2*pooled {
		t.Errorf("%d eth_calls for %d pairs (%d pooled) over two blocks; want getPair %d + token0 %d + getReserves 2×%d",
			got, pairs, pooled, pairs, pooled, pooled)
	}
}

func mustTable(t *testing.T) *kit.Table {
	t.Helper()
	tab, err := kit.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	return tab
}
