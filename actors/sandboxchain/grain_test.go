package sandboxchain

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/postgres"
)

// srv is the test binary's PostgreSQL server, for the chain grains' log
// in the store every node of a cluster shares.
var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &srv)) }

var (
	gAlice = common.HexToAddress("0x1111111111111111111111111111111111111111")
	gBob   = common.HexToAddress("0x2222222222222222222222222222222222222222")
	// USDC on Arbitrum and on Base.
	gUSDCArb  = common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	gUSDCBase = common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
)

var gRegistry = sync.OnceValues(registry.Load)

func reg(t *testing.T) *registry.Registry {
	t.Helper()
	r, err := gRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setClock is a clock the test sets before each operation, so that two
// owners given the same operations mine the same transactions.
type setClock struct{ ns atomic.Int64 }

func (c *setClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *setClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func newSetClock(t time.Time) *setClock { c := &setClock{}; c.set(t); return c }

// logStore is an in-memory operation log with the stores' promise: a
// sequence already taken is store.ErrExists.
type logStore struct {
	mu  sync.Mutex
	ops map[uint64]map[uint64][]byte
}

func newLogStore() *logStore { return &logStore{ops: map[uint64]map[uint64][]byte{}} }

func (s *logStore) AppendChainOp(_ context.Context, chainID, seq uint64, rec []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ops[chainID] == nil {
		s.ops[chainID] = map[uint64][]byte{}
	}
	if _, taken := s.ops[chainID][seq]; taken {
		return store.ErrExists
	}
	s.ops[chainID][seq] = rec
	return nil
}

func (s *logStore) ChainOps(_ context.Context, chainID uint64, fn func(uint64, []byte) error) error {
	s.mu.Lock()
	n := uint64(len(s.ops[chainID]))
	recs := make([][]byte, n)
	for i := range n {
		recs[i] = s.ops[chainID][i+1]
	}
	s.mu.Unlock()
	for i, rec := range recs {
		if err := fn(uint64(i+1), rec); err != nil {
			return err
		}
	}
	return nil
}

func (s *logStore) count(chainID uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ops[chainID])
}

// fakeCluster places every chain grain in this process, as one node would
// host them all, and delivers each request twice, as a retry after a
// per-try timeout would; ErrStale drops the activation and retries on a
// new one, as cluster.Node.Call does.
type fakeCluster struct {
	grains *Grains
	mu     sync.Mutex
	active map[string]*Grain
	calls  int
}

func (f *fakeCluster) Call(ctx context.Context, kind, identity, method string, body []byte) ([]byte, error) {
	if kind != GrainKind {
		return nil, errors.New("unknown kind " + kind)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	for range 3 {
		g := f.active[identity]
		if g == nil {
			var err error
			if g, err = f.grains.Activate(ctx, identity); err != nil {
				return nil, err
			}
			f.active[identity] = g
		}
		out, err := g.Receive(ctx, method, body)
		if errors.Is(err, cluster.ErrStale) {
			delete(f.active, identity)
			continue
		}
		if err != nil {
			return nil, err
		}
		again, err := g.Receive(ctx, method, body)
		if err != nil || string(again) != string(out) {
			return nil, errors.New("a repeated request answered differently: " + string(out) + " then " + string(again))
		}
		return out, nil
	}
	return nil, errors.New("stale three times")
}

// deactivate drops every activation, as a restart of the nodes would.
func (f *fakeCluster) deactivate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.active)
}

func erc20Transfer(to common.Address, amount *big.Int) []byte {
	data, err := simchain.ERC20ABI().Pack("transfer", to, amount)
	if err != nil {
		panic(err)
	}
	return data
}

