package evmrpc

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/internal/standin/kit"
	"github.com/swapgate/swapgate/routing/adapters/gasrpc"
	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

var (
	usdch = common.HexToAddress(pulseroute.USDChAddress)
	wpls  = common.HexToAddress(pulseroute.WPLSAddress)
	hex   = common.HexToAddress("0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39")
)

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func dial(t *testing.T, base string, chain uint64) *ethclient.Client {
	t.Helper()
	c, err := ethclient.Dial(URL(base, chain))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Chain id and head answer per chain.
func TestChainIDAndHead(t *testing.T) {
	s, base := start(t, Config{})
	for _, id := range []uint64{ChainPulse, ChainArbitrum} {
		c := dial(t, base, id)
		got, err := c.ChainID(context.Background())
		if err != nil || got.Uint64() != id {
			t.Errorf("chain %d: eth_chainId %v %v", id, got, err)
		}
		n, err := c.BlockNumber(context.Background())
		if err != nil || n != DefaultBlockNumber {
			t.Errorf("chain %d: eth_blockNumber %d %v", id, n, err)
		}
	}
	if err := s.SetBlockNumber(ChainArbitrum, 7); err != nil {
		t.Fatal(err)
	}
	if n, _ := dial(t, base, ChainArbitrum).BlockNumber(context.Background()); n != 7 {
		t.Errorf("after SetBlockNumber: %d", n)
	}
	if _, err := ethclient.Dial(URL(base, 1)); err == nil {
		if _, err := dial(t, base, 1).ChainID(context.Background()); err == nil {
			t.Error("chain 1 is not served but answered")
		}
	}
}

// quoteGasPayment answers on the warp-route routers through pulseroute's
// reader, and nowhere else.
func TestQuoteGasPayment(t *testing.T) {
	_, base := start(t, Config{GasPayments: map[uint64]*big.Int{ChainArbitrum: big.NewInt(123_456)}})
	contracts := pulseroute.DefaultContracts()
	arb, _ := contracts.WarpRoute(ChainArbitrum)
	cases := []struct {
		name    string
		chain   uint64
		router  common.Address
		dest    uint32
		want    int64
		wantErr bool
	}{
		{"arbitrum to pulsechain", ChainArbitrum, arb.Router, 369, 123_456, false},
		{"pulsechain outbound", ChainPulse, contracts.USDCh().Router, 42161, -1, false},
		{"not the router", ChainArbitrum, usdch, 369, 0, true},
		{"to itself", ChainArbitrum, arb.Router, 42161, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pulserpc.QuoteGasPayment(context.Background(), dial(t, base, tc.chain), tc.router, tc.dest)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want >= 0 && got.Int64() != tc.want || got.Sign() <= 0 {
				t.Errorf("got %v, want %d", got, tc.want)
			}
		})
	}
}

// getAmountsOut follows the constant-product formula with the 0.29% fee,
// hop by hop; a hop without a pool reverts.
func TestGetAmountsOut(t *testing.T) {
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	pools := []Pool{
		{A: wpls, B: usdch, ReserveA: new(big.Int).Mul(big.NewInt(1_000_000), e18), ReserveB: big.NewInt(1_000_000_000)},
		{A: hex, B: usdch, ReserveA: big.NewInt(1_000_000_000_000), ReserveB: big.NewInt(1_000_000_000)},
	}
	_, base := start(t, Config{Pools: pools})
	c := dial(t, base, ChainPulse)
	router := common.HexToAddress(pulseroute.PulseXRouterAddress)
	// 1000 USDCh into a 1000 USDCh : 1e6 WPLS pool: 1000·9971·1e24 /
	// (1e9·10000 + 1000·9971)... in base units.
	in := big.NewInt(1_000_000_000)
	want1 := new(big.Int).Mul(new(big.Int).Mul(in, big.NewInt(9971)), pools[0].ReserveA)
	want1.Quo(want1, new(big.Int).Add(new(big.Int).Mul(pools[0].ReserveB, big.NewInt(10_000)), new(big.Int).Mul(in, big.NewInt(9971))))
	got, err := pulserpc.GetAmountsOut(context.Background(), c, router, in, []common.Address{usdch, wpls})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Cmp(in) != 0 || got[1].Cmp(want1) != 0 {
		t.Errorf("amounts %v, want [%v %v]", got, in, want1)
	}
	two, err := pulserpc.GetAmountsOut(context.Background(), c, router, new(big.Int).Mul(big.NewInt(1000), e18), []common.Address{wpls, usdch, hex})
	if err != nil || len(two) != 3 || two[2].Sign() <= 0 {
		t.Errorf("two hops: %v %v", two, err)
	}
	if _, err := pulserpc.GetAmountsOut(context.Background(), c, router, in, []common.Address{wpls, hex}); err == nil {
		t.Error("a hop without a pool did not fail")
	}
	if _, err := pulserpc.GetAmountsOut(context.Background(), dial(t, base, ChainArbitrum), router, in, []common.Address{usdch, wpls}); err == nil {
		t.Error("PulseX answered on Arbitrum")
	}
}

