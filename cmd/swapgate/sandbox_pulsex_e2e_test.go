package main

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// TestSandboxPulseXPoolsMoveAndComeBackE2E: through the real server's node
// for chain 369 (/rpc/369), the PulseX factory answers the HEX/USDCh pair
// and its reserves; a wallet topped up by the faucet approves the router
// and swaps a large amount of HEX with signed transactions; the receipt
// carries the pair's Sync and Swap, and the router's getAmountsOut over
// eth_call answers from the moved reserves (less USDCh per HEX) until the
// sandbox's arbitrage brings the pool back within 0.1% of what it answered
// before. Before, the router's figures never moved and every swap reverted.
func TestSandboxPulseXPoolsMoveAndComeBackE2E(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SandboxArbitragePeriod = 100 * time.Millisecond
	})
	w := newNodeWallet(t, ts, 369, "sandbox pulsex e2e wallet")
	ctx := w.ctx
	px := pulseroute.DefaultContracts().PulseX()
	hex := common.HexToAddress("0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39")
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	call := func(to common.Address, method string, args ...any) []any {
		t.Helper()
		data, err := pulseroute.ABI().Pack(method, args...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := w.ec.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
		if err != nil {
			t.Fatalf("eth_call %s: %v", method, err)
		}
		vals, err := pulseroute.UnpackOutputs(method, out)
		if err != nil {
			t.Fatal(err)
		}
		return vals
	}
	pair := call(px.Factory, pulseroute.MethodGetPair, usdch, hex)[0].(common.Address)
	if pair == (common.Address{}) {
		t.Fatal("the factory has no HEX/USDCh pair")
	}
	if r := call(pair, pulseroute.MethodGetReserves); r[0].(*big.Int).Sign() <= 0 || r[1].(*big.Int).Sign() <= 0 {
		t.Fatalf("reserves %v", r)
	}
	probe := big.NewInt(1e10) // 100 HEX
	path := []common.Address{hex, usdch}
	amountOut := func() *big.Int {
		t.Helper()
		a := call(px.Router, pulseroute.MethodGetAmountsOut, probe, path)[0].([]*big.Int)
		return a[1]
	}
	before := amountOut()

	amount := big.NewInt(5e16) // 500M HEX, about $2M into a $5M pool
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 369, "address": w.addr.Hex(), "token": hex.Hex(), "amount": amount.String()}).decode(t, &struct{}{})
	price, err := w.ec.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	approve, _ := pulseroute.ABI().Pack(pulseroute.MethodApprove, px.Router, amount)
	tx, err := w.send(&types.LegacyTx{Nonce: 0, GasPrice: price, Gas: 100_000, To: &hex, Data: approve}, nil)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if r := w.mined(tx); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("approve receipt %+v", r)
	}
	swap, err := pulseroute.SwapExactTokensForTokens(amount, big.NewInt(1), path, w.addr, big.NewInt(time.Now().Add(time.Hour).Unix()))
	if err != nil {
		t.Fatal(err)
	}
	gas, err := w.ec.EstimateGas(ctx, ethereum.CallMsg{From: w.addr, To: &px.Router, Data: swap})
	if err != nil {
		t.Fatalf("estimate the swap: %v", err)
	}
	tx, err = w.send(&types.LegacyTx{Nonce: 1, GasPrice: price, Gas: gas, To: &px.Router, Data: swap}, nil)
	if err != nil {
		t.Fatalf("swap: %v", err)
	}
	r := w.mined(tx)
	if r.Status != types.ReceiptStatusSuccessful || !hasLogTopic(r, topic("Sync(uint112,uint112)")) ||
		!hasLogTopic(r, topic("Swap(address,uint256,uint256,uint256,uint256,address)")) {
		t.Fatalf("swap receipt %+v", r)
	}
	// The arbitrage may already be trading, so the pool the swap left is
	// read from its own Sync log (HEX is token0): far from the reference.
	var moved *big.Int
	for _, l := range r.Logs {
		if l.Address == pair && l.Topics[0].Hex() == topic("Sync(uint112,uint112)") && len(l.Data) == 64 {
			moved = pulseroute.AmountOut(probe, new(big.Int).SetBytes(l.Data[:32]), new(big.Int).SetBytes(l.Data[32:]))
		}
	}
	if moved == nil || new(big.Int).Mul(moved, big.NewInt(100)).Cmp(new(big.Int).Mul(before, big.NewInt(90))) > 0 {
		t.Fatalf("after the swap 100 HEX buy %v USDCh, before %s: the pool did not move", moved, before)
	}
	if got := w.tokenBalance(usdch, w.addr); got.Cmp(big.NewInt(1_000_000_000)) <= 0 {
		t.Fatalf("the swap paid %s USDCh in all", got)
	}
	waitUntil(t, "the arbitrage brings HEX/USDCh back within 0.1% of its reference", func() bool {
		diff := new(big.Int).Sub(amountOut(), before)
		return diff.Abs(diff).Mul(diff, big.NewInt(1000)).Cmp(before) <= 0
	})
}
