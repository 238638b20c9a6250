package main

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// TestMultiStepDepositFallbackWhenThePoolMoved: in sandbox mode step 2 is
// the same runner, its transactions the operator's on the sandbox chains.
// A multi-step quote to PLSX is played (step 1 through the sandbox router,
// to the operator's account, the sandbox's inbound receiver); before the
// registration a whale buys a million USDCh of PLSX on the PulseX pool
// (the arbitrage held off), so that the pool no longer gives the quote's
// minimum for the bridged USDCh: step 2 bridges, checks the minimum again
// and does not swap; the fallback's USDCh transfer pays the user:
// REFUNDED_USDCH, its reason naming the quote's minimum, and the user's
// USDCh up by the amount bridged.
func TestMultiStepDepositFallbackWhenThePoolMoved(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0.01
		c.SandboxArbitragePeriod = -1 // the moved pool stays moved
	})
	m := playStep1(t, ts, "", "swapgate/e2e/multi-step-fallback")
	// The whale's million USDCh into PLSX.
	whaleKey, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/e2e/whale")))
	if err != nil {
		t.Fatal(err)
	}
	whale := crypto.PubkeyToAddress(whaleKey.PublicKey).Hex()
	million := big.NewInt(1_000_000_000_000)
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 369, "address": whale, "token": usdch, "amount": million.String()}).decode(t, &struct{}{})
	router := pulseroute.DefaultContracts().PulseX().Router.Hex()
	ts.approve(t, 369, whale, usdch, router, million)
	data, err := pulseroute.SwapExactTokensForTokens(million, big.NewInt(1), []common.Address{common.HexToAddress(usdch), common.HexToAddress(plsx369)},
		common.HexToAddress(whale), big.NewInt(time.Now().Add(time.Hour).Unix()))
	if err != nil {
		t.Fatal(err)
	}
	if a := ts.broadcast(t, 369, whale, map[string]string{"to": router, "data": "0x" + common.Bytes2Hex(data), "gasLimit": "0x7a120"}); a.Status != "success" {
		t.Fatalf("the whale's swap: %+v", a)
	}

	before := ts.balance(t, 369, m.from, usdch)
	var d stepTwoDeposit
	ts.post("/v1/inbound-receiver/register", m.registration(t, plsx369)).decode(t, &d)
	deadline := time.Now().Add(30 * time.Second)
	for d.Status != "COMPLETED" && d.Status != "REFUNDED_USDCH" && d.Status != "FAILED" {
		if time.Now().After(deadline) {
			t.Fatalf("deposit stuck: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
		ts.get("/v1/inbound-receiver/deposits/"+m.step1.TxHash).decode(t, &d)
	}
	got := new(big.Int).Sub(ts.balance(t, 369, m.from, usdch), before)
	if d.Status != "REFUNDED_USDCH" || !d.Fallback || !strings.HasSuffix(d.steps(), "bridge swap-approve fallback") ||
		!strings.Contains(d.Reason, "under the quote's minimum output "+m.q.Quote.Estimate.ToAmountMin) || got.String() != d.AmountIn || d.AmountOut != d.AmountIn {
		t.Fatalf("deposit %+v (steps %q, quote's minimum %s); the user received %s USDCh", d, d.steps(), m.q.Quote.Estimate.ToAmountMin, got)
	}
}
