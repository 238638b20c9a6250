package sandboxchain

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestRelayerOverChainGrains relays through the chain grains (every
// request delivered twice, as the cluster's retries may): a transferRemote
// from Base is delivered on 369 in one logged operation; a relayer started
// after the activations are dropped (a restart of the nodes) reads the
// message again and mines nothing, and the delivery is found by its
// message id.
func TestRelayerOverChainGrains(t *testing.T) {
	ctx := context.Background()
	l := newLogStore()
	grains, err := NewGrains(reg(t), l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{grains: grains, active: map[string]*Grain{}}
	remote := NewRemote(reg(t), fc, time.Minute, nil)
	w, _ := pulseroute.DefaultContracts().WarpRoute(8453)
	amount := big.NewInt(9_000_000)
	approve, _ := pulseroute.ABI().Pack(pulseroute.MethodApprove, w.Router, amount)
	if r, err := remote.Send(ctx, 8453, gBob, simchain.TxRequest{To: w.Token, Data: approve}); err != nil || !r.Succeeded() {
		t.Fatalf("approve: %v %+v", err, r)
	}
	sc, _ := pulsesim.NewSandboxChain(reg(t))
	pay, _ := sc.QuoteGasPayment(ctx, 8453, 369)
	call, _ := pulseroute.TransferRemote(369, gBob, amount)
	sent, err := remote.Send(ctx, 8453, gBob, simchain.TxRequest{To: w.Router, Data: call, Value: pay})
	if err != nil || !sent.Succeeded() {
		t.Fatalf("transferRemote: %v %+v", err, sent)
	}
	// Blocks are stamped a second apart at least, so the source block may
	// be ahead of the clock: the relayer's clock is past any of them.
	later := RelayerOptions{Now: func() time.Time { return time.Now().Add(time.Hour) }}
	newRelayer(remote, remote.ChainIDs(), later).step()
	msgs := pulsesim.MessagesIn(8453, w.Router, sent.Logs)
	if len(msgs) != 1 {
		t.Fatalf("messages %+v", msgs)
	}
	first, ok, err := remote.WarpDelivery(ctx, 369, msgs[0].ID)
	if err != nil || !ok || l.count(369) != 1 {
		t.Fatalf("delivery %+v %v %v, %d operations on 369", first, ok, err, l.count(369))
	}
	fc.deactivate()
	newRelayer(remote, remote.ChainIDs(), later).step()
	again, ok, err := remote.WarpDelivery(ctx, 369, msgs[0].ID)
	if err != nil || !ok || again.TxHash != first.TxHash || l.count(369) != 1 {
		t.Fatalf("after a restart: %+v %v %v, %d operations on 369", again, ok, err, l.count(369))
	}
	if got, err := remote.Balance(ctx, 369, gBob, common.HexToAddress(pulseroute.USDChAddress)); err != nil ||
		new(big.Int).Sub(got, new(big.Int).Mul(big.NewInt(1000), big.NewInt(1_000_000))).Cmp(amount) != 0 {
		t.Fatalf("bob's USDCh %s %v, want the genesis 1,000 and %s", got, err, amount)
	}
}
