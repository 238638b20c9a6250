package pulseroute

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// TestRPCChainReadsConfiguredChainsOnly checks the routing of RPCChain: a
// chain with a node and a warp route is read on its warp router, PulseX on
// chain 369's node, and every other read goes to the sandbox chain.
func TestRPCChainReadsConfiguredChainsOnly(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := NewSandboxChain(reg)
	if err != nil {
		t.Fatal(err)
	}
	contracts := DefaultContracts()
	word := func(v int64) []byte { return common.LeftPadBytes(big.NewInt(v).Bytes(), 32) }
	eth := &fakeCaller{ret: word(777)}
	bsc := &fakeCaller{ret: word(888)}
	pls := &fakeCaller{ret: hexutil.MustDecode("0x" +
		"0000000000000000000000000000000000000000000000000000000000000020" +
		"0000000000000000000000000000000000000000000000000000000000000002" +
		"00000000000000000000000000000000000000000000000000000000000f4240" +
		"0000000000000000000000000000000000000000000000000000000000000009")}
	rc := newRPCChain(map[uint64]Caller{1: eth, 56: bsc}, contracts, sb)
	ctx := context.Background()

	got, err := rc.QuoteGasPayment(ctx, 1, 369)
	w, _ := contracts.WarpRoute(1)
	if err != nil || got.Int64() != 777 || eth.last.To == nil || *eth.last.To != w.Router {
		t.Errorf("chain 1: %v, %v, sent to %v", got, err, eth.last.To)
	}
	for _, id := range []uint64{42161, 56} { // no node; a node but no warp route
		got, err := rc.QuoteGasPayment(ctx, id, 369)
		want, _ := sb.QuoteGasPayment(ctx, id, 369)
		if err != nil || got.Cmp(want) != 0 {
			t.Errorf("chain %d: %v, %v; want the sandbox's %v", id, got, err, want)
		}
	}
	if bsc.last.To != nil {
		t.Errorf("chain 56 without a warp route was read on %v", bsc.last.To)
	}

	path := []common.Address{contracts.USDCh().Token, contracts.PulseX().WPLS}
	amounts, err := rc.AmountsOut(ctx, big.NewInt(1_000_000), path)
	want, _ := sb.AmountsOut(ctx, big.NewInt(1_000_000), path)
	if err != nil || len(amounts) != 2 || amounts[1].Cmp(want[1]) != 0 {
		t.Errorf("no 369 node: %v, %v; want the sandbox's %v", amounts, err, want)
	}
	rc = newRPCChain(map[uint64]Caller{quote.PulseChainID: pls}, contracts, sb)
	amounts, err = rc.AmountsOut(ctx, big.NewInt(1_000_000), path)
	if err != nil || len(amounts) != 2 || amounts[1].Int64() != 9 || pls.last.To == nil || *pls.last.To != contracts.PulseX().Router {
		t.Errorf("369 node: %v, %v, sent to %v", amounts, err, pls.last.To)
	}
}
