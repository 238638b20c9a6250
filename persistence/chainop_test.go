package persistence

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestChainOpsRoundTrip stores operations of two chains out of order and
// reads each chain's back in sequence order, exactly as written.
func TestChainOpsRoundTrip(t *testing.T) {
	s := openTestStore(t, nil)
	ctx := context.Background()
	at := time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC)
	alice := common.HexToAddress("0x8ba1f109551bD432803012645Ac136ddd64DBA72")
	token := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	maxU := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	ops := []sandboxnet.Op{
		{Kind: sandboxnet.OpSend, Time: at, From: alice, TxHash: common.HexToHash("0x01"),
			Tx: simchain.TxRequest{To: token, Data: []byte{0x09, 0x5e, 0xa7, 0xb3, 0}, Value: maxU, GasLimit: 57_500}},
		{Kind: sandboxnet.OpSend, Time: at.Add(time.Second), From: alice, Tx: simchain.TxRequest{To: alice}, TxHash: common.HexToHash("0x02")},
		{Kind: sandboxnet.OpFaucet, Time: at.Add(2 * time.Second), Holder: alice, Token: token, Amount: big.NewInt(5), TxHash: common.HexToHash("0x03")},
		{Kind: sandboxnet.OpCredit, Time: at.Add(3 * time.Second), Holder: alice, Amount: big.NewInt(7), TxHash: common.HexToHash("0x04")},
	}
	// Chain 42161 gets them out of order; chain 42162 (the next id, whose
	// keys follow directly) gets one, which must not spill into 42161's.
	for _, i := range []int{2, 0, 3, 1} {
		if err := s.AppendChainOp(ctx, 42161, uint64(i+1), ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendChainOp(ctx, 42162, 1, ops[0]); err != nil {
		t.Fatal(err)
	}
	var got []sandboxnet.Op
	var seqs []uint64
	if err := s.ChainOps(ctx, 42161, func(seq uint64, op sandboxnet.Op) error {
		seqs, got = append(seqs, seq), append(got, op)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []uint64{1, 2, 3, 4}) {
		t.Fatalf("sequence %v", seqs)
	}
	for i := range ops {
		want := ops[i]
		if !got[i].Time.Equal(want.Time) {
			t.Errorf("op %d time %v, want %v", i, got[i].Time, want.Time)
		}
		got[i].Time = want.Time
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("op %d\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	// A sequence number is written once.
	if err := s.AppendChainOp(ctx, 42161, 2, ops[2]); !errors.Is(err, ErrExists) {
		t.Fatalf("rewrite of an operation: %v", err)
	}
	// fn's error stops the scan.
	stop := errors.New("stop")
	n := 0
	if err := s.ChainOps(ctx, 42161, func(uint64, sandboxnet.Op) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("stop: %v after %d", err, n)
	}
	// Nothing stored: no calls.
	if err := s.ChainOps(ctx, 1, func(uint64, sandboxnet.Op) error { t.Fatal("an operation on chain 1"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestChainOpRefusesUnknownKinds(t *testing.T) {
	s := openTestStore(t, nil)
	if err := s.AppendChainOp(context.Background(), 1, 1, sandboxnet.Op{Kind: "mint", Time: time.Now()}); !errors.Is(err, sandboxnet.ErrUnknownOp) {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := decodeChainOp([]byte(`{"v":1,"kind":"mint","at":"2026-01-01T00:00:00Z","txHash":"0x"}`)); err == nil {
		t.Fatal("decoded an unknown kind")
	}
	if _, err := decodeChainOp([]byte(`{"v":2,"kind":"send","at":"2026-01-01T00:00:00Z","txHash":"0x"}`)); err == nil {
		t.Fatal("decoded an unknown version")
	}
}
