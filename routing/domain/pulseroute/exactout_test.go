package pulseroute

import (
	"context"
	"math/big"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// movingPool is chain 369 whose PulseX pool moves at every getAmountsOut,
// as a live chain's may between two reads at the latest block: the k-th
// read (from 0) pays rate×(1 − k/10⁴) units out per unit in, and
// getAmountsIn reads the pool as it stands before the next getAmountsOut.
type movingPool struct {
	rate  int64 // units out per unit in, before the pool moves
	mu    sync.Mutex
	outs  int64 // getAmountsOut reads so far
	gasOf int64
}

// rateNow is the pool's rate after k moves, as a fraction over 10⁴.
func (m *movingPool) rateNow(k int64) (num, den *big.Int) {
	return new(big.Int).Mul(big.NewInt(m.rate), big.NewInt(10_000-k)), big.NewInt(10_000)
}

func (m *movingPool) QuoteGasPayment(context.Context, uint64, uint32) (*big.Int, error) {
	return big.NewInt(m.gasOf), nil
}

func (m *movingPool) AmountsOut(_ context.Context, in *big.Int, path []common.Address) ([]*big.Int, error) {
	m.mu.Lock()
	k := m.outs
	m.outs++
	m.mu.Unlock()
	num, den := m.rateNow(k)
	out := []*big.Int{in}
	for range path[1:] {
		o := new(big.Int).Mul(out[len(out)-1], num)
		out = append(out, o.Quo(o, den))
	}
	return out, nil
}

func (m *movingPool) AmountsIn(_ context.Context, want *big.Int, path []common.Address) ([]*big.Int, error) {
	m.mu.Lock()
	k := m.outs
	m.mu.Unlock()
	num, den := m.rateNow(k)
	ins := make([]*big.Int, len(path))
	ins[len(ins)-1] = want
	for i := len(path) - 1; i > 0; i-- {
		// ⌈out×den/num⌉, the least input that buys out.
		in := new(big.Int).Mul(ins[i], den)
		in.Add(in, new(big.Int).Sub(num, big.NewInt(1)))
		ins[i-1] = in.Quo(in, num)
	}
	return ins, nil
}

// TestExactOutputPricedAtTheSizingRead: the direct inbound route into
// PLSX is sized on PulseX read backwards and checked forward; the pool
// moves at every later read. The route answered carries the output that
// sizing read (its toAmountMin, the calldata's minOutput, data.quote's
// minOutput all reach toAmount), not an output read again after the pool
// moved.
func TestExactOutputPricedAtTheSizingRead(t *testing.T) {
	tests := []struct {
		name     string
		feeBps   int
		slippage float64
		toWhole  string
	}{
		{"with a fee", 30, 0.005, "1000000"},
		{"without a fee", 0, 0.01, "2500000"},
		{"no slippage", 30, 0, "750000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := &movingPool{rate: 3e16, gasOf: 70_000_000_000_000}
			f := newLiveOn(t, nil, pool)
			req := f.req(t, 42161, "USDC", 369, "PLSX", "1")
			req.FromAmount = nil
			want, _ := new(big.Int).SetString(tt.toWhole+"000000000000000000", 10)
			req.ToAmount, req.FeeBps, req.Slippage = want, tt.feeBps, tt.slippage
			if why := f.p.ExactOutputUnsupported(req); why != "" {
				t.Fatalf("refused: %s", why)
			}
			r, err := f.p.QuoteLeg(context.Background(), req, LiveToolWarp)
			if err != nil {
				t.Fatalf("QuoteLeg: %v", err)
			}
			if r.ToAmountMin.Cmp(want) < 0 {
				t.Fatalf("toAmountMin %s below toAmount %s (input %s, output %s)", r.ToAmountMin, want, r.FromAmount, r.ToAmount)
			}
			if r.Direct == nil || r.Direct.MinOutput != r.ToAmountMin.String() {
				t.Fatalf("data.quote %+v, toAmountMin %s", r.Direct, r.ToAmountMin)
			}
			_, args, err := Decode(r.Tx.Data)
			if err != nil {
				t.Fatal(err)
			}
			// bridgeAndSwap(quoteRef, domain, recipient, amount, fee, outputToken, minOutput)
			if minOut, ok := args[6].(*big.Int); !ok || minOut.Cmp(want) < 0 {
				t.Fatalf("calldata minOutput %v below toAmount %s", args[6], want)
			}
			if r.PartnerFee.Sign() < 0 || new(big.Int).Add(r.ToAmount, r.PartnerFee).Cmp(r.PreFeeToAmount) != 0 {
				t.Errorf("toAmount %s + partner fee %s != preFee %s", r.ToAmount, r.PartnerFee, r.PreFeeToAmount)
			}
		})
	}
}
