package sandboxnet_test

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestRelayOpDeliversOnce sends USDCh from 369 to Base over the warp
// route, reads the message on 369 and delivers it on Base with the relay
// operation: the USDC reaches the recipient, the chain names the delivery,
// CheckRelay refuses a second one, and a broadcast from the relayer's
// account (which would let a client deliver) is refused without mining.
func TestRelayOpDeliversOnce(t *testing.T) {
	origin, dest := newChain(t, 369), newChain(t, 8453)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	call, err := pulseroute.TransferRemote(8453, bob, big.NewInt(25_000_000))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := pulsesim.NewSandboxChain(testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	pay, err := sc.QuoteGasPayment(context.Background(), 369, 8453)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := origin.Apply(sandboxnet.Op{Kind: sandboxnet.OpSend, Time: at, From: alice,
		Tx: simchain.TxRequest{To: common.HexToAddress(pulseroute.USDChAddress), Data: call, Value: pay}})
	if err != nil || !sent.Succeeded() {
		t.Fatalf("transferRemote: %v %+v", err, sent)
	}
	msgs, _ := origin.WarpMessages(0)
	if len(msgs) != 1 {
		t.Fatalf("messages %+v", msgs)
	}
	op, err := sandboxnet.RelayOp(nil, msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	op.Time = at.Add(time.Minute)
	w, _ := pulseroute.DefaultContracts().WarpRoute(8453)
	before := dest.Sim().Balance(w.Token, bob)
	if err := dest.CheckRelay(op); err != nil {
		t.Fatal(err)
	}
	a, err := dest.Do(op)
	if err != nil || a.Receipt == nil || !a.Receipt.Succeeded() {
		t.Fatalf("relay: %v %+v", err, a.Receipt)
	}
	if d := new(big.Int).Sub(dest.Sim().Balance(w.Token, bob), before); d.Cmp(big.NewInt(25_000_000)) != 0 {
		t.Errorf("bob got %s", d)
	}
	if r, ok := dest.Delivery(msgs[0].ID); !ok || r.TxHash != a.Hash {
		t.Fatalf("delivery %v %v, want %s", r, ok, a.Hash.Hex())
	}
	if err := dest.CheckRelay(op); err == nil {
		t.Fatal("a second delivery passed the check")
	}
	bcast := sandboxnet.Op{Kind: sandboxnet.OpSend, Time: op.Time, From: pulsesim.RelayerAddress, Tx: op.Tx}
	head := dest.Sim().Head().Number
	if r, err := dest.Apply(bcast); r != nil || !errors.Is(err, simchain.ErrInvalidSender) || dest.Sim().Head().Number != head {
		t.Fatalf("a broadcast from the relayer: %v %v", r, err)
	}
}
