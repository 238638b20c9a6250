package pulsesim

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// pulseX is the sandbox chain 369 with PulseX deployed, and what the tests
// read of it.
type pulseX struct {
	t     *testing.T
	f     fixture
	c     *simchain.Chain
	px    pulseroute.PulseX
	usdch common.Address
}

func newPulseX(t *testing.T) *pulseX {
	t.Helper()
	f := loadFixture(t)
	return &pulseX{t: t, f: f, c: simChain(t, f, nil, 369), px: pulseroute.DefaultContracts().PulseX(),
		usdch: common.HexToAddress(pulseroute.USDChAddress)}
}

func (p *pulseX) tok(sym string) common.Address {
	p.t.Helper()
	tk, ok := p.f.reg.TokenBySymbol(369, sym)
	if !ok {
		p.t.Fatalf("no %s on 369", sym)
	}
	return common.HexToAddress(tk.Address)
}

// call runs an eth_call of the package ABI's method on to and unpacks it.
func (p *pulseX) call(to common.Address, method string, args ...any) ([]any, error) {
	p.t.Helper()
	out, err := p.c.Call(common.Address{}, to, mustPack(p.t, method, args...))
	if err != nil {
		return nil, err
	}
	return pulseroute.UnpackOutputs(method, out)
}

// reserves reads the pair of a and b with getReserves over eth_call, in
// the order a, b.
func (p *pulseX) reserves(a, b common.Address) (rA, rB *big.Int) {
	p.t.Helper()
	v, err := p.call(p.px.Factory, pulseroute.MethodGetPair, a, b)
	if err != nil {
		p.t.Fatal(err)
	}
	pair := v[0].(common.Address)
	r, err := p.call(pair, pulseroute.MethodGetReserves)
	if err != nil {
		p.t.Fatalf("getReserves of %s/%s: %v", a.Hex(), b.Hex(), err)
	}
	t0, err := p.call(pair, pulseroute.MethodToken0)
	if err != nil {
		p.t.Fatal(err)
	}
	if t0[0].(common.Address) == a {
		return r[0].(*big.Int), r[1].(*big.Int)
	}
	return r[1].(*big.Int), r[0].(*big.Int)
}

// amounts calls the router's getAmountsOut or getAmountsIn.
func (p *pulseX) amounts(method string, amount *big.Int, path []common.Address) ([]*big.Int, error) {
	p.t.Helper()
	v, err := p.call(p.px.Router, method, amount, path)
	if err != nil {
		return nil, err
	}
	return v[0].([]*big.Int), nil
}

func (p *pulseX) send(from common.Address, to common.Address, method string, args ...any) *simchain.Receipt {
	p.t.Helper()
	return mustSend(p.t, p.c, from, simchain.TxRequest{To: to, Data: mustPack(p.t, method, args...), GasLimit: 1_000_000})
}

func (p *pulseX) deadline() *big.Int { return new(big.Int).SetUint64(p.c.Head().Time + 600) }

func equalAmounts(a, b []*big.Int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Cmp(b[i]) != 0 {
			return false
		}
	}
	return true
}

// TestPulseXFactoryAndPairs: the factory answers every genesis pool's pair
// in either order (the CREATE2 address PairFor derives) and the zero
// address for two tokens without one; a pair's token0 and token1 are
// sorted, its reserves are SandboxChain's genesis reserves, and its ERC-20
// balances equal them.
func TestPulseXFactoryAndPairs(t *testing.T) {
	p := newPulseX(t)
	pools := p.f.chain(t).GenesisPools()
	if len(pools) < 3 {
		t.Fatalf("%d genesis pools", len(pools))
	}
	for _, g := range pools {
		want := PairFor(p.px.Factory, g.Token, g.USDCh)
		for _, order := range [][2]common.Address{{g.Token, g.USDCh}, {g.USDCh, g.Token}} {
			v, err := p.call(p.px.Factory, pulseroute.MethodGetPair, order[0], order[1])
			if err != nil || v[0].(common.Address) != want {
				t.Fatalf("getPair(%s, %s) = %v, %v; want %s", order[0].Hex(), order[1].Hex(), v, err, want.Hex())
			}
		}
		t0, t1 := SortTokens(g.Token, g.USDCh)
		for method, tok := range map[string]common.Address{pulseroute.MethodToken0: t0, pulseroute.MethodToken1: t1} {
			if v, err := p.call(want, method); err != nil || v[0].(common.Address) != tok {
				t.Fatalf("%s of %s = %v, %v; want %s", method, want.Hex(), v, err, tok.Hex())
			}
		}
		rT, rU := p.reserves(g.Token, g.USDCh)
		if rT.Cmp(g.TokenReserve) != 0 || rU.Cmp(g.USDChReserve) != 0 {
			t.Fatalf("pool %s: reserves %s/%s, want %s/%s", g.Token.Hex(), rT, rU, g.TokenReserve, g.USDChReserve)
		}
		if p.c.Balance(g.Token, want).Cmp(rT) != 0 || p.c.Balance(g.USDCh, want).Cmp(rU) != 0 {
			t.Fatalf("pool %s holds %s/%s, reserves %s/%s", g.Token.Hex(), p.c.Balance(g.Token, want), p.c.Balance(g.USDCh, want), rT, rU)
		}
	}
	v, err := p.call(p.px.Factory, pulseroute.MethodGetPair, p.tok("HEX"), p.tok("PLSX"))
	if err != nil || v[0].(common.Address) != (common.Address{}) {
		t.Fatalf("getPair of two tokens without a pool = %v, %v", v, err)
	}
}

