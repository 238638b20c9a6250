package gasrpc

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/params"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/gas/gastest"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

func gwei(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.GWei)) }

// TestFeeHistoryAgainstSimulatedChain mines blocks whose transactions tip 1, 2
// and 3 gwei with equal gas, plus empty blocks, and checks that the tiers
// follow the 10th, 50th and 90th percentile tips and the node's next base fee.
func TestFeeHistoryAgainstSimulatedChain(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	backend := simulated.NewBackend(types.GenesisAlloc{
		from: {Balance: new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))},
	})
	defer backend.Close()
	client := backend.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	chainID, err := client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(chainID)
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	var nonce uint64
	for block := 0; block < 5; block++ {
		if block%2 == 0 { // blocks 0, 2, 4 carry transactions; 1, 3 stay empty
			for _, tip := range []int64{3, 1, 2} {
				tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{
					ChainID:   chainID,
					Nonce:     nonce,
					GasTipCap: gwei(tip),
					GasFeeCap: gwei(100),
					Gas:       params.TxGas,
					To:        &to,
					Value:     big.NewInt(1),
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := client.SendTransaction(ctx, tx); err != nil {
					t.Fatalf("send: %v", err)
				}
				nonce++
			}
		}
		backend.Commit()
	}

	chain := &registry.Chain{ID: 1, Key: "eth", ChainType: registry.EVM, BlockTimeMs: 12000}
	at := time.Unix(1_740_000_000, 0)
	o := NewFeeHistory(client)
	o.now = func() time.Time { return at }
	rec, err := o.GasPrice(ctx, chain)
	if err != nil {
		t.Fatal(err)
	}
	base := gastest.CheckTiers(t, rec)

	raw, err := client.FeeHistory(ctx, feeHistoryBlocks, nil, rewardPercentiles)
	if err != nil {
		t.Fatal(err)
	}
	if want := raw.BaseFee[len(raw.BaseFee)-1]; base.Cmp(want) != 0 {
		t.Fatalf("base fee %s, node announces %s for the next block", base, want)
	}
	wantTips := []*big.Int{gwei(1), gwei(2), gwei(3)}
	tiers := []gas.Tier{rec.Speed.Slow, rec.Speed.Standard, rec.Speed.Fast}
	for i, tr := range tiers {
		if got := gastest.Wei(t, tr.MaxPriorityFeePerGas); got.Cmp(wantTips[i]) != 0 {
			t.Errorf("tier %d tip %s, want %s", i, got, wantTips[i])
		}
		if got, want := gastest.Wei(t, tr.GasPrice), new(big.Int).Add(base, wantTips[i]); got.Cmp(want) != 0 {
			t.Errorf("tier %d gasPrice %s, want %s", i, got, want)
		}
	}
	if rec.ChainID != 1 || rec.LastUpdated != at.Unix() {
		t.Errorf("chainId %d lastUpdated %d", rec.ChainID, rec.LastUpdated)
	}
	if got := [3]int{tiers[0].EstimatedTime, tiers[1].EstimatedTime, tiers[2].EstimatedTime}; got != [3]int{120, 36, 12} {
		t.Errorf("estimated times %v", got)
	}
}

func TestFeeHistoryRefusesNonEVM(t *testing.T) {
	o := NewFeeHistory(failingReader{})
	_, err := o.GasPrice(context.Background(), &registry.Chain{ID: 7565164, ChainType: registry.SVM})
	if !errors.Is(err, gas.ErrUnsupportedChain) {
		t.Fatalf("err = %v", err)
	}
}

type failingReader struct{}

var errNodeDown = errors.New("node down")

func (failingReader) FeeHistory(context.Context, uint64, *big.Int, []float64) (*ethereum.FeeHistory, error) {
	return nil, errNodeDown
}

func TestFeeHistoryWrapsNodeErrors(t *testing.T) {
	_, err := NewFeeHistory(failingReader{}).GasPrice(context.Background(), &registry.Chain{ID: 1, ChainType: registry.EVM})
	if !errors.Is(err, errNodeDown) {
		t.Fatalf("err = %v", err)
	}
}

func bigs(vals ...int64) []*big.Int {
	out := make([]*big.Int, len(vals))
	for i, v := range vals {
		out[i] = big.NewInt(v)
	}
	return out
}

func TestRecordFromFeeHistory(t *testing.T) {
	tests := []struct {
		name     string
		fh       *ethereum.FeeHistory
		wantBase int64
		wantTips [3]int64
		wantErr  error
	}{
		{
			name: "odd number of busy blocks",
			fh: &ethereum.FeeHistory{
				BaseFee:      bigs(100, 110, 120, 130),
				GasUsedRatio: []float64{0.5, 0.9, 0.7},
				Reward:       [][]*big.Int{bigs(1, 5, 9), bigs(3, 6, 30), bigs(2, 4, 8)},
			},
			wantBase: 130, wantTips: [3]int64{2, 5, 9},
		},
		{
			name: "empty blocks left out, even count averages the middle two",
			fh: &ethereum.FeeHistory{
				BaseFee:      bigs(100, 100, 100, 100, 90),
				GasUsedRatio: []float64{0.5, 0, 0.6, 0},
				Reward:       [][]*big.Int{bigs(2, 4, 10), bigs(0, 0, 0), bigs(4, 7, 20), bigs(0, 0, 0)},
			},
			wantBase: 90, wantTips: [3]int64{3, 5, 15},
		},
		{
			name: "all blocks empty",
			fh: &ethereum.FeeHistory{
				BaseFee:      bigs(7, 7, 7),
				GasUsedRatio: []float64{0, 0},
				Reward:       [][]*big.Int{bigs(0, 0, 0), bigs(0, 0, 0)},
			},
			wantBase: 7, wantTips: [3]int64{0, 0, 0},
		},
		{
			name:     "node without rewards",
			fh:       &ethereum.FeeHistory{BaseFee: bigs(5, 6)},
			wantBase: 6, wantTips: [3]int64{0, 0, 0},
		},
		{name: "no base fee", fh: &ethereum.FeeHistory{}, wantErr: errEmptyFeeHistory},
		{name: "nil", fh: nil, wantErr: errEmptyFeeHistory},
	}
	chain := &registry.Chain{ID: 1, ChainType: registry.EVM, BlockTimeMs: 2000}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := recordFromFeeHistory(chain, tc.fh, time.Unix(0, 0))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if base := gastest.CheckTiers(t, rec); base.Int64() != tc.wantBase {
				t.Fatalf("base %s, want %d", base, tc.wantBase)
			}
			got := [3]int64{
				gastest.Wei(t, rec.Speed.Slow.MaxPriorityFeePerGas).Int64(),
				gastest.Wei(t, rec.Speed.Standard.MaxPriorityFeePerGas).Int64(),
				gastest.Wei(t, rec.Speed.Fast.MaxPriorityFeePerGas).Int64(),
			}
			if got != tc.wantTips {
				t.Fatalf("tips %v, want %v", got, tc.wantTips)
			}
		})
	}
}
