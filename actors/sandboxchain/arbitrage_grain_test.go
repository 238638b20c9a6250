package sandboxchain

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// owning is a fake cluster node that owns chain 369's grain, or not.
type owning struct {
	*fakeCluster
	owns bool
}

func (o owning) Owns(string) bool { return o.owns }

// TestChainGrainArbitrage: in a cluster, RunArbitrage on the node that
// owns chain 369's grain brings a pool a swap moved back within the
// tolerance through the grain (each transaction appended to the shared
// log, so that a fresh activation replays to the same reserves), while a
// node that does not own the grain never calls it. Before, a cluster's
// chains had no arbitrage.
func TestChainGrainArbitrage(t *testing.T) {
	ctx := context.Background()
	clock := newSetClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	log := newLogStore()
	grains, err := NewGrains(reg(t), log, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{grains: grains, active: map[string]*Grain{}}
	remote := NewRemote(reg(t), fc, time.Minute, nil)
	px := pulseroute.DefaultContracts().PulseX()
	tk, _ := reg(t).TokenBySymbol(369, "HEX")
	hex, usdch := common.HexToAddress(tk.Address), common.HexToAddress(pulseroute.USDChAddress)
	amount := big.NewInt(3e16)
	trader := common.HexToAddress("0x1111111111111111111111111111111111111111")
	if _, err := remote.Faucet(ctx, 369, trader, hex, amount); err != nil {
		t.Fatal(err)
	}
	approve, _ := simchain.ApproveCalldata(px.Router, amount)
	swap, _ := pulseroute.SwapExactTokensForTokens(amount, big.NewInt(1), []common.Address{hex, usdch}, trader, big.NewInt(1<<40))
	for _, tx := range []simchain.TxRequest{{To: hex, Data: approve}, {To: px.Router, Data: swap}} {
		if r, err := remote.Send(ctx, 369, trader, tx); err != nil || !r.Succeeded() {
			t.Fatalf("%v %+v", err, r)
		}
	}
	arb := grains.arb
	read := func() (dev int64, r0, r1 *big.Int) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		g := fc.active["369"]
		if g == nil {
			var err error
			if g, err = grains.Activate(ctx, "369"); err != nil {
				t.Fatal(err)
			}
			fc.active["369"] = g
		}
		r0, r1, _ = pulsesim.PairReserves(g.chain.Sim(), pulsesim.PairFor(px.Factory, hex, usdch))
		return arb.MaxDeviationBps(g.chain.Sim()), r0, r1
	}
	if d, _, _ := read(); d < 1000 {
		t.Fatalf("the swap moved the pool %d bps", d)
	}

	// A node that does not own the grain leaves it alone.
	calls := fc.calls
	idle, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	RunArbitrage(idle, owning{fc, false}, 5*time.Millisecond, nil)
	cancel()
	if fc.calls != calls {
		t.Fatalf("a node that does not own chain 369 called its grain %d times", fc.calls-calls)
	}

	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); RunArbitrage(run, owning{fc, true}, 5*time.Millisecond, nil) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, _, _ := read()
		if d <= pulsesim.ArbitrageToleranceBps {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grain's arbitrage left the pool %d bps off", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	<-done
	_, r0, r1 := read()
	fc.deactivate()
	if _, a0, a1 := read(); a0.Cmp(r0) != 0 || a1.Cmp(r1) != 0 {
		t.Fatalf("reserves %s/%s, a fresh activation replays %s/%s", r0, r1, a0, a1)
	}
}
