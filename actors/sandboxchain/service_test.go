package sandboxchain_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
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

var (
	alice = common.HexToAddress("0x1111111111111111111111111111111111111111")
	bob   = common.HexToAddress("0x2222222222222222222222222222222222222222")
	// USDC on Arbitrum and on Base.
	usdcArb  = common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	usdcBase = common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
)

// memStore is an in-memory operation log that can be told to fail.
type memStore struct {
	mu   sync.Mutex
	ops  map[uint64][][]byte
	fail error
}

func newMemStore() *memStore { return &memStore{ops: map[uint64][][]byte{}} }

func (m *memStore) AppendChainOp(_ context.Context, chainID, seq uint64, op []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if seq != uint64(len(m.ops[chainID])+1) {
		return errors.New("out of sequence")
	}
	m.ops[chainID] = append(m.ops[chainID], op)
	return nil
}

func (m *memStore) ChainOps(_ context.Context, chainID uint64, fn func(uint64, []byte) error) error {
	m.mu.Lock()
	ops := append([][]byte(nil), m.ops[chainID]...)
	m.mu.Unlock()
	for i, op := range ops {
		if err := fn(uint64(i+1), op); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) count(chainID uint64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ops[chainID])
}

// stepClock advances a second per reading.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func start(t *testing.T, store sandboxchain.Store) (*sandboxchain.Service, sandboxchain.ReplayStats) {
	t.Helper()
	clock := &stepClock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	s, stats, err := sandboxchain.Start(context.Background(), testRegistry(t), store, sandboxchain.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, stats
}

func transferCall(to common.Address, amount *big.Int) []byte {
	data, err := simchain.ERC20ABI().Pack("transfer", to, amount)
	if err != nil {
		panic(err)
	}
	return data
}

func TestServiceSendFaucetCreditAndReads(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	s, _ := start(t, store)
	if len(s.ChainIDs()) < 40 {
		t.Fatalf("%d chains", len(s.ChainIDs()))
	}

	r, err := s.Send(ctx, 42161, alice, simchain.TxRequest{To: usdcArb, Data: transferCall(bob, big.NewInt(250))})
	if err != nil || !r.Succeeded() {
		t.Fatalf("transfer: %v %+v", err, r)
	}
	m, ok := s.Transaction(ctx, r.TxHash)
	if !ok || m.ChainID != 42161 || m.Transaction.From != alice || m.Receipt != r {
		t.Fatalf("lookup: %+v %v", m, ok)
	}
	if rc, ok := s.Receipt(ctx, r.TxHash); !ok || rc.TxHash != r.TxHash {
		t.Fatal("receipt lookup")
	}
	genesis := new(big.Int).Mul(big.NewInt(simchain.GenesisTokenUnits), big.NewInt(1e6))
	if got, _ := s.Balance(ctx, 42161, bob, usdcArb); got.Cmp(new(big.Int).Add(genesis, big.NewInt(250))) != 0 {
		t.Errorf("bob's USDC %s", got)
	}

	// A revert is a receipt, recorded like a success.
	rv, err := s.Send(ctx, 42161, alice, simchain.TxRequest{To: usdcArb, Data: transferCall(bob, new(big.Int).Mul(genesis, big.NewInt(2)))})
	if err != nil || rv.Succeeded() || rv.RevertReason != "ERC20: transfer amount exceeds balance" {
		t.Fatalf("revert: %v %+v", err, rv)
	}
	// A refusal mines nothing and records nothing.
	if _, err := s.Send(ctx, 42161, alice, simchain.TxRequest{To: bob, GasLimit: 100}); !errors.Is(err, simchain.ErrIntrinsicGas) {
		t.Fatalf("refused send: %v", err)
	}
	if n := store.count(42161); n != 2 {
		t.Fatalf("%d operations recorded, want 2", n)
	}

	fr, err := s.Faucet(ctx, 8453, bob, usdcBase, big.NewInt(5_000_000))
	if err != nil || !fr.Succeeded() {
		t.Fatalf("faucet: %v %+v", err, fr)
	}
	if got, _ := s.Balance(ctx, 8453, bob, usdcBase); got.Cmp(new(big.Int).Add(genesis, big.NewInt(5_000_000))) != 0 {
		t.Errorf("bob's Base USDC %s", got)
	}
	if m, ok := s.Transaction(ctx, fr.TxHash); !ok || m.ChainID != 8453 {
		t.Fatalf("faucet lookup on another chain: %+v", m)
	}
	cr, err := s.Credit(ctx, 8453, bob, common.Address{}, big.NewInt(77))
	if err != nil || !cr.Succeeded() {
		t.Fatalf("credit: %v %+v", err, cr)
	}
	bals, err := s.Balances(ctx, 8453, bob)
	if err != nil || bals[0].Token.Symbol != "ETH" || bals[0].Amount.Cmp(new(big.Int).Add(new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18)), big.NewInt(77))) != 0 {
		t.Fatalf("balances %v %v", bals, err)
	}
	logs, err := s.Logs(ctx, 42161, simchain.LogFilter{Addresses: []common.Address{usdcArb}})
	if err != nil || len(logs) != 1 || logs[0].TxHash != r.TxHash {
		t.Fatalf("logs %v %v", logs, err)
	}
	if head, err := s.Head(ctx, 8453); err != nil || head.Number != 2 {
		t.Fatalf("head %+v %v", head, err)
	}
	if _, err := s.Call(ctx, 8453, bob, usdcBase, []byte{0x31, 0x3c, 0xe5, 0x67}); err != nil { // decimals()
		t.Fatalf("call: %v", err)
	}
}