// TestRemoteAnswersAsServiceDoes runs the same operations on a single
// node's Service and on the chain grains through Remote (every request
// delivered twice): the same receipts, the same refusals (which the edge
// tells apart with errors.Is), the same reads, one operation logged per
// change; a new activation replays the log and knows the requests it
// answered.
func TestRemoteAnswersAsServiceDoes(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clock := newSetClock(t0)
	svcLog, grainLog := newLogStore(), newLogStore()
	svc, _, err := Start(ctx, reg(t), svcLog, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	grains, err := NewGrains(reg(t), grainLog, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{grains: grains, active: map[string]*Grain{}}
	remote := NewRemote(reg(t), fc, time.Minute, nil)

	genesis := new(big.Int).Mul(big.NewInt(simchain.GenesisTokenUnits), big.NewInt(1e6))
	overFaucet := new(big.Int).Add(new(big.Int).Mul(big.NewInt(sandboxnet.MaxFaucetUnits), big.NewInt(1e6)), big.NewInt(1))
	type owner interface {
		Send(context.Context, uint64, common.Address, simchain.TxRequest) (*simchain.Receipt, error)
		Faucet(context.Context, uint64, common.Address, common.Address, *big.Int) (*simchain.Receipt, error)
		CreditOnce(context.Context, uint64, string, common.Address, common.Address, *big.Int) (*simchain.Receipt, error)
	}
	cases := []struct {
		name    string
		chainID uint64
		op      func(o owner) (*simchain.Receipt, error)
		want    error // a refusal; nil: a receipt
	}{
		{"transfer", 42161, func(o owner) (*simchain.Receipt, error) {
			return o.Send(ctx, 42161, gAlice, simchain.TxRequest{To: gUSDCArb, Data: erc20Transfer(gBob, big.NewInt(250))})
		}, nil},
		{"reverted transfer", 42161, func(o owner) (*simchain.Receipt, error) {
			return o.Send(ctx, 42161, gAlice, simchain.TxRequest{To: gUSDCArb, Data: erc20Transfer(gBob, new(big.Int).Mul(genesis, big.NewInt(2)))})
		}, nil},
		{"refused send", 42161, func(o owner) (*simchain.Receipt, error) {
			return o.Send(ctx, 42161, gAlice, simchain.TxRequest{To: gBob, GasLimit: 100})
		}, simchain.ErrIntrinsicGas},
		{"send on Solana", 1151111081099710, func(o owner) (*simchain.Receipt, error) {
			return o.Send(ctx, 1151111081099710, gAlice, simchain.TxRequest{To: gBob})
		}, ErrUnknownChain},
		{"faucet", 8453, func(o owner) (*simchain.Receipt, error) {
			return o.Faucet(ctx, 8453, gBob, gUSDCBase, big.NewInt(5_000_000))
		}, nil},
		{"faucet of an unknown token", 42161, func(o owner) (*simchain.Receipt, error) {
			return o.Faucet(ctx, 42161, gBob, gUSDCBase, big.NewInt(1))
		}, simchain.ErrUnknownToken},
		{"faucet over the bound", 42161, func(o owner) (*simchain.Receipt, error) {
			return o.Faucet(ctx, 42161, gBob, gUSDCArb, overFaucet)
		}, sandboxnet.ErrFaucetLimit},
		{"credit", 8453, func(o owner) (*simchain.Receipt, error) {
			return o.CreditOnce(ctx, 8453, "bridge/0x01", gBob, common.Address{}, big.NewInt(77))
		}, nil},
	}
	var mined []common.Hash
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock.set(t0.Add(time.Duration(i+1) * time.Second))
			want, wantErr := tc.op(svc)
			got, gotErr := tc.op(remote)
			if tc.want != nil {
				if !errors.Is(wantErr, tc.want) || !errors.Is(gotErr, tc.want) {
					t.Fatalf("service %v, remote %v; want both %v", wantErr, gotErr, tc.want)
				}
				if wantErr.Error() != gotErr.Error() {
					t.Errorf("remote says %q, the service %q", gotErr, wantErr)
				}
				return
			}
			if wantErr != nil || gotErr != nil {
				t.Fatalf("service %v, remote %v", wantErr, gotErr)
			}
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if string(wj) != string(gj) {
				t.Fatalf("remote receipt\n%s\nservice's\n%s", gj, wj)
			}
			mined = append(mined, got.TxHash)
		})
	}
	for _, id := range []uint64{42161, 8453} {
		if s, g := svcLog.count(id), grainLog.count(id); s != g {
			t.Errorf("chain %d: %d operations logged by the grain, %d by the service", id, g, s)
		}
	}

	reads := func(t *testing.T) {
		t.Helper()
		for _, h := range mined {
			want, _ := svc.Transaction(ctx, h)
			got, ok := remote.Transaction(ctx, h)
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if !ok || string(wj) != string(gj) {
				t.Errorf("transaction %s: remote %s, service %s", h.Hex(), gj, wj)
			}
		}
		if _, ok := remote.Transaction(ctx, common.HexToHash("0x0bad")); ok {
			t.Error("a transaction never mined found")
		}
		for _, c := range []struct {
			chainID uint64
			token   common.Address
		}{{42161, gUSDCArb}, {8453, gUSDCBase}, {8453, common.Address{}}} {
			want, _ := svc.Balances(ctx, c.chainID, gBob)
			got, err := remote.Balances(ctx, c.chainID, gBob)
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if err != nil || string(wj) != string(gj) {
				t.Errorf("chain %d balances: remote %s %v, service %s", c.chainID, gj, err, wj)
			}
			wb, _ := svc.Balance(ctx, c.chainID, gBob, c.token)
			gb, err := remote.Balance(ctx, c.chainID, gBob, c.token)
			if err != nil || wb.Cmp(gb) != 0 {
				t.Errorf("chain %d balance of %s: remote %s %v, service %s", c.chainID, c.token.Hex(), gb, err, wb)
			}
		}
	}
	reads(t)

	// Every activation gone (the nodes restarted): the grains replay their
	// logs, answer the same, and a repeated credit mines nothing.
	fc.deactivate()
	reads(t)
	before := grainLog.count(8453)
	again, err := remote.CreditOnce(ctx, 8453, "bridge/0x01", gBob, common.Address{}, big.NewInt(77))
	if err != nil || again.TxHash != mined[len(mined)-1] || grainLog.count(8453) != before {
		t.Fatalf("repeated credit after a replay: %v %v, %d operations (had %d)", again, err, grainLog.count(8453), before)
	}
}

