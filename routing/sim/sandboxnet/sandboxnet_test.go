package sandboxnet_test

import (
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

var loadRegistry = sync.OnceValues(registry.Load)

func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := loadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newChain(t *testing.T, id uint64) *sandboxnet.Chain {
	t.Helper()
	c, err := sandboxnet.New(sandboxnet.Config{Registry: testRegistry(t)}, id)
	if err != nil {
		t.Fatalf("chain %d: %v", id, err)
	}
	return c
}

var (
	alice = common.HexToAddress("0x1111111111111111111111111111111111111111")
	bob   = common.HexToAddress("0x2222222222222222222222222222222222222222")
)

func TestEveryEVMChainBuildsWithItsContracts(t *testing.T) {
	reg := testRegistry(t)
	contracts := pulseroute.DefaultContracts()
	ids := sandboxnet.ChainIDs(reg)
	if len(ids) < 40 {
		t.Fatalf("%d sandbox chains, want every EVM chain of the registry", len(ids))
	}
	for _, id := range ids {
		c := newChain(t, id)
		sim := c.Sim()
		if sim.Head().Number != 0 || sim.Head().Time != uint64(sandboxnet.GenesisTime.Unix()) {
			t.Errorf("chain %d: head %d at %d, want the genesis block at GenesisTime", id, sim.Head().Number, sim.Head().Time)
		}
		if _, ok := sim.Code(sandbox.RouterAddress(id)).(sandbox.RouterContract); !ok {
			t.Errorf("chain %d: no router", id)
		}
		if got := sim.Balance(common.Address{}, sandbox.RouterAddress(id)); got.Cmp(sandbox.RouterNativeReserve) != 0 {
			t.Errorf("chain %d: router reserve %s", id, got)
		}
		w, warp := contracts.WarpRoute(id)
		if warp {
			if _, ok := sim.Code(w.Router).(*pulsesim.WarpRouterContract); !ok {
				t.Errorf("chain %d: no warp router at %s", id, w.Router.Hex())
			}
		}
		sender, hasSender := contracts.SenderContract(id)
		if _, ok := sim.Code(sender).(*pulsesim.SenderContractCode); hasSender != ok {
			t.Errorf("chain %d: sender contract deployed %v, want %v", id, ok, hasSender)
		}
	}
}

func TestGenesisNative(t *testing.T) {
	reg := testRegistry(t)
	coins := func(n int64, dec int64) *big.Int {
		return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(dec), nil))
	}
	cases := []struct {
		chain uint64
		want  *big.Int
	}{
		{1, coins(100, 18)},           // 100 ETH is worth more than $10,000
		{369, coins(333_333_334, 18)}, // $10,000 of PLS at $0.00003
		{25, coins(100_000, 18)},      // $10,000 of CRO at $0.10
	}
	for _, tc := range cases {
		rc, _ := reg.Chain(tc.chain)
		got, err := sandboxnet.GenesisNative(rc)
		if err != nil || got.Cmp(tc.want) != 0 {
			t.Errorf("chain %d: %v %v, want %s", tc.chain, got, err, tc.want)
		}
		if bal := newChain(t, tc.chain).Sim().Balance(common.Address{}, alice); bal.Cmp(tc.want) != 0 {
			t.Errorf("chain %d: alice starts with %s, want %s", tc.chain, bal, tc.want)
		}
	}
}