// getAmountsIn reads the same pools backwards: the input it gives buys at
// least the output asked for, one unit less does not, and an output beyond
// the pool reverts.
func TestGetAmountsIn(t *testing.T) {
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	pools := []Pool{
		{A: wpls, B: usdch, ReserveA: new(big.Int).Mul(big.NewInt(1_000_000), e18), ReserveB: big.NewInt(1_000_000_000)},
		{A: hex, B: usdch, ReserveA: big.NewInt(1_000_000_000_000), ReserveB: big.NewInt(1_000_000_000)},
	}
	_, base := start(t, Config{Pools: pools})
	c := dial(t, base, ChainPulse)
	router := common.HexToAddress(pulseroute.PulseXRouterAddress)
	ctx := context.Background()
	for _, path := range [][]common.Address{{usdch, wpls}, {wpls, usdch, hex}} {
		want := new(big.Int).Mul(big.NewInt(1234), e18)
		if path[len(path)-1] == hex {
			want = big.NewInt(5_000_000)
		}
		ins, err := pulserpc.GetAmountsIn(ctx, c, router, want, path)
		if err != nil || len(ins) != len(path) || ins[len(ins)-1].Cmp(want) != 0 {
			t.Fatalf("%v: %v %v", path, ins, err)
		}
		outs, err := pulserpc.GetAmountsOut(ctx, c, router, ins[0], path)
		if err != nil || outs[len(outs)-1].Cmp(want) < 0 {
			t.Errorf("%v: %s buys %v, want at least %s", path, ins[0], outs, want)
		}
	}
	if _, err := pulserpc.GetAmountsIn(ctx, c, router, new(big.Int).Mul(big.NewInt(2_000_000), e18), []common.Address{usdch, wpls}); err == nil {
		t.Error("an output beyond the pool did not revert")
	}
}

// The default pools price chain 369's tokens at the price table: 1 USDCh
// buys about a dollar of WPLS.
func TestDefaultPools(t *testing.T) {
	prices := kit.NewTable([]kit.Token{
		{ChainID: 369, Address: pulseroute.USDChAddress, Decimals: 6, PriceUSD: 1},
		{ChainID: 369, Address: pulseroute.WPLSAddress, Decimals: 18, PriceUSD: 0.0001},
	})
	_, base := start(t, Config{Prices: prices})
	got, err := pulserpc.GetAmountsOut(context.Background(), dial(t, base, ChainPulse), common.HexToAddress(pulseroute.PulseXRouterAddress),
		big.NewInt(1_000_000), []common.Address{usdch, wpls})
	if err != nil {
		t.Fatal(err)
	}
	// 10000 WPLS less 0.29% and a hair of price impact.
	lo, hi := new(big.Int).Mul(big.NewInt(9_970), big.NewInt(1e18)), new(big.Int).Mul(big.NewInt(9_971), big.NewInt(1e18))
	if got[1].Cmp(lo) < 0 || got[1].Cmp(hi) > 0 {
		t.Errorf("1 USDCh bought %v WPLS base units", got[1])
	}
}

// The gas oracle reads eth_feeHistory.
func TestFeeHistory(t *testing.T) {
	_, base := start(t, Config{})
	reg, _ := registry.Load()
	arb, _ := reg.Chain(ChainArbitrum)
	rec, err := gasrpc.NewFeeHistory(dial(t, base, ChainArbitrum)).GasPrice(context.Background(), arb)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ChainID != ChainArbitrum || rec.LastUpdated == 0 {
		t.Errorf("record %+v", rec)
	}
	price, err := dial(t, base, ChainArbitrum).SuggestGasPrice(context.Background())
	if err != nil || price.Int64() != DefaultBaseFee+DefaultTip {
		t.Errorf("eth_gasPrice %v %v", price, err)
	}
}

