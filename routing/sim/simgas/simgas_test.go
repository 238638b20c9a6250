package simgas

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/gas/gastest"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

func TestSandboxGasPrice(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 17, 0, 0, time.UTC)
	tests := []struct {
		name      string
		chain     registry.Chain
		wantTimes [3]int // slow, standard, fast
		wantErr   error
	}{
		{name: "ethereum", chain: registry.Chain{ID: 1, Key: "eth", ChainType: registry.EVM, BlockTimeMs: 12000, BaseFeeGwei: 12}, wantTimes: [3]int{120, 36, 12}},
		{name: "arbitrum", chain: registry.Chain{ID: 42161, Key: "arb", ChainType: registry.EVM, BlockTimeMs: 250, BaseFeeGwei: 0.01}, wantTimes: [3]int{3, 1, 1}},
		{name: "pulsechain", chain: registry.Chain{ID: 369, Key: "pls", ChainType: registry.EVM, BlockTimeMs: 10000, BaseFeeGwei: 2_500_000}, wantTimes: [3]int{100, 30, 10}},
		{name: "zero base fee", chain: registry.Chain{ID: 56, Key: "bsc", ChainType: registry.EVM, BlockTimeMs: 3000}, wantTimes: [3]int{30, 9, 3}},
		{name: "solana", chain: registry.Chain{ID: 1151111081099710, Key: "sol", ChainType: registry.SVM, BlockTimeMs: 400}, wantErr: gas.ErrUnsupportedChain},
		{name: "bitcoin", chain: registry.Chain{ID: 20000000000001, Key: "btc", ChainType: registry.UTXO}, wantErr: gas.ErrUnsupportedChain},
	}
	o := NewSandbox(func() time.Time { return at })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := o.GasPrice(context.Background(), &tc.chain)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if rec.ChainID != tc.chain.ID || rec.LastUpdated != at.Unix() {
				t.Fatalf("chainId %d lastUpdated %d", rec.ChainID, rec.LastUpdated)
			}
			base := gastest.CheckTiers(t, rec)
			ref := tc.chain.BaseFeeGwei * 1e9
			b, _ := new(big.Float).SetInt(base).Float64()
			if b < ref*(1-baseFeeWobble)-1 || b > ref*(1+baseFeeWobble)+1 {
				t.Fatalf("base fee %v wei outside ±5%% of %v", b, ref)
			}
			got := [3]int{rec.Speed.Slow.EstimatedTime, rec.Speed.Standard.EstimatedTime, rec.Speed.Fast.EstimatedTime}
			if got != tc.wantTimes {
				t.Fatalf("estimated times %v, want %v", got, tc.wantTimes)
			}
			// Strictly rising tips, thanks to the floors.
			if gastest.Wei(t, rec.Speed.Slow.MaxPriorityFeePerGas).Cmp(gastest.Wei(t, rec.Speed.Standard.MaxPriorityFeePerGas)) >= 0 ||
				gastest.Wei(t, rec.Speed.Standard.MaxPriorityFeePerGas).Cmp(gastest.Wei(t, rec.Speed.Fast.MaxPriorityFeePerGas)) >= 0 {
				t.Fatalf("tips not strictly rising: %+v", rec.Speed)
			}
		})
	}
}

func TestSandboxGasMovesWithTheClock(t *testing.T) {
	chain := &registry.Chain{ID: 1, Key: "eth", ChainType: registry.EVM, BlockTimeMs: 12000, BaseFeeGwei: 12}
	seen := map[string]bool{}
	for minute := 0; minute < 60; minute += 5 {
		now := time.Date(2025, 3, 1, 10, minute, 0, 0, time.UTC)
		a, _ := NewSandbox(func() time.Time { return now }).GasPrice(context.Background(), chain)
		b, _ := NewSandbox(func() time.Time { return now.Add(40 * time.Second) }).GasPrice(context.Background(), chain)
		if a.Speed != b.Speed {
			t.Fatalf("minute %d: figures changed within the minute", minute)
		}
		seen[a.Speed.Standard.GasPrice] = true
	}
	if len(seen) < 6 {
		t.Fatalf("only %d distinct standard gas prices over the hour", len(seen))
	}
}

// TestRecordJSON pins the wire shape of the record (SPEC "Gas price record").
func TestRecordJSON(t *testing.T) {
	chain := &registry.Chain{ID: 1, Key: "eth", ChainType: registry.EVM, BlockTimeMs: 12000, BaseFeeGwei: 12}
	at := time.Date(2025, 3, 1, 10, 17, 0, 0, time.UTC)
	rec, err := NewSandbox(func() time.Time { return at }).GasPrice(context.Background(), chain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/sandbox_eth.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Fatalf("record JSON:\n%s\nwant:\n%s", got, want)
	}
}

func TestSandboxGasCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	chain := &registry.Chain{ID: 1, Key: "eth", ChainType: registry.EVM}
	if _, err := NewSandbox(time.Now).GasPrice(ctx, chain); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