func TestCheckFaucet(t *testing.T) {
	usdc := simchain.Token{Symbol: "USDC", Decimals: 6}
	limit := new(big.Int).Mul(big.NewInt(sandboxnet.MaxFaucetUnits), big.NewInt(1e6))
	cases := []struct {
		name   string
		amount *big.Int
		ok     bool
	}{
		{"one base unit", big.NewInt(1), true},
		{"the limit", limit, true},
		{"one above the limit", new(big.Int).Add(limit, big.NewInt(1)), false},
		{"zero", big.NewInt(0), false},
		{"negative", big.NewInt(-5), false},
		{"none", nil, false},
	}
	for _, tc := range cases {
		err := sandboxnet.CheckFaucet(usdc, tc.amount)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, sandboxnet.ErrFaucetLimit)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// ops is a history touching every kind of operation, a revert and a
// refusal.
func ops(t *testing.T, id uint64) []sandboxnet.Op {
	t.Helper()
	usdc, _ := testRegistry(t).TokenBySymbol(id, "USDC")
	token := common.HexToAddress(usdc.Address)
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 12, 0, s, 0, time.UTC) }
	transfer, _ := pulseroute.TransferRemote(369, bob, big.NewInt(5)) // to a plain account: does nothing
	return []sandboxnet.Op{
		{Kind: sandboxnet.OpFaucet, Time: at(0), Holder: alice, Token: token, Amount: big.NewInt(7_000_000)},
		{Kind: sandboxnet.OpSend, Time: at(3), From: alice, Tx: simchain.TxRequest{To: bob, Value: big.NewInt(1000)}},
		{Kind: sandboxnet.OpSend, Time: at(3), From: alice, Tx: simchain.TxRequest{To: sandbox.RouterAddress(id), Data: []byte{9, 9, 9, 9}}},
		{Kind: sandboxnet.OpSend, Time: at(4), From: alice, Tx: simchain.TxRequest{To: bob, Data: transfer, GasLimit: 1}}, // refused
		{Kind: sandboxnet.OpCredit, Time: at(9), Holder: bob, Token: common.Address{}, Amount: big.NewInt(42)},
	}
}

// TestReplayReproducesTheHistory applies a history to one chain and again
// to a freshly built one: the same receipts, hashes, head and balances.
func TestReplayReproducesTheHistory(t *testing.T) {
	const id = 42161
	apply := func(c *sandboxnet.Chain) []*simchain.Receipt {
		var out []*simchain.Receipt
		for _, op := range ops(t, id) {
			r, err := c.Apply(op)
			if r == nil && err == nil {
				t.Fatalf("%s: no receipt and no error", op.Kind)
			}
			out = append(out, r)
		}
		return out
	}
	first, second := newChain(t, id), newChain(t, id)
	a, b := apply(first), apply(second)
	for i := range a {
		switch {
		case (a[i] == nil) != (b[i] == nil):
			t.Fatalf("op %d: receipts %v and %v", i, a[i], b[i])
		case a[i] != nil && (a[i].TxHash != b[i].TxHash || a[i].BlockHash != b[i].BlockHash || a[i].Status != b[i].Status):
			t.Errorf("op %d: %s/%s and %s/%s", i, a[i].TxHash.Hex(), a[i].BlockHash.Hex(), b[i].TxHash.Hex(), b[i].BlockHash.Hex())
		}
	}
	if a[3] != nil {
		t.Error("a send under its intrinsic gas was mined")
	}
	if a[2].Succeeded() || a[2].RevertReason == "" {
		t.Errorf("the router call without a selector it knows succeeded: %+v", a[2])
	}
	if first.Sim().Head().Hash != second.Sim().Head().Hash || first.Sim().Head().Number != 4 {
		t.Errorf("heads %d %s and %s", first.Sim().Head().Number, first.Sim().Head().Hash.Hex(), second.Sim().Head().Hash.Hex())
	}
	// The block of the second send is stamped one second after the first's,
	// its op time being the same second.
	if b2, _ := first.Sim().BlockByNumber(2); b2.Time != uint64(time.Date(2026, 3, 1, 12, 0, 3, 0, time.UTC).Unix()) {
		t.Errorf("block 2 at %d", b2.Time)
	}
	if b3, _ := first.Sim().BlockByNumber(3); b3.Time != uint64(time.Date(2026, 3, 1, 12, 0, 4, 0, time.UTC).Unix()) {
		t.Errorf("block 3 at %d", b3.Time)
	}
	for _, holder := range []common.Address{alice, bob} {
		for _, tok := range first.Sim().Tokens() {
			if x, y := first.Sim().Balance(tok.Address, holder), second.Sim().Balance(tok.Address, holder); x.Cmp(y) != 0 {
				t.Errorf("%s of %s: %s and %s", tok.Symbol, holder.Hex(), x, y)
			}
		}
	}
	// Another time gives another block (a transaction hash does not
	// depend on time).
	other := newChain(t, id)
	op := ops(t, id)[0]
	op.Time = op.Time.Add(time.Hour)
	if r, _ := other.Apply(op); r.BlockHash == a[0].BlockHash {
		t.Error("an op at another time mined the same block")
	}
}

