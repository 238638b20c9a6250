package pulsesim

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestWarpMessageAndProcess sends the direct outbound quote (USDCh on 369
// to USDC on Arbitrum), reads its message from the origin's logs, and
// delivers it on Arbitrum with the router's process: only the relayer's
// account may, the USDC is released from the collateral to the recipient
// with ReceivedTransferRemote and ProcessId(messageId), Delivery finds the
// delivering transaction, and a second process of the same message
// reverts without releasing anything.
func TestWarpMessageAndProcess(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	req := f.req(t, 369, "USDCh", 42161, "USDC", "40")
	r, err := p.QuoteLeg(context.Background(), req, ToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	origin := simChain(t, f, p, 369)
	rc := mustSend(t, origin, common.HexToAddress(sender), txOf(t, r.Tx))
	if !rc.Succeeded() {
		t.Fatal(rc.RevertReason)
	}
	msgs, head := WarpMessagesSince(origin, pulseroute.DefaultContracts(), 0)
	if len(msgs) != 1 || head != rc.BlockNumber {
		t.Fatalf("messages %+v up to %d, want one up to %d", msgs, head, rc.BlockNumber)
	}
	m := msgs[0]
	var dispatched common.Hash
	for _, l := range rc.Logs {
		if l.Topics[0] == pulseroute.ABI().Events["DispatchId"].ID {
			dispatched = l.Topics[1]
		}
	}
	if m.ID != dispatched || m.Origin != 369 || m.Destination != 42161 || m.RecipientAddress() != common.HexToAddress(recipient) ||
		m.Amount.Cmp(req.FromAmount) != 0 || m.SourceTx != rc.TxHash || m.SentAt.Unix() != int64(rc.BlockTime) {
		t.Fatalf("message %+v, want %s of %s to %s from %s", m, dispatched.Hex(), req.FromAmount, recipient, rc.TxHash.Hex())
	}
	if again, _ := WarpMessagesSince(origin, pulseroute.DefaultContracts(), head+1); len(again) != 0 {
		t.Fatalf("after the head: %+v", again)
	}

	dest := simChain(t, f, p, 42161)
	w, _ := pulseroute.DefaultContracts().WarpRoute(42161)
	data, err := ProcessCalldata(m)
	if err != nil {
		t.Fatal(err)
	}
	deliver := simchain.TxRequest{To: w.Router, Data: data, GasLimit: RelayGasLimit}
	if rc := mustSend(t, dest, common.HexToAddress(sender), deliver); rc.Succeeded() || !strings.Contains(rc.RevertReason, "only the relayer") {
		t.Fatalf("process by a user: status %d reason %q", rc.Status, rc.RevertReason)
	}
	if _, ok := Delivery(dest, pulseroute.DefaultContracts(), m.ID); ok {
		t.Fatal("delivered before the relayer's process")
	}
	to := m.RecipientAddress()
	before, locked := dest.Balance(w.Token, to), dest.Balance(w.Token, w.Router)
	got := mustSend(t, dest, RelayerAddress, deliver)
	if !got.Succeeded() {
		t.Fatalf("relayer's process: %s", got.RevertReason)
	}
	if d := new(big.Int).Sub(dest.Balance(w.Token, to), before); d.Cmp(m.Amount) != 0 {
		t.Errorf("recipient got %s, want %s", d, m.Amount)
	}
	if d := new(big.Int).Sub(locked, dest.Balance(w.Token, w.Router)); d.Cmp(m.Amount) != 0 {
		t.Errorf("collateral released %s, want %s", d, m.Amount)
	}
	topics, vals, ok := logOf(got, "ReceivedTransferRemote")
	if !ok || topics[1] != common.BigToHash(big.NewInt(369)) || topics[2] != m.Recipient || vals[0].(*big.Int).Cmp(m.Amount) != 0 {
		t.Errorf("ReceivedTransferRemote %v %v", topics, vals)
	}
	if topics, _, ok := logOf(got, "ProcessId"); !ok || topics[1] != m.ID {
		t.Errorf("ProcessId %v", topics)
	}
	if d, ok := Delivery(dest, pulseroute.DefaultContracts(), m.ID); !ok || d.TxHash != got.TxHash {
		t.Fatalf("delivery %+v %v, want %s", d, ok, got.TxHash.Hex())
	}
	after := dest.Balance(w.Token, to)
	if rc := mustSend(t, dest, RelayerAddress, deliver); rc.Succeeded() || !strings.Contains(rc.RevertReason, "already delivered") {
		t.Fatalf("second process: status %d reason %q", rc.Status, rc.RevertReason)
	}
	if dest.Balance(w.Token, to).Cmp(after) != 0 {
		t.Error("the second process paid again")
	}
}

// TestWarpProcessMintsOn369 delivers a message from Base on 369: USDCh
// minted to the recipient; a message from a chain without an enrolled
// router reverts.
func TestWarpProcessMintsOn369(t *testing.T) {
	f := loadFixture(t)
	p := f.provider(t, sandbox.Config{}, nil)
	c := simChain(t, f, p, 369)
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	to := common.HexToAddress(recipient)
	m := WarpMessage{ID: common.HexToHash("0x01"), Origin: 8453, Destination: 369, Recipient: common.Hash(pulseroute.AddressToBytes32(to)),
		Amount: big.NewInt(123_456_789)}
	data, err := ProcessCalldata(m)
	if err != nil {
		t.Fatal(err)
	}
	before := c.Balance(usdch, to)
	if rc := mustSend(t, c, RelayerAddress, simchain.TxRequest{To: usdch, Data: data, GasLimit: RelayGasLimit}); !rc.Succeeded() {
		t.Fatal(rc.RevertReason)
	}
	if d := new(big.Int).Sub(c.Balance(usdch, to), before); d.Cmp(m.Amount) != 0 {
		t.Errorf("minted %s, want %s", d, m.Amount)
	}
	m.ID, m.Origin = common.HexToHash("0x02"), 5 // no router enrolled
	data, _ = ProcessCalldata(m)
	if rc := mustSend(t, c, RelayerAddress, simchain.TxRequest{To: usdch, Data: data, GasLimit: RelayGasLimit}); rc.Succeeded() ||
		!strings.Contains(rc.RevertReason, "no router enrolled for origin") {
		t.Fatalf("unenrolled origin: status %d reason %q", rc.Status, rc.RevertReason)
	}
}
