package inbound

import (
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// Step 2's transactions are recorded one per step (a step named again
// replaced, never doubled) and shown once mined, in the order submitted.
func TestStepTransactionsInData(t *testing.T) {
	tx := common.HexToHash("0x01")
	if got := IntentKey(tx, StepSwap); got != "inbound/"+tx.Hex()+"/swap" {
		t.Fatalf("key %s", got)
	}
	var d Deposit
	d = d.WithTx(StepTx{Step: StepApprove, ChainID: 8453})
	d = d.WithTx(StepTx{Step: StepBridge, ChainID: 8453, IntentID: "b"})
	d = d.WithTx(StepTx{Step: StepSwap, ChainID: 369, IntentID: "s"})
	if got := d.Data().Transactions; got != nil {
		t.Fatalf("nothing mined yet, transactions %+v", got)
	}
	d2 := d.WithTx(StepTx{Step: StepBridge, ChainID: 8453, IntentID: "b", TxHash: common.HexToHash("0xb")})
	d2 = d2.WithTx(StepTx{Step: StepSwap, ChainID: 369, IntentID: "s", TxHash: common.HexToHash("0x5")})
	if len(d.Txs) != 3 || d.Txs[1].TxHash != (common.Hash{}) {
		t.Fatalf("WithTx changed its receiver: %+v", d.Txs)
	}
	want := []TxData{{Step: StepBridge, ChainID: 8453, TxHash: common.HexToHash("0xb").Hex()}, {Step: StepSwap, ChainID: 369, TxHash: common.HexToHash("0x5").Hex()}}
	if got := d2.Data().Transactions; !reflect.DeepEqual(got, want) || len(d2.Txs) != 3 {
		t.Fatalf("transactions %+v (%d recorded), want %+v", got, len(d2.Txs), want)
	}
	if s, ok := d2.Tx(StepApprove); !ok || s.IntentID != "" {
		t.Fatalf("approve step %+v %v", s, ok)
	}
}