// TestChainGrainAppendsAreFencedInPostgres: two activations of one chain
// on the shared PostgreSQL store, as two nodes may briefly hold during a
// topology change. Both replayed the same log; the first to append takes
// the sequence number, and the other's append is refused by the log's
// unique sequence: it answers cluster.ErrStale (its activation stops) and
// logs nothing. A fresh activation replays the winner's operation,
// answers its request again without mining, and applies the stale one's
// request; the winner, now behind the log, is stale in turn.
func TestChainGrainAppendsAreFencedInPostgres(t *testing.T) {
	ctx := context.Background()
	store, err := postgres.Open(ctx, srv.DSN(t), postgres.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	clock := newSetClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	grains, err := NewGrains(reg(t), store, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	const chain = "8453"
	activate := func() *Grain {
		t.Helper()
		g, err := grains.Activate(ctx, chain)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	faucet := func(id string) []byte {
		b, err := json.Marshal(changeRequest{ID: id, Kind: sandboxnet.OpFaucet, Holder: gBob, Token: gUSDCBase, Amount: big.NewInt(1_000_000)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	receipt := func(t *testing.T, out []byte) *simchain.Receipt {
		t.Helper()
		var rep grainReply
		if err := json.Unmarshal(out, &rep); err != nil || rep.Receipt == nil || rep.Err != nil {
			t.Fatalf("answer %s: %v", out, err)
		}
		return rep.Receipt
	}
	logged := func() []string {
		var reqs []string
		if err := store.ChainOps(ctx, 8453, func(_ uint64, rec []byte) error {
			op, err := sandboxnet.DecodeOp(rec)
			reqs = append(reqs, op.Request)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return reqs
	}

	a, b := activate(), activate()
	first := receipt(t, must(a.Receive(ctx, grainChange, faucet("faucet/a"))))
	if _, err := b.Receive(ctx, grainChange, faucet("faucet/b")); !errors.Is(err, cluster.ErrStale) {
		t.Fatalf("the second activation's append: %v, want ErrStale", err)
	}
	if got := logged(); len(got) != 1 || got[0] != "faucet/a" {
		t.Fatalf("logged %v, want the first activation's operation alone", got)
	}

	c := activate()
	if again := receipt(t, must(c.Receive(ctx, grainChange, faucet("faucet/a")))); again.TxHash != first.TxHash {
		t.Fatalf("a replayed request answered %s, first %s", again.TxHash.Hex(), first.TxHash.Hex())
	}
	receipt(t, must(c.Receive(ctx, grainChange, faucet("faucet/b"))))
	if got := logged(); len(got) != 2 || got[1] != "faucet/b" {
		t.Fatalf("logged %v, want faucet/a then faucet/b", got)
	}
	var rep grainReply
	if err := json.Unmarshal(must(c.Receive(ctx, grainBalance, must(json.Marshal(readRequest{Holder: gBob, Token: gUSDCBase})))), &rep); err != nil {
		t.Fatal(err)
	}
	genesis := new(big.Int).Mul(big.NewInt(simchain.GenesisTokenUnits), big.NewInt(1e6))
	if want := new(big.Int).Add(genesis, big.NewInt(2_000_000)); rep.Amount == nil || rep.Amount.Cmp(want) != 0 {
		t.Fatalf("balance after both top-ups %v, want %s", rep.Amount, want)
	}
	if _, err := a.Receive(ctx, grainChange, faucet("faucet/c")); !errors.Is(err, cluster.ErrStale) {
		t.Fatalf("the first activation, behind the log: %v, want ErrStale", err)
	}
	if got := logged(); len(got) != 2 {
		t.Fatalf("logged %v after a stale append", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// failingCaller answers every call with err, or waits for the call's
// context to end when err is nil.
type failingCaller struct {
	err   error
	calls atomic.Int32
}

func (f *failingCaller) Call(ctx context.Context, _, _, _ string, _ []byte) ([]byte, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRemoteFailures: what the edge sees when the cluster cannot answer
// (ErrUnavailable, which it answers 503), when a grain could not read a
// request (a fault, not an outage), and for a chain that is not a sandbox
// chain (refused without a call).
func TestRemoteFailures(t *testing.T) {
	cases := []struct {
		name        string
		caller      *failingCaller
		chainID     uint64
		unavailable bool
		unknown     bool
		calls       int32
	}{
		{name: "no owner answers in time", caller: &failingCaller{}, chainID: 8453, unavailable: true, calls: 1},
		{name: "the cluster gave up", caller: &failingCaller{err: errors.New("cluster: no member in the topology")}, chainID: 8453, unavailable: true, calls: 1},
		{name: "the grain refused the request", caller: &failingCaller{err: &cluster.RemoteError{Msg: "sandboxchain: change request: bad"}}, chainID: 8453, calls: 1},
		{name: "not a sandbox chain", caller: &failingCaller{}, chainID: 1151111081099710, unknown: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRemote(reg(t), tc.caller, 50*time.Millisecond, nil)
			_, err := r.Faucet(context.Background(), tc.chainID, gBob, gUSDCBase, big.NewInt(1))
			if err == nil || errors.Is(err, ErrUnavailable) != tc.unavailable || errors.Is(err, ErrUnknownChain) != tc.unknown {
				t.Fatalf("faucet: %v; want unavailable %v, unknown chain %v", err, tc.unavailable, tc.unknown)
			}
			if n := tc.caller.calls.Load(); n != tc.calls {
				t.Fatalf("%d grain calls, want %d", n, tc.calls)
			}
		})
	}
	// A caller's own end is its error, not the chain's unavailability.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewRemote(reg(t), &failingCaller{}, time.Minute, nil)
	if _, err := r.Balances(ctx, 8453, gBob); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("balances with an ended context: %v", err)
	}
}

// deliveries is a DeliveryStore that can forget, as a crash between a
// credit and its record would.
type deliveries struct {
	mu sync.Mutex
	m  map[string]string
}

func (d *deliveries) SandboxDelivery(_ context.Context, ref string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.m[ref]; ok {
		return h, nil
	}
	return "", store.ErrNotFound
}

func (d *deliveries) PutSandboxDelivery(_ context.Context, ref, h string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[ref] = h
	return nil
}

func (d *deliveries) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.m)
}

// TestLedgerOverBothOwners: the trackers' ledger over a single node's
// Service and over the chain grains reads a transaction's outcome on its
// own chain only, and delivers once per reference; when the delivery's
// record is lost (a crash right after the credit), the grains still know
// the credit by its reference and mine nothing again, where one process
// accepts crediting twice.
func TestLedgerOverBothOwners(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		make func(t *testing.T) (Chains, *logStore)
		// onceAcrossLoss: a delivery repeated after its record was lost
		// mines nothing.
		onceAcrossLoss bool
	}{
		{"service", func(t *testing.T) (Chains, *logStore) {
			l := newLogStore()
			svc, _, err := Start(ctx, reg(t), l, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return svc, l
		}, false},
		{"chain grains", func(t *testing.T) (Chains, *logStore) {
			l := newLogStore()
			grains, err := NewGrains(reg(t), l, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return NewRemote(reg(t), &fakeCluster{grains: grains, active: map[string]*Grain{}}, time.Minute, nil), l
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chains, log := tc.make(t)
			refs := &deliveries{m: map[string]string{}}
			l := NewLedger(chains, refs, reg(t))
			h, err := l.Deliver(ctx, 8453, "bridge/1", gBob.Hex(), gUSDCBase.Hex(), big.NewInt(42))
			if err != nil {
				t.Fatal(err)
			}
			found, ok, _, _, err := l.Outcome(ctx, 8453, h)
			if err != nil || !found || !ok {
				t.Fatalf("outcome of the delivery on its chain: %v %v %v", found, ok, err)
			}
			if found, _, _, _, err := l.Outcome(ctx, 10, h); err != nil || found {
				t.Fatalf("the delivery found on another chain: %v %v", found, err)
			}
			if again, err := l.Deliver(ctx, 8453, "bridge/1", gBob.Hex(), gUSDCBase.Hex(), big.NewInt(42)); err != nil || again != h || log.count(8453) != 1 {
				t.Fatalf("repeated delivery: %s %v, %d operations", again, err, log.count(8453))
			}
			refs.forget()
			again, err := l.Deliver(ctx, 8453, "bridge/1", gBob.Hex(), gUSDCBase.Hex(), big.NewInt(42))
			if err != nil {
				t.Fatal(err)
			}
			if once := again == h && log.count(8453) == 1; once != tc.onceAcrossLoss {
				t.Fatalf("delivery after its record was lost: %s (first %s), %d operations; want once %v", again, h, log.count(8453), tc.onceAcrossLoss)
			}
		})
	}
}

// TestRemoteNodeAnswersAsServiceDoes sends the same JSON-RPC requests to a
// single node's Service and to the chain grain through Remote (every
// request delivered twice): signed transactions, one stuck under a raised
// base fee and replaced, reads and refusals answer byte for byte alike,
// and a new activation replays the signed transactions and base fees.
func TestRemoteNodeAnswersAsServiceDoes(t *testing.T) {
	ctx := context.Background()
	clock := newSetClock(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	svc, _, err := Start(ctx, reg(t), newLogStore(), Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	grains, err := NewGrains(reg(t), newLogStore(), Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{grains: grains, active: map[string]*Grain{}}
	remote := NewRemote(reg(t), fc, time.Minute, nil)

	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("grain node key")))
	signer := types.LatestSignerForChainID(big.NewInt(42161))
	raw := func(nonce uint64, feeCap, tip int64) string {
		b, err := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(42161), Nonce: nonce,
			GasFeeCap: big.NewInt(feeCap), GasTipCap: big.NewInt(tip), Gas: 21_000, To: &gBob, Value: big.NewInt(9)}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return hexutil.Encode(b)
	}
	me := crypto.PubkeyToAddress(key.PublicKey).Hex()
	req := func(method string, params ...any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		return string(b)
	}
	steps := []struct {
		baseFee int64 // set first, when not zero
		body    string
	}{
		{body: req("eth_sendRawTransaction", raw(0, 100_000_000, 1))},
		{body: req("eth_sendRawTransaction", raw(0, 200_000_000, 1))},
		{baseFee: 10_000_000_000, body: req("eth_sendRawTransaction", raw(1, 100_000_000, 1))},
		{body: "[" + req("eth_getTransactionCount", me, "latest") + "," + req("eth_getTransactionCount", me, "pending") + "]"},
		{body: req("eth_sendRawTransaction", raw(1, 105_000_000, 2))},
		{body: req("eth_sendRawTransaction", raw(1, 20_000_000_000, 2))},
		{body: req("eth_getBlockByNumber", "latest", true)},
		{body: req("eth_getLogs", map[string]any{"fromBlock": "0x0"})},
		{body: req("eth_mine")},
	}
	for i, st := range steps {
		clock.set(clock.Now().Add(time.Second))
		if st.baseFee != 0 {
			if err := svc.SetBaseFee(ctx, 42161, big.NewInt(st.baseFee)); err != nil {
				t.Fatal(err)
			}
			if err := remote.SetBaseFee(ctx, 42161, big.NewInt(st.baseFee)); err != nil {
				t.Fatal(err)
			}
		}
		want := svc.JSONRPC(ctx, 42161, []byte(st.body))
		got := remote.JSONRPC(ctx, 42161, []byte(st.body))
		if string(got) != string(want) {
			t.Fatalf("step %d: %s\nservice: %s\nremote:  %s", i, st.body, want, got)
		}
	}
	// A new activation replays the log: the same head.
	head := req("eth_getBlockByNumber", "latest", false)
	before := remote.JSONRPC(ctx, 42161, []byte(head))
	fc.deactivate()
	if after := remote.JSONRPC(ctx, 42161, []byte(head)); string(after) != string(before) || !strings.Contains(string(after), `"number":"0x2"`) {
		t.Fatalf("after a new activation: %s, was %s", after, before)
	}
}