// Balances answer in one batch, as the balance reader sends them.
func TestBalancesBatch(t *testing.T) {
	s, base := start(t, Config{})
	holder := common.HexToAddress("0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0")
	usdc := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	_ = s.SetBalance(ChainArbitrum, common.Address{}, holder, big.NewInt(5e15))
	_ = s.SetBalance(ChainArbitrum, usdc, holder, big.NewInt(42_000_000))
	c, err := rpc.Dial(URL(base, ChainArbitrum))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var native hexutil.Big
	var tok, other hexutil.Bytes
	call := func(common.Address) []byte {
		return append(common.FromHex("0x70a08231"), common.LeftPadBytes(holder.Bytes(), 32)...)
	}
	batch := []rpc.BatchElem{
		{Method: "eth_getBalance", Args: []any{holder, "latest"}, Result: &native},
		{Method: "eth_call", Args: []any{map[string]any{"to": usdc, "data": hexutil.Bytes(call(usdc))}, "latest"}, Result: &tok},
		{Method: "eth_call", Args: []any{map[string]any{"to": usdch, "data": hexutil.Bytes(call(usdch))}, "latest"}, Result: &other},
	}
	if err := c.BatchCallContext(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	for _, b := range batch {
		if b.Error != nil {
			t.Fatal(b.Error)
		}
	}
	if native.ToInt().Int64() != 5e15 || new(big.Int).SetBytes(tok).Int64() != 42_000_000 || new(big.Int).SetBytes(other).Sign() != 0 {
		t.Errorf("balances %v %x %x", native.ToInt(), tok, other)
	}
	if s.Calls("eth_call") != 2 {
		t.Errorf("eth_call counted %d times", s.Calls("eth_call"))
	}
}

// Registered transactions read as inbound evidence: unknown, pending, then
// mined with their logs and the signer recovered.
func TestTransactionsAsEvidence(t *testing.T) {
	s, base := start(t, Config{})
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	to := common.HexToAddress("0xf73436AB044AAA679fb619D0DEe4a1dAfE84ac1a")
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(ChainArbitrum)), &types.DynamicFeeTx{
		ChainID: big.NewInt(ChainArbitrum), Nonce: 3, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), Gas: 100_000, To: &to, Data: []byte{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, base, ChainArbitrum)
	ev, err := inbound.ReadEvidence(context.Background(), c, ChainArbitrum, tx.Hash())
	if err != nil || ev.State != inbound.TxNotFound {
		t.Fatalf("unregistered: %+v %v", ev, err)
	}
	if _, err := s.AddTransaction(ChainArbitrum, tx, Mined{Pending: true}); err != nil {
		t.Fatal(err)
	}
	if ev, err = inbound.ReadEvidence(context.Background(), c, ChainArbitrum, tx.Hash()); err != nil || ev.State != inbound.TxPending {
		t.Fatalf("pending: %+v %v", ev, err)
	}
	transfer := &types.Log{Address: common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
		Topics: []common.Hash{crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)")), common.BytesToHash(from.Bytes()), common.BytesToHash(to.Bytes())},
		Data:   common.LeftPadBytes(big.NewInt(1_000_000).Bytes(), 32)}
	if _, err := s.AddTransaction(ChainArbitrum, tx, Mined{Status: types.ReceiptStatusSuccessful, Logs: []*types.Log{transfer}, BlockNumber: 99}); err != nil {
		t.Fatal(err)
	}
	ev, err = inbound.ReadEvidence(context.Background(), c, ChainArbitrum, tx.Hash())
	if err != nil || ev.State != inbound.TxMined || ev.From != from || ev.BlockNumber != 99 || ev.Status != types.ReceiptStatusSuccessful || len(ev.Transfers) != 1 {
		t.Fatalf("mined: %+v %v", ev, err)
	}
	if _, err := c.TransactionReceipt(context.Background(), common.Hash{1}); !errors.Is(err, ethereum.NotFound) {
		t.Errorf("unknown receipt: %v", err)
	}
}

// The latency delays every request, a batch once.
func TestLatency(t *testing.T) {
	_, base := start(t, Config{Latency: 120 * time.Millisecond})
	at := time.Now()
	if _, err := dial(t, base, ChainPulse).ChainID(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(at); d < 120*time.Millisecond {
		t.Errorf("answered in %v", d)
	}
}

// A transaction sent raw is mined at once; an ERC-20 transfer logs its
// Transfer event, which the inbound evidence reads; one signed for another
// chain is refused.
func TestSendRawTransaction(t *testing.T) {
	_, base := start(t, Config{})
	c := dial(t, base, ChainArbitrum)
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	usdc := common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	receiver := common.HexToAddress("0x1111111111111111111111111111111111111111")
	data := append(append(common.FromHex("0xa9059cbb"), common.LeftPadBytes(receiver.Bytes(), 32)...), common.LeftPadBytes(big.NewInt(5_000_000).Bytes(), 32)...)
	sign := func(chain int64) *types.Transaction {
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chain)), &types.DynamicFeeTx{
			ChainID: big.NewInt(chain), GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), Gas: 60_000, To: &usdc, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	tx := sign(ChainArbitrum)
	if err := c.SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	ev, err := inbound.ReadEvidence(context.Background(), c, ChainArbitrum, tx.Hash())
	if err != nil || ev.State != inbound.TxMined || ev.From != from || len(ev.Transfers) != 1 {
		t.Fatalf("evidence %+v %v", ev, err)
	}
	if tr := ev.Transfers[0]; tr.To != receiver || tr.Amount.Int64() != 5_000_000 {
		t.Errorf("transfer %+v", tr)
	}
	if err := c.SendTransaction(context.Background(), sign(1)); err == nil {
		t.Error("a transaction for chain 1 was accepted on 42161")
	}
}