// TestPulseXAmountsFollowReserves: the router's getAmountsOut and
// getAmountsIn over eth_call equal pulseroute.AmountOut and AmountIn
// chained over the pairs' getReserves, for every path of the table, at
// genesis (where they also equal SandboxChain's) and after swaps moved the
// pools. Before the pools were contracts the router answered SandboxChain's
// static figures, which the moved pools no longer match.
func TestPulseXAmountsFollowReserves(t *testing.T) {
	p := newPulseX(t)
	genesis := p.f.chain(t)
	hex, plsx, wpls, usdch := p.tok("HEX"), p.tok("PLSX"), p.tok("WPLS"), p.usdch
	paths := []struct {
		path   []common.Address
		amount *big.Int
	}{
		{[]common.Address{hex, usdch}, big.NewInt(5_000_000_000)},
		{[]common.Address{usdch, plsx}, big.NewInt(250_000_000)},
		{[]common.Address{hex, usdch, plsx}, big.NewInt(7_000_000_000)},
		{[]common.Address{wpls, usdch, hex}, new(big.Int).Mul(big.NewInt(3e6), big.NewInt(1e18))},
	}
	check := func(stage string, atGenesis bool) {
		t.Helper()
		for _, tc := range paths {
			out, err := p.amounts(pulseroute.MethodGetAmountsOut, tc.amount, tc.path)
			if err != nil {
				t.Fatalf("%s: getAmountsOut %v: %v", stage, tc.path, err)
			}
			want := []*big.Int{tc.amount}
			for i := 0; i+1 < len(tc.path); i++ {
				rIn, rOut := p.reserves(tc.path[i], tc.path[i+1])
				want = append(want, pulseroute.AmountOut(want[i], rIn, rOut))
			}
			if !equalAmounts(out, want) {
				t.Fatalf("%s: getAmountsOut %v = %v, want %v", stage, tc.path, out, want)
			}
			last := want[len(want)-1]
			in, err := p.amounts(pulseroute.MethodGetAmountsIn, last, tc.path)
			if err != nil {
				t.Fatalf("%s: getAmountsIn %v: %v", stage, tc.path, err)
			}
			wantIn := make([]*big.Int, len(tc.path))
			wantIn[len(wantIn)-1] = last
			for i := len(tc.path) - 1; i > 0; i-- {
				rIn, rOut := p.reserves(tc.path[i-1], tc.path[i])
				wantIn[i-1] = pulseroute.AmountIn(wantIn[i], rIn, rOut)
			}
			if !equalAmounts(in, wantIn) {
				t.Fatalf("%s: getAmountsIn %v = %v, want %v", stage, tc.path, in, wantIn)
			}
			static, err := genesis.AmountsOut(context.Background(), tc.amount, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if equalAmounts(out, static) != atGenesis {
				t.Fatalf("%s: getAmountsOut %v = %v, SandboxChain's genesis figures %v (equal expected: %v)", stage, tc.path, out, static, atGenesis)
			}
		}
	}
	check("genesis", true)
	trader := common.HexToAddress(sender)
	for _, sw := range []struct {
		token  common.Address
		amount *big.Int
		path   []common.Address
	}{
		{hex, big.NewInt(5e15), []common.Address{hex, usdch}}, // 50M HEX, ≈ $200k
		{usdch, big.NewInt(400_000_000), []common.Address{usdch, plsx}},
		{wpls, new(big.Int).Mul(big.NewInt(5e6), big.NewInt(1e18)), []common.Address{wpls, usdch}},
	} {
		if _, err := p.c.Faucet(trader, sw.token, sw.amount); err != nil {
			t.Fatal(err)
		}
		mustSend(t, p.c, trader, approveTx(t, sw.token, p.px.Router, sw.amount))
		r := p.send(trader, p.px.Router, pulseroute.MethodSwapExactTokensForTokens, sw.amount, big.NewInt(1), sw.path, trader, p.deadline())
		if !r.Succeeded() {
			t.Fatalf("swap %v: %s", sw.path, r.RevertReason)
		}
	}
	check("after swaps", false)
}

// TestPulseXSwapMovesReserves: a two-hop swapExactTokensForTokens pays the
// recipient exactly getAmountsOut's last amount, moves both pairs'
// reserves by the hop amounts (their balances stay equal to them), emits a
// Sync and a Swap per pair, and costs about what a UniswapV2 swap does;
// swapExactTokensForETH pays the native coin. Before, the router reverted
// every swap.
func TestPulseXSwapMovesReserves(t *testing.T) {
	p := newPulseX(t)
	hex, plsx, wpls, usdch := p.tok("HEX"), p.tok("PLSX"), p.tok("WPLS"), p.usdch
	trader, to := common.HexToAddress(sender), common.HexToAddress(recipient)
	path := []common.Address{hex, usdch, plsx}
	amount := big.NewInt(12_000_000_000) // 120 HEX
	quoted, err := p.amounts(pulseroute.MethodGetAmountsOut, amount, path)
	if err != nil {
		t.Fatal(err)
	}
	hexBefore, usdchBefore := p.reserves(hex, usdch)
	usdch2Before, plsxBefore := p.reserves(usdch, plsx)
	toBefore, traderHex := p.c.Balance(plsx, to), p.c.Balance(hex, trader)
	mustSend(t, p.c, trader, approveTx(t, hex, p.px.Router, amount))
	r := p.send(trader, p.px.Router, pulseroute.MethodSwapExactTokensForTokens, amount, quoted[2], path, to, p.deadline())
	if !r.Succeeded() {
		t.Fatalf("swap: %s", r.RevertReason)
	}
	if got := new(big.Int).Sub(p.c.Balance(plsx, to), toBefore); got.Cmp(quoted[2]) != 0 {
		t.Fatalf("recipient got %s PLSX, quoted %s", got, quoted[2])
	}
	if got := new(big.Int).Sub(traderHex, p.c.Balance(hex, trader)); got.Cmp(amount) != 0 {
		t.Fatalf("trader paid %s HEX, want %s", got, amount)
	}
	hexAfter, usdchAfter := p.reserves(hex, usdch)
	usdch2After, plsxAfter := p.reserves(usdch, plsx)
	for _, c := range []struct {
		name          string
		before, after *big.Int
		delta         *big.Int
	}{
		{"HEX reserve", hexBefore, hexAfter, quoted[0]},
		{"USDCh reserve of HEX/USDCh", usdchBefore, usdchAfter, new(big.Int).Neg(quoted[1])},
		{"USDCh reserve of PLSX/USDCh", usdch2Before, usdch2After, quoted[1]},
		{"PLSX reserve", plsxBefore, plsxAfter, new(big.Int).Neg(quoted[2])},
	} {
		if want := new(big.Int).Add(c.before, c.delta); c.after.Cmp(want) != 0 {
			t.Fatalf("%s: %s after, want %s", c.name, c.after, want)
		}
	}
	for _, pr := range [][2]common.Address{{hex, usdch}, {usdch, plsx}} {
		pair := PairFor(p.px.Factory, pr[0], pr[1])
		r0, r1, ts := PairReserves(p.c, pair)
		t0, t1 := SortTokens(pr[0], pr[1])
		if p.c.Balance(t0, pair).Cmp(r0) != 0 || p.c.Balance(t1, pair).Cmp(r1) != 0 || uint64(ts) != p.c.Head().Time {
			t.Fatalf("pair %s: balances %s/%s, reserves %s/%s at %d", pair.Hex(), p.c.Balance(t0, pair), p.c.Balance(t1, pair), r0, r1, ts)
		}
	}
	evs := pulseroute.ABI().Events
	var syncs, swaps int
	for _, l := range r.Logs {
		switch l.Topics[0] {
		case evs["Sync"].ID:
			syncs++
		case evs["Swap"].ID:
			swaps++
			if common.BytesToAddress(l.Topics[1].Bytes()) != p.px.Router {
				t.Fatalf("Swap's sender %s, want the router", l.Topics[1].Hex())
			}
		}
	}
	if syncs != 2 || swaps != 2 {
		t.Fatalf("%d Sync and %d Swap logs, want 2 of each", syncs, swaps)
	}
	t.Logf("two-hop swap: %d gas", r.GasUsed)
	if r.GasUsed < 150_000 || r.GasUsed > 300_000 {
		t.Fatalf("a two-hop swap used %d gas", r.GasUsed)
	}

	// swapExactTokensForETH: USDCh to PLS through the WPLS pair.
	in := big.NewInt(50_000_000)
	ethPath := []common.Address{usdch, wpls}
	q, err := p.amounts(pulseroute.MethodGetAmountsOut, in, ethPath)
	if err != nil {
		t.Fatal(err)
	}
	mustSend(t, p.c, trader, approveTx(t, usdch, p.px.Router, in))
	plsBefore := p.c.Balance(common.Address{}, to)
	r = p.send(trader, p.px.Router, pulseroute.MethodSwapExactTokensForETH, in, q[1], ethPath, to, p.deadline())
	if !r.Succeeded() {
		t.Fatalf("swapExactTokensForETH: %s", r.RevertReason)
	}
	if got := new(big.Int).Sub(p.c.Balance(common.Address{}, to), plsBefore); got.Cmp(q[1]) != 0 {
		t.Fatalf("recipient got %s PLS, quoted %s", got, q[1])
	}
	// UniswapV2's one-hop swap costs about 110,000 gas.
	t.Logf("one-hop swap to the native coin: %d gas", r.GasUsed)
	if r.GasUsed < 80_000 || r.GasUsed > 180_000 {
		t.Fatalf("a one-hop swap used %d gas", r.GasUsed)
	}
}

// TestPulseXSwapReverts: a swap without the router's allowance, below its
// minimum, past its deadline, through a missing pair or along an invalid
// path reverts with the router's (or the token's) reason, and leaves the
// pools and the trader's tokens as they were; the reads revert as
// PulseXLibrary does.
func TestPulseXSwapReverts(t *testing.T) {
	p := newPulseX(t)
	hex, plsx, usdch := p.tok("HEX"), p.tok("PLSX"), p.usdch
	trader := common.HexToAddress(sender)
	amount := big.NewInt(1_000_000_000)
	path := []common.Address{hex, usdch}
	quoted, err := p.amounts(pulseroute.MethodGetAmountsOut, amount, path)
	if err != nil {
		t.Fatal(err)
	}
	past := new(big.Int).SetUint64(p.c.Head().Time - 1)
	above := new(big.Int).Add(quoted[1], big.NewInt(1))
	swap := func(method string, min *big.Int, path []common.Address, deadline *big.Int) func() *simchain.Receipt {
		return func() *simchain.Receipt {
			return p.send(trader, p.px.Router, method, amount, min, path, trader, deadline)
		}
	}
	cases := []struct {
		name, reason string
		approve      bool
		run          func() *simchain.Receipt
	}{
		{"no allowance", "ERC20: insufficient allowance", false, swap(pulseroute.MethodSwapExactTokensForTokens, big.NewInt(1), path, p.deadline())},
		{"below the minimum", "PulseXRouter: INSUFFICIENT_OUTPUT_AMOUNT", true, swap(pulseroute.MethodSwapExactTokensForTokens, above, path, p.deadline())},
		{"past the deadline", "PulseXRouter: EXPIRED", true, swap(pulseroute.MethodSwapExactTokensForTokens, big.NewInt(1), path, past)},
		{"missing pair", "PulseXLibrary: no pair", true, swap(pulseroute.MethodSwapExactTokensForTokens, big.NewInt(1), []common.Address{hex, plsx}, p.deadline())},
		{"one-token path", "PulseXLibrary: INVALID_PATH", true, swap(pulseroute.MethodSwapExactTokensForTokens, big.NewInt(1), []common.Address{hex}, p.deadline())},
		{"ETH path not ending in WPLS", "PulseXRouter: INVALID_PATH", true, swap(pulseroute.MethodSwapExactTokensForETH, big.NewInt(1), path, p.deadline())},
		{"second hop missing", "PulseXLibrary: no pair", true, swap(pulseroute.MethodSwapExactTokensForTokens, big.NewInt(1), []common.Address{hex, usdch, common.HexToAddress("0x1234")}, p.deadline())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.approve {
				mustSend(t, p.c, trader, approveTx(t, hex, p.px.Router, amount))
			} else {
				mustSend(t, p.c, trader, approveTx(t, hex, p.px.Router, new(big.Int)))
			}
			rHex, rU := p.reserves(hex, usdch)
			bal := p.c.Balance(hex, trader)
			r := tc.run()
			if r.Succeeded() || !strings.Contains(r.RevertReason, tc.reason) {
				t.Fatalf("status %d, reason %q; want a revert with %q", r.Status, r.RevertReason, tc.reason)
			}
			if len(r.Logs) != 0 {
				t.Fatalf("a reverted swap kept %d logs", len(r.Logs))
			}
			if a, b := p.reserves(hex, usdch); a.Cmp(rHex) != 0 || b.Cmp(rU) != 0 || p.c.Balance(hex, trader).Cmp(bal) != 0 {
				t.Fatalf("reverted swap moved the pool (%s/%s → %s/%s) or the trader's HEX", rHex, rU, a, b)
			}
		})
	}
	for _, rd := range []struct {
		method string
		amount *big.Int
		path   []common.Address
		reason string
	}{
		{pulseroute.MethodGetAmountsIn, new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil), path, "PulseXLibrary: INSUFFICIENT_LIQUIDITY"},
		{pulseroute.MethodGetAmountsOut, amount, []common.Address{hex}, "PulseXLibrary: INVALID_PATH"},
		{pulseroute.MethodGetAmountsOut, new(big.Int), path, "PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT"},
		{pulseroute.MethodGetAmountsOut, amount, []common.Address{hex, hex}, "PulseXLibrary: IDENTICAL_ADDRESSES"},
		{pulseroute.MethodGetAmountsOut, amount, []common.Address{hex, plsx}, "PulseXLibrary: no pair"},
	} {
		_, err := p.amounts(rd.method, rd.amount, rd.path)
		if !errors.Is(err, simchain.ErrReverted) || !strings.Contains(err.Error(), rd.reason) {
			t.Fatalf("%s %v: %v, want a revert with %q", rd.method, rd.path, err, rd.reason)
		}
	}
}

