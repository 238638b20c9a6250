package main

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// TestLiveQuotePricedFromPoolReserves runs two live-mode servers on the
// same stand-ins (LI.FI and a JSON-RPC node of chains 369 and 42161): one
// pricing the chain-369 leg from its snapshot of the PulseX reserves (the
// default --pulse-reserves-max-age), one with --pulse-reserves-max-age 0
// pricing it with the router's getAmountsOut as before. Once the snapshot
// is read, a multi-step quote (Shape C) makes one aggregator call and no
// getAmountsOut call, a direct inbound quote through PulseX (Shape B) and
// a swap within 369 none either; and every quote's amounts are the ones
// the router prices, to the unit. Before local pricing, each of these
// quotes waited for a getAmountsOut.
func TestLiveQuotePricedFromPoolReserves(t *testing.T) {
	up := startLiveStandins(t)
	local := startServer(t, up.configure)
	router := startServer(t, func(c *app.Config) {
		up.configure(c)
		c.Quote.PulseReservesMaxAge = 0
	})
	// A swap within 369 is quoted only without a partner fee.
	_, localKey := local.createPartner("ReservesCo", "--swap-fee-bps", "0")
	_, routerKey := router.createPartner("RouterCo", "--swap-fee-bps", "0")
	const age = `swapgate_pulse_reserves_age_seconds{chain="369"}`
	waitUntil(t, "the reserves snapshot is read", func() bool { return local.metric(age) < 60 })
	if !math.IsInf(router.metric(age), 1) {
		t.Errorf("with --pulse-reserves-max-age 0: %s = %v, want +Inf", age, router.metric(age))
	}

	out := func(q *anyQuote) string {
		for _, s := range []string{q.Quote.Estimate.ToAmount, q.Quote.EstimatedOutput} {
			if s != "" {
				return s
			}
		}
		return ""
	}
	tests := []struct {
		name      string
		path      string
		aggCalls  int
		multiStep bool
	}{
		{"shape C, WETH on Arbitrum to WPLS", quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", pulseroute.WPLSAddress,
			"fromAmount", "1000000000000000000", "fromAddress", wallet, "toAddress", wallet), 1, true},
		{"shape B, USDC on Arbitrum to PLSX", quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", wallet), 0, false},
		{"within 369, USDCh to PLSX", quotePath("fromChain", "369", "toChain", "369", "fromToken", pulseroute.USDChAddress, "toToken", plsx369,
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", wallet), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aggBefore, amountsBefore := len(up.agg.Quotes()), up.node.EthCalls("getAmountsOut")
			var fromReserves anyQuote
			local.get(tt.path, withKey(localKey)).decode(t, &fromReserves)
			if fromReserves.Provider != "pulseroute" || (tt.multiStep != (fromReserves.Quote.Type == "multi-step")) {
				t.Fatalf("quote from reserves: %+v", fromReserves)
			}
			if n := len(up.agg.Quotes()) - aggBefore; n != tt.aggCalls {
				t.Errorf("%d aggregator calls, want %d", n, tt.aggCalls)
			}
			if n := up.node.EthCalls("getAmountsOut") - amountsBefore; n != 0 {
				t.Errorf("%d getAmountsOut calls with a current snapshot, want 0", n)
			}

			amountsBefore = up.node.EthCalls("getAmountsOut")
			var fromRouter anyQuote
			router.get(tt.path, withKey(routerKey)).decode(t, &fromRouter)
			if n := up.node.EthCalls("getAmountsOut") - amountsBefore; n == 0 {
				t.Error("the router-priced server asked no getAmountsOut")
			}
			if got, want := out(&fromReserves), out(&fromRouter); got == "" || got != want {
				t.Errorf("output from reserves %q, from the router %q", got, want)
			}
		})
	}
	if n := local.metric(`swapgate_pulse_reserves_fallbacks_total{chain="369"}`); n != 0 {
		t.Errorf("%v fallbacks to the router with a current snapshot", n)
	}
}

