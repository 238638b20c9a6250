package sandboxnet

import (
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestOpRecordRoundTrip encodes every kind of operation and decodes it back
// exactly, and holds the encoding of one to the bytes stores already keep.
func TestOpRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC)
	alice := common.HexToAddress("0x8ba1f109551bD432803012645Ac136ddd64DBA72")
	token := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	maxU := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	ops := []Op{
		{Kind: OpSend, Time: at, From: alice, TxHash: common.HexToHash("0x01"),
			Tx: simchain.TxRequest{To: token, Data: []byte{0x09, 0x5e, 0xa7, 0xb3, 0}, Value: maxU, GasLimit: 57_500}},
		{Kind: OpSend, Time: at.Add(time.Second), From: alice, Tx: simchain.TxRequest{To: alice}, TxHash: common.HexToHash("0x02")},
		{Kind: OpFaucet, Time: at.Add(2 * time.Second), Holder: alice, Token: token, Amount: big.NewInt(5), TxHash: common.HexToHash("0x03")},
		{Kind: OpCredit, Time: at.Add(3 * time.Second), Holder: alice, Amount: big.NewInt(7), TxHash: common.HexToHash("0x04")},
		// A chain grain's op names the request that asked for it.
		{Kind: OpCredit, Time: at.Add(4 * time.Second), Holder: alice, Amount: big.NewInt(8), TxHash: common.HexToHash("0x05"),
			Request: "credit/bridge/0xabc"},
		// A signed transaction and a base fee.
		{Kind: OpRaw, Time: at.Add(5 * time.Second), Raw: []byte{0x02, 0xf8, 0x6e, 0x01}, TxHash: common.HexToHash("0x06")},
		{Kind: OpBaseFee, Time: at.Add(6 * time.Second), Amount: big.NewInt(30_000_000_000)},
		// The relayer's delivery of a warp-route message, under its id.
		{Kind: OpRelay, Time: at.Add(7 * time.Second), From: alice, TxHash: common.HexToHash("0x07"), Request: "warp/0xabc",
			Tx: simchain.TxRequest{To: token, Data: []byte{0x01, 0x02, 0x03, 0x04, 0x05}, GasLimit: 300_000}},
	}
	for i, want := range ops {
		rec, err := EncodeOp(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeOp(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Time.Equal(want.Time) {
			t.Errorf("op %d time %v, want %v", i, got.Time, want.Time)
		}
		got.Time = want.Time
		if !reflect.DeepEqual(got, want) {
			t.Errorf("op %d\n got %+v\nwant %+v", i, got, want)
		}
	}
	// Data directories hold records in this form: it must not change.
	rec, err := EncodeOp(ops[2])
	if err != nil {
		t.Fatal(err)
	}
	const stored = `{"v":1,"kind":"faucet","at":"2026-02-03T04:05:08.000000789Z","holder":"0x8ba1f109551bD432803012645Ac136ddd64DBA72","token":"0xaf88d065e77c8cC2239327C5EDb3A432268e5831","amount":"5","txHash":"0x0000000000000000000000000000000000000000000000000000000000000003"}`
	if string(rec) != stored {
		t.Fatalf("faucet record\n got %s\nwant %s", rec, stored)
	}
}

func TestOpRecordRefusesUnknownKinds(t *testing.T) {
	if _, err := EncodeOp(Op{Kind: "mint", Time: time.Now()}); !errors.Is(err, ErrUnknownOp) {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := DecodeOp([]byte(`{"v":1,"kind":"mint","at":"2026-01-01T00:00:00Z","txHash":"0x"}`)); err == nil {
		t.Fatal("decoded an unknown kind")
	}
	if _, err := DecodeOp([]byte(`{"v":2,"kind":"send","at":"2026-01-01T00:00:00Z","txHash":"0x"}`)); err == nil {
		t.Fatal("decoded an unknown version")
	}
}