func TestServiceRefusals(t *testing.T) {
	ctx := context.Background()
	s, _ := start(t, newMemStore())
	million := new(big.Int).Mul(big.NewInt(sandboxnet.MaxFaucetUnits), big.NewInt(1e6))
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"send on Solana", func() error {
			_, err := s.Send(ctx, 1151111081099710, alice, simchain.TxRequest{To: bob})
			return err
		}, sandboxchain.ErrUnknownChain},
		{"faucet of an unknown token", func() error {
			_, err := s.Faucet(ctx, 42161, alice, usdcBase, big.NewInt(1))
			return err
		}, simchain.ErrUnknownToken},
		{"faucet over the bound", func() error {
			_, err := s.Faucet(ctx, 42161, alice, usdcArb, new(big.Int).Add(million, big.NewInt(1)))
			return err
		}, sandboxnet.ErrFaucetLimit},
		{"faucet of nothing", func() error {
			_, err := s.Faucet(ctx, 42161, alice, usdcArb, big.NewInt(0))
			return err
		}, sandboxnet.ErrFaucetLimit},
		{"balance of an unknown token", func() error {
			_, err := s.Balance(ctx, 42161, alice, usdcBase)
			return err
		}, simchain.ErrUnknownToken},
		{"balances on an unknown chain", func() error {
			_, err := s.Balances(ctx, 4242, alice)
			return err
		}, sandboxchain.ErrUnknownChain},
		{"send from a contract", func() error {
			_, err := s.Send(ctx, 42161, usdcArb, simchain.TxRequest{To: bob})
			return err
		}, simchain.ErrInvalidSender},
	}
	for _, tc := range cases {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, ok := s.Transaction(ctx, common.HexToHash("0x01")); ok {
		t.Error("an unknown hash was found")
	}
	s.Close()
	if _, err := s.Faucet(ctx, 42161, alice, usdcArb, big.NewInt(1)); !errors.Is(err, sandboxchain.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := s.Balance(ctx, 42161, alice, usdcArb); err != nil {
		t.Errorf("reads go on after Close: %v", err)
	}
}

// TestServiceUnrecordedChangeStopsTheChain: when the log refuses an
// append, the operation's chain takes no more changes (it holds a change
// the log lacks), other chains go on, and a restart from the log rebuilds
// it without the unrecorded change.
func TestServiceUnrecordedChangeStopsTheChain(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	s, _ := start(t, store)
	if _, err := s.Faucet(ctx, 42161, bob, usdcArb, big.NewInt(10)); err != nil {
		t.Fatal(err)
	}
	store.fail = errors.New("disk full")
	if _, err := s.Faucet(ctx, 42161, bob, usdcArb, big.NewInt(20)); !errors.Is(err, sandboxchain.ErrUnavailable) {
		t.Fatalf("unrecorded faucet: %v", err)
	}
	store.fail = nil
	if _, err := s.Faucet(ctx, 42161, bob, usdcArb, big.NewInt(30)); !errors.Is(err, sandboxchain.ErrUnavailable) {
		t.Fatalf("the chain took a change after an unrecorded one: %v", err)
	}
	if _, err := s.Faucet(ctx, 8453, bob, usdcBase, big.NewInt(1)); err != nil {
		t.Fatalf("another chain: %v", err)
	}
	restarted, stats := start(t, store)
	if stats.Ops != 2 || stats.Diverged != 0 {
		t.Fatalf("replay %+v", stats)
	}
	genesis := new(big.Int).Mul(big.NewInt(simchain.GenesisTokenUnits), big.NewInt(1e6))
	if got, _ := restarted.Balance(ctx, 42161, bob, usdcArb); got.Cmp(new(big.Int).Add(genesis, big.NewInt(10))) != 0 {
		t.Fatalf("after the restart bob holds %s, want only the recorded top-up", got)
	}
	if _, err := restarted.Faucet(ctx, 42161, bob, usdcArb, big.NewInt(30)); err != nil {
		t.Fatalf("the rebuilt chain: %v", err)
	}
}

// TestServiceSurvivesRestart records operations in a real store, reopens it
// and starts again: every hash, receipt, block and balance is back, and new
// operations continue the same history.
func TestServiceSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := start(t, store)
	var receipts []*simchain.Receipt
	do := func(r *simchain.Receipt, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		receipts = append(receipts, r)
	}
	do(s.Faucet(ctx, 42161, alice, usdcArb, big.NewInt(1_000_000)))
	do(s.Send(ctx, 42161, alice, simchain.TxRequest{To: usdcArb, Data: transferCall(bob, big.NewInt(400))}))
	do(s.Send(ctx, 42161, alice, simchain.TxRequest{To: usdcArb, Data: []byte{1, 2, 3, 4}}))
	do(s.Credit(ctx, 369, bob, common.Address{}, big.NewInt(5)))
	headBefore, _ := s.Head(ctx, 42161)
	balBefore, _ := s.Balances(ctx, 42161, bob)
	s.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store, err = pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	again, stats := start(t, store)
	if stats.Ops != len(receipts) || stats.Diverged != 0 {
		t.Fatalf("replay %+v", stats)
	}
	for _, r := range receipts {
		m, ok := again.Transaction(ctx, r.TxHash)
		if !ok || m.Receipt.BlockHash != r.BlockHash || m.Receipt.Status != r.Status || m.Receipt.RevertReason != r.RevertReason ||
			m.Receipt.GasUsed != r.GasUsed || len(m.Receipt.Logs) != len(r.Logs) {
			t.Errorf("%s after the restart: %+v", r.TxHash.Hex(), m.Receipt)
		}
	}
	if head, _ := again.Head(ctx, 42161); head.Hash != headBefore.Hash {
		t.Errorf("head %s, was %s", head.Hash.Hex(), headBefore.Hash.Hex())
	}
	balAfter, _ := again.Balances(ctx, 42161, bob)
	for i := range balBefore {
		if balBefore[i].Amount.Cmp(balAfter[i].Amount) != 0 {
			t.Errorf("%s: %s, was %s", balBefore[i].Token.Symbol, balAfter[i].Amount, balBefore[i].Amount)
		}
	}
	r, err := again.Send(ctx, 42161, alice, simchain.TxRequest{To: bob, Value: big.NewInt(1)})
	if err != nil || !r.Succeeded() || r.BlockNumber != headBefore.Number+1 {
		t.Fatalf("after the restart: %v %+v", err, r)
	}
}

