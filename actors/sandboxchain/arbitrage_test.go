package sandboxchain_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// arbitrage is what the tests read of chain 369's pools through a service.
type arbitrage struct {
	t   *testing.T
	arb *pulsesim.Arbitrage
	px  pulseroute.PulseX
}

func newArbitrage(t *testing.T) arbitrage {
	t.Helper()
	sc, err := pulsesim.NewSandboxChain(testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	px := pulseroute.DefaultContracts().PulseX()
	return arbitrage{t: t, arb: pulsesim.NewArbitrage(px, sc.GenesisPools()), px: px}
}

// deviation is the worst pool's distance from its reference, in bps.
func (a arbitrage) deviation(s *sandboxchain.Service) int64 {
	a.t.Helper()
	var d int64
	if err := s.View(context.Background(), 369, func(c *simchain.Chain) { d = a.arb.MaxDeviationBps(c) }); err != nil {
		a.t.Fatal(err)
	}
	return d
}

// reserves lists every genesis pool's packed reserves slot as the chain
// holds it now.
func (a arbitrage) reserves(s *sandboxchain.Service, tokens ...common.Address) [][2]*big.Int {
	a.t.Helper()
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	var out [][2]*big.Int
	if err := s.View(context.Background(), 369, func(c *simchain.Chain) {
		for _, tok := range tokens {
			r0, r1, _ := pulsesim.PairReserves(c, pulsesim.PairFor(a.px.Factory, tok, usdch))
			out = append(out, [2]*big.Int{r0, r1})
		}
	}); err != nil {
		a.t.Fatal(err)
	}
	return out
}

// movePool sells amount of token for USDCh through the PulseX router, as
// any funded account may: a faucet top-up, an approve, a swap.
func (a arbitrage) movePool(s *sandboxchain.Service, trader, token common.Address, amount *big.Int) {
	a.t.Helper()
	ctx := context.Background()
	if _, err := s.Faucet(ctx, 369, trader, token, amount); err != nil {
		a.t.Fatal(err)
	}
	approve, err := simchain.ApproveCalldata(a.px.Router, amount)
	if err != nil {
		a.t.Fatal(err)
	}
	if r, err := s.Send(ctx, 369, trader, simchain.TxRequest{To: token, Data: approve}); err != nil || !r.Succeeded() {
		a.t.Fatalf("approve: %v %+v", err, r)
	}
	swap, err := pulseroute.SwapExactTokensForTokens(amount, big.NewInt(1),
		[]common.Address{token, common.HexToAddress(pulseroute.USDChAddress)}, trader, big.NewInt(1<<40))
	if err != nil {
		a.t.Fatal(err)
	}
	if r, err := s.Send(ctx, 369, trader, simchain.TxRequest{To: a.px.Router, Data: swap}); err != nil || !r.Succeeded() {
		a.t.Fatalf("swap: %v %+v", err, r)
	}
}

func hexToken(t *testing.T) common.Address {
	t.Helper()
	tk, ok := testRegistry(t).TokenBySymbol(369, "HEX")
	if !ok {
		t.Fatal("no HEX on 369")
	}
	return common.HexToAddress(tk.Address)
}

// TestArbitrageRestoresPoolsAndReplays: with the loop held off, a large
// swap leaves a pool far from its reference; one round of the service's
// arbitrage trades it back within the tolerance with recorded sends from
// the arbitrageur, and a restart from the log rebuilds the same reserves,
// with nothing left to arbitrage. Before, the service had no arbitrage and
// a moved pool stayed moved.
func TestArbitrageRestoresPoolsAndReplays(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	clock := &stepClock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	opts := sandboxchain.Options{Now: clock.Now, ArbitragePeriod: -1}
	s, _, err := sandboxchain.Start(ctx, testRegistry(t), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := newArbitrage(t)
	hex := hexToken(t)
	a.movePool(s, alice, hex, big.NewInt(5e16)) // 500M HEX, about $2M into a $5M pool
	if d := a.deviation(s); d < 1000 {
		t.Fatalf("the swap moved the pool %d bps", d)
	}
	ops := store.count(369)
	n, err := s.Arbitrage(ctx)
	if err != nil || n == 0 {
		t.Fatalf("arbitrage: %d transactions, %v", n, err)
	}
	if d := a.deviation(s); d > pulsesim.ArbitrageToleranceBps {
		t.Fatalf("after the arbitrage the pool is %d bps off", d)
	}
	if got := store.count(369) - ops; got != n {
		t.Fatalf("%d operations recorded for %d arbitrage transactions", got, n)
	}
	head, err := s.Head(ctx, 369)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := s.Receipt(ctx, head.Transactions[0]); !ok || r.From != pulsesim.ArbitrageurAddress() {
		t.Fatalf("the last transaction is not the arbitrageur's: %+v", r)
	}
	before := a.reserves(s, hex)
	s.Close()

	s2, stats, err := sandboxchain.Start(ctx, testRegistry(t), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if stats.Diverged != 0 {
		t.Fatalf("replay diverged %d times", stats.Diverged)
	}
	after := a.reserves(s2, hex)
	if before[0][0].Cmp(after[0][0]) != 0 || before[0][1].Cmp(after[0][1]) != 0 {
		t.Fatalf("reserves %v before the restart, %v after", before, after)
	}
	if n, err := s2.Arbitrage(ctx); n != 0 || err != nil {
		t.Fatalf("after the restart the arbitrage still trades: %d, %v", n, err)
	}
}

// TestArbitrageLoopRuns: with a short period the service's own loop brings
// a moved pool back within the tolerance, without being asked.
func TestArbitrageLoopRuns(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	s, _, err := sandboxchain.Start(ctx, testRegistry(t), store, sandboxchain.Options{ArbitragePeriod: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := newArbitrage(t)
	a.movePool(s, alice, hexToken(t), big.NewInt(2e16))
	deadline := time.Now().Add(10 * time.Second)
	for a.deviation(s) > pulsesim.ArbitrageToleranceBps {
		if time.Now().After(deadline) {
			t.Fatalf("the loop left the pool %d bps off", a.deviation(s))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close() // waits for the loop's last round
}
