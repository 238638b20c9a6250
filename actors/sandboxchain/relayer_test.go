package sandboxchain_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// relayFixture is a sandbox on a store, its clock, and a relayer with a
// one-minute bridge time moved by hand.
type relayFixture struct {
	svc   *sandboxchain.Service
	store *memStore
	clk   *clock
	relay *sandboxchain.Relayer
}

const bridgeTime = time.Minute

func startRelayFixture(t *testing.T, store *memStore, clk *clock) *relayFixture {
	t.Helper()
	svc, _, err := sandboxchain.Start(context.Background(), testRegistry(t), store, sandboxchain.Options{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	r := sandboxchain.NewIdleRelayer(svc, svc.ChainIDs(), sandboxchain.RelayerOptions{Delay: bridgeTime, Now: clk.now})
	return &relayFixture{svc: svc, store: store, clk: clk, relay: r}
}

// transferRemote sends amount over the warp route from chain from to
// chain to, for to's recipient, from alice (approving the collateral
// router first where the route pulls USDC), and returns the receipt.
func (f *relayFixture) transferRemote(t *testing.T, from, to uint64, recipient common.Address, amount *big.Int) *simchain.Receipt {
	t.Helper()
	ctx := context.Background()
	w, _ := pulseroute.DefaultContracts().WarpRoute(from)
	if w.NeedsApproval() {
		approve, _ := pulseroute.ABI().Pack(pulseroute.MethodApprove, w.Router, amount)
		if r, err := f.svc.Send(ctx, from, alice, simchain.TxRequest{To: w.Token, Data: approve}); err != nil || !r.Succeeded() {
			t.Fatalf("approve: %v %+v", err, r)
		}
	}
	sc, err := pulsesim.NewSandboxChain(testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	pay, err := sc.QuoteGasPayment(ctx, from, uint32(to))
	if err != nil {
		t.Fatal(err)
	}
	call, _ := pulseroute.TransferRemote(uint32(to), recipient, amount)
	r, err := f.svc.Send(ctx, from, alice, simchain.TxRequest{To: w.Router, Data: call, Value: pay})
	if err != nil || !r.Succeeded() {
		t.Fatalf("transferRemote: %v %+v", err, r)
	}
	return r
}

// messageID is the message a transferRemote's receipt dispatched.
func messageID(t *testing.T, r *simchain.Receipt) common.Hash {
	t.Helper()
	for _, l := range r.Logs {
		if l.Topics[0] == pulseroute.ABI().Events["DispatchId"].ID {
			return l.Topics[1]
		}
	}
	t.Fatalf("no DispatchId in %+v", r.Logs)
	return common.Hash{}
}

func (f *relayFixture) balance(t *testing.T, chainID uint64, holder, token common.Address) *big.Int {
	t.Helper()
	b, err := f.svc.Balance(context.Background(), chainID, holder, token)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *relayFixture) delivery(t *testing.T, chainID uint64, id common.Hash) (*simchain.Receipt, bool) {
	t.Helper()
	r, ok, err := f.svc.WarpDelivery(context.Background(), chainID, id)
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}

var sentAt = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// TestRelayerDeliversAfterTheBridgeTime sends USDC from Base to 369 and
// USDCh from 369 to Arbitrum by plain transferRemote calls (a user's own,
// no quote): nothing arrives a second before the bridge time has passed
// since the source block; at it, the relayer's transaction mints USDCh on
// 369 and releases USDC on Arbitrum to the recipients, with
// ReceivedTransferRemote and ProcessId(messageId), and later scans deliver
// nothing more.
func TestRelayerDeliversAfterTheBridgeTime(t *testing.T) {
	clk := &clock{t: sentAt}
	f := startRelayFixture(t, newMemStore(), clk)
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	in := f.transferRemote(t, 8453, 369, bob, big.NewInt(70_000_000))
	out := f.transferRemote(t, 369, 42161, bob, big.NewInt(30_000_000))
	inID, outID := messageID(t, in), messageID(t, out)
	usdchBefore, usdcBefore := f.balance(t, 369, bob, usdch), f.balance(t, 42161, bob, usdcArb)

	first, last := min(in.BlockTime, out.BlockTime), max(in.BlockTime, out.BlockTime)
	clk.set(time.Unix(int64(first), 0).Add(bridgeTime - time.Second))
	f.relay.Step()
	_, inDone := f.delivery(t, 369, inID)
	_, outDone := f.delivery(t, 42161, outID)
	if inDone || outDone || f.balance(t, 42161, bob, usdcArb).Cmp(usdcBefore) != 0 || f.balance(t, 369, bob, usdch).Cmp(usdchBefore) != 0 {
		t.Fatalf("delivered before the bridge time: 369 %v, Arbitrum %v", inDone, outDone)
	}
	clk.set(time.Unix(int64(last), 0).Add(bridgeTime))
	f.relay.Step()
	for _, tc := range []struct {
		chain   uint64
		id      common.Hash
		token   common.Address
		before  *big.Int
		amount  int64
		origin  uint64
		release bool
	}{
		{369, inID, usdch, usdchBefore, 70_000_000, 8453, false},
		{42161, outID, usdcArb, usdcBefore, 30_000_000, 369, true},
	} {
		d, ok := f.delivery(t, tc.chain, tc.id)
		if !ok || !d.Succeeded() || d.From != pulsesim.RelayerAddress {
			t.Fatalf("chain %d: delivery %+v %v", tc.chain, d, ok)
		}
		if got := new(big.Int).Sub(f.balance(t, tc.chain, bob, tc.token), tc.before); got.Cmp(big.NewInt(tc.amount)) != 0 {
			t.Errorf("chain %d: bob got %s, want %d", tc.chain, got, tc.amount)
		}
		ev := pulseroute.ABI().Events
		var received, processed bool
		for _, l := range d.Logs {
			switch l.Topics[0] {
			case ev["ReceivedTransferRemote"].ID:
				received = l.Topics[1] == common.BigToHash(new(big.Int).SetUint64(tc.origin)) &&
					l.Topics[2] == common.Hash(pulseroute.AddressToBytes32(bob)) && new(big.Int).SetBytes(l.Data).Int64() == tc.amount
			case ev["ProcessId"].ID:
				processed = l.Topics[1] == tc.id
			}
		}
		if !received || !processed {
			t.Errorf("chain %d: delivery logs %+v", tc.chain, d.Logs)
		}
	}
	ops369, ops42161 := f.store.count(369), f.store.count(42161)
	clk.set(clk.now().Add(time.Hour))
	f.relay.Step()
	f.relay.Step()
	if f.store.count(369) != ops369 || f.store.count(42161) != ops42161 {
		t.Fatalf("later scans changed the chains: %d→%d ops on 369, %d→%d on 42161", ops369, f.store.count(369), ops42161, f.store.count(42161))
	}
}

// TestRelayerDeliversOnceAcrossRestarts: a message sent before a restart
// whose bridge time had not passed is delivered by the relayer of the
// restarted service (which replays the chains' logs) and by it alone; a
// third start delivers nothing more, and a direct second attempt answers
// with the first delivery without mining.
func TestRelayerDeliversOnceAcrossRestarts(t *testing.T) {
	store, clk := newMemStore(), &clock{t: sentAt}
	f := startRelayFixture(t, store, clk)
	sent := f.transferRemote(t, 42161, 369, bob, big.NewInt(5_000_000))
	id := messageID(t, sent)
	f.relay.Step() // not due: nothing
	if _, ok := f.delivery(t, 369, id); ok {
		t.Fatal("delivered at once")
	}
	f.svc.Close()

	clk.set(sentAt.Add(2 * bridgeTime))
	f = startRelayFixture(t, store, clk)
	f.relay.Step()
	first, ok := f.delivery(t, 369, id)
	if !ok {
		t.Fatal("the restarted relayer did not deliver the message sent before the restart")
	}
	ops := store.count(369)
	f.svc.Close()

	f = startRelayFixture(t, store, clk)
	f.relay.Step()
	if again, ok := f.delivery(t, 369, id); !ok || again.TxHash != first.TxHash || store.count(369) != ops {
		t.Fatalf("after a second restart: delivery %v (first %s), %d ops (had %d)", again, first.TxHash.Hex(), store.count(369), ops)
	}
	m := pulsesim.WarpMessage{ID: id, Origin: 42161, Destination: 369, Recipient: common.Hash(pulseroute.AddressToBytes32(bob)),
		Amount: big.NewInt(5_000_000)}
	r, err := f.svc.Relay(context.Background(), m)
	if err != nil || r.TxHash != first.TxHash || store.count(369) != ops {
		t.Fatalf("a second attempt: %v %v, %d ops (had %d)", r, err, store.count(369), ops)
	}
}

// TestRelayerDeliversASignedTransfer: a transferRemote signed by an
// account's key and sent to the chain's node (as the transaction manager
// sends the operator's) is delivered like any other: USDCh burned on 369,
// USDC released on Arbitrum to the recipient once the bridge time has
// passed.
func TestRelayerDeliversASignedTransfer(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: sentAt}
	f := startRelayFixture(t, newMemStore(), clk)
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("relayer test operator")))
	sc, err := pulsesim.NewSandboxChain(testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	pay, _ := sc.QuoteGasPayment(ctx, 369, 42161)
	amount := big.NewInt(4_000_000)
	call, _ := pulseroute.TransferRemote(42161, bob, amount)
	usdch := common.HexToAddress(pulseroute.USDChAddress)
	raw, err := types.MustSignNewTx(key, types.LatestSignerForChainID(big.NewInt(369)), &types.DynamicFeeTx{ChainID: big.NewInt(369),
		GasFeeCap: big.NewInt(1e15), GasTipCap: big.NewInt(1), Gas: 400_000, To: &usdch, Value: pay, Data: call}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.svc.SendRaw(ctx, 369, raw)
	if err != nil {
		t.Fatal(err)
	}
	sent, ok := f.svc.Receipt(ctx, h)
	if !ok || !sent.Succeeded() {
		t.Fatalf("signed transferRemote: %+v", sent)
	}
	before := f.balance(t, 42161, bob, usdcArb)
	clk.set(time.Unix(int64(sent.BlockTime), 0).Add(bridgeTime))
	f.relay.Step()
	if _, ok := f.delivery(t, 42161, messageID(t, sent)); !ok {
		t.Fatal("the signed transfer was not delivered")
	}
	if got := new(big.Int).Sub(f.balance(t, 42161, bob, usdcArb), before); got.Cmp(amount) != 0 {
		t.Fatalf("bob got %s, want %s", got, amount)
	}
}