// TestSandboxQuoteFollowsMovedPool runs a sandbox server without its
// arbitrage, so that a moved pool stays moved, and reads its chain 369's
// node (/rpc/369) with pulserpc: the amounts the reserves snapshot prices
// equal the sandbox PulseX router's getAmountsOut and getAmountsIn over
// eth_call, at genesis and after a large USDCh → PLSX swap moved that
// pool; and the server's own quotes, priced from the chain's reserves,
// follow the move (PLSX costs more), where before they were priced from
// the genesis state whatever the chain's pools held.
func TestSandboxQuoteFollowsMovedPool(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.SandboxArbitragePeriod = -time.Second
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
	})
	ctx := context.Background()
	url := ts.base + "/rpc/369"
	contracts := pulseroute.DefaultContracts()
	router, err := pulserpc.Dial(ctx, contracts, map[uint64]string{369: url}, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := pulserpc.DialReserves(ctx, url, contracts, pulseroute.PricedPairs(reg, contracts), router,
		pulserpc.ReservesConfig{MaxAge: time.Minute, Poll: 50 * time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := res.Start(ctx)
	t.Cleanup(stop)
	waitUntil(t, "the snapshot is read", func() bool { _, ok := res.Age(); return ok })

	usdch, wpls, plsx := contracts.USDCh().Token, contracts.PulseX().WPLS, common.HexToAddress(plsx369)
	paths := [][]common.Address{{usdch, plsx}, {plsx, usdch}, {usdch, wpls}, {wpls, usdch, plsx}}
	amounts := []*big.Int{big.NewInt(1_000_000), big.NewInt(250_000_000), new(big.Int).Exp(big.NewInt(10), big.NewInt(21), nil)}
	same := func(t *testing.T, what string) {
		t.Helper()
		for _, path := range paths {
			for _, a := range amounts {
				for _, dir := range []struct {
					name         string
					local, chain func(context.Context, *big.Int, []common.Address) ([]*big.Int, error)
				}{{"getAmountsOut", res.AmountsOut, router.AmountsOut}, {"getAmountsIn", res.AmountsIn, router.AmountsIn}} {
					l, lerr := dir.local(ctx, a, path)
					r, rerr := dir.chain(ctx, a, path)
					if (lerr != nil) != (rerr != nil) || fmt.Sprint(l) != fmt.Sprint(r) {
						t.Errorf("%s: %s of %s along %v: from reserves %v (%v), router %v (%v)", what, dir.name, a, path, l, lerr, r, rerr)
					}
				}
			}
		}
		if n := res.Fallbacks(); n != 0 {
			t.Errorf("%s: %d fallbacks to the router", what, n)
		}
	}
	same(t, "at genesis")

	quoteOut := func() *big.Int {
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
			"fromAmount", "250000000", "fromAddress", wallet, "toAddress", wallet)).decode(t, &q)
		if q.Provider != "pulseroute" || q.Quote.EstimatedOutput == "" {
			t.Fatalf("quote %+v", q)
		}
		return bigOf(t, q.Quote.EstimatedOutput)
	}
	before := quoteOut()
	snapBefore, err := res.AmountsOut(ctx, big.NewInt(1_000_000), []common.Address{usdch, plsx})
	if err != nil {
		t.Fatal(err)
	}

	// Move the PLSX pool: 200,000 USDCh in.
	in := big.NewInt(200_000_000_000)
	var f struct{ Status string }
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 369, "address": wallet, "token": usdch.Hex(), "amount": in.String()}).decode(t, &f)
	if f.Status != "success" {
		t.Fatalf("faucet %+v", f)
	}
	ts.approve(t, 369, wallet, usdch.Hex(), contracts.PulseX().Router.Hex(), in)
	data, err := pulseroute.SwapExactTokensForTokens(in, big.NewInt(1), []common.Address{usdch, plsx}, common.HexToAddress(wallet), big.NewInt(1<<40))
	if err != nil {
		t.Fatal(err)
	}
	if a := ts.broadcast(t, 369, wallet, map[string]string{"to": contracts.PulseX().Router.Hex(), "data": hexutil.Encode(data)}); a.Status != "success" {
		t.Fatalf("swap: %+v", a)
	}
	waitUntil(t, "the snapshot sees the moved pool", func() bool {
		got, err := res.AmountsOut(ctx, big.NewInt(1_000_000), []common.Address{usdch, plsx})
		return err == nil && got[1].Cmp(snapBefore[1]) < 0
	})
	same(t, "after the swap")
	waitUntil(t, "the server's quote follows the moved pool", func() bool { return quoteOut().Cmp(before) < 0 })
}