// TestServiceConcurrentUse sends on several chains at once; each chain's
// history stays a chain (contiguous blocks, every hash found).
func TestServiceConcurrentUse(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	s, _ := start(t, store)
	chains := []uint64{1, 10, 42161, 8453}
	const each = 15
	var wg sync.WaitGroup
	hashes := make(chan common.Hash, len(chains)*each*2)
	for _, id := range chains {
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					r, err := s.Send(ctx, id, alice, simchain.TxRequest{To: bob, Value: big.NewInt(int64(i + 1))})
					if err != nil {
						t.Error(err)
						return
					}
					hashes <- r.TxHash
					_, _ = s.Balances(ctx, id, bob)
				}
			}()
		}
	}
	wg.Wait()
	close(hashes)
	n := 0
	for h := range hashes {
		if _, ok := s.Transaction(ctx, h); !ok {
			t.Errorf("%s not found", h.Hex())
		}
		n++
	}
	for _, id := range chains {
		if head, _ := s.Head(ctx, id); head.Number != 2*each || store.count(id) != 2*each {
			t.Errorf("chain %d: head %d, %d recorded", id, head.Number, store.count(id))
		}
	}
	if n != len(chains)*2*each {
		t.Errorf("%d hashes", n)
	}
}

// TestServiceSignedTransactionsSurviveRestart: signed transactions sent
// through the node, one mined, one stuck under a raised base fee, are in
// the log; after a restart the mined one is found by hash (the tracker's
// lookup), the stuck one still waits, and lowering the base fee mines it.
// Refusals are the node's words and are not recorded.
func TestServiceSignedTransactionsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := start(t, store)
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("service signer")))
	signer := types.LatestSignerForChainID(big.NewInt(42161))
	sign := func(nonce uint64, feeCap int64) []byte {
		raw, err := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(42161), Nonce: nonce,
			GasFeeCap: big.NewInt(feeCap), GasTipCap: big.NewInt(1), Gas: 21_000, To: &bob, Value: big.NewInt(3)}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	mined, err := s.SendRaw(ctx, 42161, sign(0, 1_000_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendRaw(ctx, 42161, sign(0, 2_000_000_000)); !errors.Is(err, simchain.ErrNonceTooLow) {
		t.Fatalf("a used nonce: %v", err)
	}
	if err := s.SetBaseFee(ctx, 42161, big.NewInt(100_000_000_000)); err != nil {
		t.Fatal(err)
	}
	stuck, err := s.SendRaw(ctx, 42161, sign(1, 2_000_000_000))
	if err != nil {
		t.Fatal(err)
	}
	rpc := func(s *sandboxchain.Service, method, param string) string {
		return string(s.JSONRPC(ctx, 42161, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":["`+param+`"]}`)))
	}
	if got := rpc(s, "eth_getTransactionReceipt", stuck.Hex()); got != `{"jsonrpc":"2.0","id":1,"result":null}` {
		t.Fatalf("the stuck transaction's receipt: %s", got)
	}
	s.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store, err = pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	again, stats := start(t, store)
	if stats.Ops != 3 || stats.Diverged != 0 {
		t.Fatalf("replay %+v", stats)
	}
	if m, ok := again.Transaction(ctx, mined); !ok || !m.Receipt.Succeeded() {
		t.Fatalf("the mined transaction after the restart: %v %+v", ok, m)
	}
	if got := rpc(again, "eth_getTransactionByHash", stuck.Hex()); !strings.Contains(got, `"blockNumber":null`) {
		t.Fatalf("the stuck transaction after the restart: %s", got)
	}
	if err := again.SetBaseFee(ctx, 42161, big.NewInt(1_000_000_000)); err != nil {
		t.Fatal(err)
	}
	if m, ok := again.Transaction(ctx, stuck); !ok || !m.Receipt.Succeeded() {
		t.Fatalf("the stuck transaction once the fee fell: %v", ok)
	}
}
