package pulserpc

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// fixedState is a fallback chain state with fixed answers.
type fixedState struct{ payment, out int64 }

func (f fixedState) QuoteGasPayment(context.Context, uint64, uint32) (*big.Int, error) {
	return big.NewInt(f.payment), nil
}

func (f fixedState) AmountsOut(_ context.Context, in *big.Int, path []common.Address) ([]*big.Int, error) {
	out := []*big.Int{in}
	for range path[1:] {
		out = append(out, big.NewInt(f.out))
	}
	return out, nil
}

// TestChainReadsConfiguredChainsOnly checks the routing of Chain: a chain
// with a node and a warp route is read on its warp router, PulseX on chain
// 369's node, and every other read goes to the fallback, or is ErrNoNode
// without one.
func TestChainReadsConfiguredChainsOnly(t *testing.T) {
	contracts := pulseroute.DefaultContracts()
	word := func(v int64) []byte { return common.LeftPadBytes(big.NewInt(v).Bytes(), 32) }
	amountsRet := hexutil.MustDecode("0x" +
		"0000000000000000000000000000000000000000000000000000000000000020" +
		"0000000000000000000000000000000000000000000000000000000000000002" +
		"00000000000000000000000000000000000000000000000000000000000f4240" +
		"0000000000000000000000000000000000000000000000000000000000000009")
	fb := fixedState{payment: 5, out: 6}
	ctx := context.Background()
	path := []common.Address{contracts.USDCh().Token, contracts.PulseX().WPLS}

	tests := []struct {
		name     string
		fallback pulseroute.ChainState
		// want* are the answers for chain 42161 (no node), chain 56 (a
		// node, no warp route) and PulseX without a 369 node; 0 is ErrNoNode.
		wantNoNode, wantNoRoute, wantPulseX int64
	}{
		{"sandbox fallback", fb, 5, 5, 6},
		{"live, no fallback", nil, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eth, bsc, pls := &fakeCaller{ret: word(777)}, &fakeCaller{ret: word(888)}, &fakeCaller{ret: amountsRet}
			rc := New(map[uint64]Caller{1: eth, 56: bsc}, contracts, tt.fallback)
			got, err := rc.QuoteGasPayment(ctx, 1, 369)
			w, _ := contracts.WarpRoute(1)
			if err != nil || got.Int64() != 777 || eth.last.To == nil || *eth.last.To != w.Router {
				t.Errorf("chain 1: %v, %v, sent to %v", got, err, eth.last.To)
			}
			check := func(what string, got *big.Int, err error, want int64) {
				t.Helper()
				if want == 0 {
					if !errors.Is(err, pulseroute.ErrNoNode) {
						t.Errorf("%s: %v, %v; want ErrNoNode", what, got, err)
					}
					return
				}
				if err != nil || got.Int64() != want {
					t.Errorf("%s: %v, %v; want %d", what, got, err, want)
				}
			}
			got, err = rc.QuoteGasPayment(ctx, 42161, 369)
			check("chain 42161", got, err, tt.wantNoNode)
			got, err = rc.QuoteGasPayment(ctx, 56, 369)
			check("chain 56", got, err, tt.wantNoRoute)
			if bsc.last.To != nil {
				t.Errorf("chain 56 without a warp route was read on %v", bsc.last.To)
			}
			amounts, err := rc.AmountsOut(ctx, big.NewInt(1_000_000), path)
			var last *big.Int
			if err == nil {
				last = amounts[len(amounts)-1]
			}
			check("PulseX without a 369 node", last, err, tt.wantPulseX)

			rc = New(map[uint64]Caller{quote.PulseChainID: pls}, contracts, tt.fallback)
			amounts, err = rc.AmountsOut(ctx, big.NewInt(1_000_000), path)
			if err != nil || len(amounts) != 2 || amounts[1].Int64() != 9 || pls.last.To == nil || *pls.last.To != contracts.PulseX().Router {
				t.Errorf("369 node: %v, %v, sent to %v", amounts, err, pls.last.To)
			}
			// Chain 369's node also answers the outbound gas payment, on
			// the synthetic USDCh router.
			pls.ret = word(4242)
			got, err = rc.QuoteGasPayment(ctx, quote.PulseChainID, 42161)
			if err != nil || got.Int64() != 4242 || *pls.last.To != contracts.USDCh().Router {
				t.Errorf("369 gas payment: %v, %v, sent to %v", got, err, pls.last.To)
			}
		})
	}
}