func TestApplyRefusesAnUnknownKind(t *testing.T) {
	c := newChain(t, 1)
	if r, err := c.Apply(sandboxnet.Op{Kind: "mint"}); r != nil || !errors.Is(err, sandboxnet.ErrUnknownOp) {
		t.Fatalf("unknown op: %v %v", r, err)
	}
}

// TestReplayReproducesSignedTransactions records a history of signed
// transactions and base fees (one transaction held back by the base fee
// and mined when it falls, one waiting for a nonce gap at the end) through
// the op records, and replays it on a fresh chain: the same hashes,
// blocks, nonces and queue.
func TestReplayReproducesSignedTransactions(t *testing.T) {
	const id = 42161
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("replay key")))
	me := crypto.PubkeyToAddress(key.PublicKey)
	signer := types.LatestSignerForChainID(big.NewInt(id))
	sign := func(nonce uint64, feeCap int64) []byte {
		tx := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(id), Nonce: nonce,
			GasFeeCap: big.NewInt(feeCap), GasTipCap: big.NewInt(1), Gas: 21_000, To: &bob, Value: big.NewInt(5)})
		raw, err := tx.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	at := func(s int) time.Time { return time.Date(2026, 3, 1, 12, 0, s, 0, time.UTC) }
	history := []sandboxnet.Op{
		{Kind: sandboxnet.OpBaseFee, Time: at(0), Amount: big.NewInt(1_000_000_000_000)},
		{Kind: sandboxnet.OpRaw, Time: at(1), Raw: sign(0, 2_000_000_000)}, // waits for the fee
		{Kind: sandboxnet.OpSend, Time: at(2), From: alice, Tx: simchain.TxRequest{To: bob}},
		{Kind: sandboxnet.OpBaseFee, Time: at(3), Amount: big.NewInt(1_000_000_000)}, // mines it
		{Kind: sandboxnet.OpRaw, Time: at(4), Raw: sign(2, 5_000_000_000)},           // waits for nonce 1
	}
	first := newChain(t, id)
	var recs [][]byte
	for i, op := range history {
		a, err := first.Do(op)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		op.TxHash = a.Hash
		rec, err := sandboxnet.EncodeOp(op)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
		if i == 3 && (len(a.Mined) != 1 || a.Mined[0].TxHash != crypto.Keccak256Hash(history[1].Raw)) {
			t.Fatalf("lowering the base fee mined %d transactions", len(a.Mined))
		}
	}
	second := newChain(t, id)
	for i, rec := range recs {
		op, err := sandboxnet.DecodeOp(rec)
		if err != nil {
			t.Fatal(err)
		}
		if a, err := second.Do(op); err != nil || a.Hash != op.TxHash {
			t.Fatalf("replay of op %d: %v, hash %s want %s", i, err, a.Hash.Hex(), op.TxHash.Hex())
		}
	}
	f, s := first.Sim(), second.Sim()
	if f.Head().Hash != s.Head().Hash || f.Head().Number != 2 || s.Nonce(me) != 1 || s.PendingNonce(me) != 1 {
		t.Fatalf("heads %d/%s and %d/%s, nonce %d pending %d", f.Head().Number, f.Head().Hash.Hex(), s.Head().Number, s.Head().Hash.Hex(), s.Nonce(me), s.PendingNonce(me))
	}
	if _, ok := s.Queued(crypto.Keccak256Hash(history[4].Raw)); !ok {
		t.Fatal("the transaction waiting for its nonce gap is not queued after the replay")
	}
	if s.BaseFee().Cmp(big.NewInt(1_000_000_000)) != 0 {
		t.Fatalf("base fee %s after the replay", s.BaseFee())
	}
}