// TestArbitrageRestoresReference: after a large swap moved a pool several
// percent off its reference price, the arbitrageur's transactions
// (approve once, then swaps through the router) bring it back within
// ArbitrageToleranceBps in a few transactions, and then it has nothing to
// do. Before the arbitrage there was no way back.
func TestArbitrageRestoresReference(t *testing.T) {
	p := newPulseX(t)
	genesis := p.f.chain(t)
	arb := NewArbitrage(p.px, genesis.GenesisPools())
	now := time.Unix(1_800_000_000, 0)
	if _, ok, err := arb.Next(p.c, now); ok || err != nil {
		t.Fatalf("at genesis the arbitrageur trades (%v, %v)", ok, err)
	}
	trader := common.HexToAddress(sender)
	for _, sw := range []struct {
		token  common.Address
		amount *big.Int
		path   []common.Address
	}{
		{p.tok("HEX"), big.NewInt(5e16), []common.Address{p.tok("HEX"), p.usdch}},        // 500M HEX, ≈ $2M, sold
		{p.usdch, big.NewInt(400_000_000_000), []common.Address{p.usdch, p.tok("PLSX")}}, // $400k of PLSX bought
	} {
		if _, err := p.c.Faucet(trader, sw.token, sw.amount); err != nil {
			t.Fatal(err)
		}
		mustSend(t, p.c, trader, approveTx(t, sw.token, p.px.Router, sw.amount))
		if r := p.send(trader, p.px.Router, pulseroute.MethodSwapExactTokensForTokens, sw.amount, big.NewInt(1), sw.path, trader, p.deadline()); !r.Succeeded() {
			t.Fatalf("swap: %s", r.RevertReason)
		}
	}
	if d := arb.MaxDeviationBps(p.c); d < 300 {
		t.Fatalf("the swaps moved the pools only %d bps", d)
	}
	var txs int
	for ; txs < 12; txs++ {
		tx, ok, err := arb.Next(p.c, now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		r := mustSend(t, p.c, ArbitrageurAddress(), tx)
		if !r.Succeeded() {
			t.Fatalf("arbitrage transaction %d: %s", txs, r.RevertReason)
		}
	}
	if d := arb.MaxDeviationBps(p.c); d > ArbitrageToleranceBps {
		t.Fatalf("after %d arbitrage transactions the worst pool is %d bps off", txs, d)
	}
	if txs > 8 {
		t.Fatalf("the arbitrage took %d transactions for two pools", txs)
	}
	t.Logf("two pools restored in %d transactions", txs)
}
