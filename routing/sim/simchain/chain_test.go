package simchain_test

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

func TestNewRefusesWhatIsNotAnEVMChain(t *testing.T) {
	reg := testRegistry(t)
	clock := func() time.Time { return genesisTime }
	cases := []struct {
		name string
		cfg  simchain.Config
	}{
		{"solana", simchain.Config{Registry: reg, ChainID: 1151111081099710, Clock: clock, GasPrice: big.NewInt(1)}},
		{"unknown chain", simchain.Config{Registry: reg, ChainID: 4242, Clock: clock, GasPrice: big.NewInt(1)}},
		{"no registry", simchain.Config{ChainID: ethereum, Clock: clock, GasPrice: big.NewInt(1)}},
		{"no clock", simchain.Config{Registry: reg, ChainID: ethereum, GasPrice: big.NewInt(1)}},
		{"no gas price", simchain.Config{Registry: reg, ChainID: ethereum, Clock: clock}},
		{"negative gas price", simchain.Config{Registry: reg, ChainID: ethereum, Clock: clock, GasPrice: big.NewInt(-1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := simchain.New(tc.cfg); err == nil {
				t.Fatal("New succeeded")
			}
		})
	}
}

func TestEveryRegistryEVMChainBuilds(t *testing.T) {
	reg := testRegistry(t)
	for _, rc := range reg.Chains() {
		if rc.ChainType != "EVM" {
			continue
		}
		c := newChain(t, rc.ID)
		if got, want := len(c.Tokens()), len(reg.Tokens(rc.ID)); got != want {
			t.Errorf("chain %d: %d tokens, want %d", rc.ID, got, want)
		}
	}
}

func TestGenesisAllocation(t *testing.T) {
	c := newChain(t, ethereum)
	reg := testRegistry(t)
	toks := c.Tokens()
	if toks[0].Address != native || toks[0].Symbol != "ETH" {
		t.Fatalf("first token = %+v, want the native coin", toks[0])
	}
	for i, rt := range reg.Tokens(ethereum) {
		tok := toks[i]
		if tok.Address != common.HexToAddress(rt.Address) || tok.Decimals != rt.Decimals || tok.Symbol != rt.Symbol {
			t.Errorf("token %d = %+v, registry has %s %s/%d", i, tok, rt.Address, rt.Symbol, rt.Decimals)
		}
		n := int64(simchain.GenesisTokenUnits)
		if rt.IsNative() {
			n = simchain.GenesisNativeUnits
		}
		wantBig(t, rt.Symbol+" genesis", tok.Genesis, units(n, rt.Decimals))
		wantBig(t, rt.Symbol+" balance of an untouched address", c.Balance(tok.Address, carol), units(n, rt.Decimals))
		// Accounts that start empty.
		wantBig(t, rt.Symbol+" balance of the zero address", c.Balance(tok.Address, native), new(big.Int))
		wantBig(t, rt.Symbol+" balance of the faucet", c.Balance(tok.Address, simchain.FaucetAddress()), new(big.Int))
		wantBig(t, rt.Symbol+" balance of the USDC contract", c.Balance(tok.Address, token(t, ethereum, "USDC")), new(big.Int))
	}
	wantBig(t, "1,000 USDC", c.Balance(token(t, ethereum, "USDC"), carol), big.NewInt(1_000_000_000))
	wantBig(t, "1,000 WBTC", c.Balance(token(t, ethereum, "WBTC"), carol), big.NewInt(100_000_000_000))
	wantBig(t, "100 ETH", c.Balance(native, carol), eth(100))
	wantBig(t, "balance of an unknown token", c.Balance(common.HexToAddress("0x5555555555555555555555555555555555555555"), carol), new(big.Int))
	if c.Nonce(carol) != 0 {
		t.Errorf("nonce of an untouched address = %d", c.Nonce(carol))
	}
}

func TestLazyGenesisStaysConsistent(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr, weth := token(t, ethereum, "USDC"), token(t, ethereum, "WETH")

	// bob has never been touched: he reads the genesis amount, through the
	// chain and through the token's balanceOf.
	out, err := c.Call(carol, usdcAddr, pack(t, "balanceOf", bob))
	if err != nil {
		t.Fatal(err)
	}
	wantBig(t, "balanceOf(bob) before", new(big.Int).SetBytes(out), usdc(1000))

	r := mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(5))})
	wantBig(t, "bob USDC", c.Balance(usdcAddr, bob), usdc(1005))
	wantBig(t, "alice USDC", c.Balance(usdcAddr, alice), usdc(995))
	// Other balances of the touched accounts still read genesis.
	wantBig(t, "bob WETH", c.Balance(weth, bob), eth(1000))
	wantBig(t, "bob ETH", c.Balance(native, bob), eth(100))
	wantBig(t, "alice ETH", c.Balance(native, alice), sub(eth(100), fee(r)))

	// Spending down to zero stores zero: it never reads as genesis again.
	mustSucceed(t, c, bob, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", carol, usdc(1005))})
	wantBig(t, "bob USDC after spending everything", c.Balance(usdcAddr, bob), new(big.Int))
	out, err = c.Call(alice, usdcAddr, pack(t, "balanceOf", bob))
	if err != nil {
		t.Fatal(err)
	}
	wantBig(t, "balanceOf(bob) after", new(big.Int).SetBytes(out), new(big.Int))
	wantBig(t, "carol USDC", c.Balance(usdcAddr, carol), usdc(2005))
}

func TestNativeTransfer(t *testing.T) {
	c := newChain(t, ethereum)
	r := mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Value: eth(1), GasLimit: 21_000})
	if r.GasUsed != 21_000 || r.CumulativeGasUsed != 21_000 {
		t.Errorf("gas used = %d (cumulative %d), want 21000", r.GasUsed, r.CumulativeGasUsed)
	}
	wantBig(t, "effective gas price", r.EffectiveGasPrice, big.NewInt(gasPrice))
	wantBig(t, "alice", c.Balance(native, alice), sub(sub(eth(100), eth(1)), big.NewInt(21_000*gasPrice)))
	wantBig(t, "bob", c.Balance(native, bob), eth(101))
	if len(r.Logs) != 0 {
		t.Errorf("a native transfer logged %d logs", len(r.Logs))
	}
	if c.Nonce(alice) != 1 || c.Nonce(bob) != 0 {
		t.Errorf("nonces alice %d bob %d, want 1 and 0", c.Nonce(alice), c.Nonce(bob))
	}

	tx, ok := c.Transaction(r.TxHash)
	if !ok {
		t.Fatal("transaction not found")
	}
	if tx.From != alice || tx.To != bob || tx.Nonce != 0 || tx.Value.Cmp(eth(1)) != 0 || tx.GasLimit != 21_000 ||
		tx.ChainID != ethereum || tx.BlockNumber != 1 || tx.BlockHash != r.BlockHash || tx.GasPrice.Int64() != gasPrice {
		t.Errorf("transaction = %+v", tx)
	}
	if got, ok := c.Receipt(r.TxHash); !ok || got != r {
		t.Error("receipt look-up does not find the receipt")
	}
	if _, ok := c.Receipt(common.Hash{1}); ok {
		t.Error("found a receipt for an unknown hash")
	}
	if _, ok := c.Transaction(common.Hash{1}); ok {
		t.Error("found a transaction for an unknown hash")
	}

	// Data sent to an account without code does nothing, as on a chain.
	r = mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Data: []byte{0xa9, 0x05, 0x9c, 0xbb}})
	if r.GasUsed != simchain.IntrinsicGas([]byte{0xa9, 0x05, 0x9c, 0xbb}) {
		t.Errorf("call to an EOA used %d gas", r.GasUsed)
	}
}

func TestSendRefusesWhatCannotBeATransaction(t *testing.T) {
	usdcAddr := token(t, ethereum, "USDC")
	transfer := pack(t, "transfer", bob, usdc(1))
	cases := []struct {
		name string
		from common.Address
		req  simchain.TxRequest
		want error
	}{
		{"zero address sender", native, simchain.TxRequest{To: bob, Value: big.NewInt(1)}, simchain.ErrInvalidSender},
		{"faucet sender", simchain.FaucetAddress(), simchain.TxRequest{To: bob, Value: big.NewInt(1)}, simchain.ErrInvalidSender},
		{"contract sender", usdcAddr, simchain.TxRequest{To: bob, Value: big.NewInt(1)}, simchain.ErrInvalidSender},
		{"negative value", alice, simchain.TxRequest{To: bob, Value: big.NewInt(-1)}, simchain.ErrInvalidValue},
		{"value above 2^256-1", alice, simchain.TxRequest{To: bob, Value: new(big.Int).Lsh(big.NewInt(1), 256)}, simchain.ErrInvalidValue},
		{"gas limit above the block's", alice, simchain.TxRequest{To: bob, GasLimit: simchain.BlockGasLimit + 1}, simchain.ErrGasLimitTooHigh},
		{"gas limit below 21,000", alice, simchain.TxRequest{To: bob, GasLimit: 20_999}, simchain.ErrIntrinsicGas},
		{"gas limit below the data's cost", alice, simchain.TxRequest{To: usdcAddr, Data: transfer, GasLimit: 21_000}, simchain.ErrIntrinsicGas},
		// 100 ETH buys 30M gas only below 3,333 gwei.
		{"cannot buy the gas", alice, simchain.TxRequest{To: bob}, simchain.ErrInsufficientFundsForGas},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			price := big.NewInt(gasPrice)
			if tc.want == simchain.ErrInsufficientFundsForGas {
				price = big.NewInt(4_000e9)
			}
			c, err := simchain.New(simchain.Config{Registry: testRegistry(t), ChainID: ethereum, Clock: func() time.Time { return genesisTime }, GasPrice: price})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Send(tc.from, tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Send = %v, %v; want %v", r, err, tc.want)
			}
			if c.Head().Number != 0 || c.Nonce(tc.from) != 0 {
				t.Errorf("a refused request left a trace: head %d, nonce %d", c.Head().Number, c.Nonce(tc.from))
			}
			wantBig(t, "sender balance", c.Balance(native, alice), eth(100))
		})
	}
}

func TestGasLimitZeroMeansTheBlockGasLimit(t *testing.T) {
	c := newChain(t, ethereum)
	r := mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Value: eth(1)})
	tx, _ := c.Transaction(r.TxHash)
	if tx.GasLimit != simchain.BlockGasLimit || r.GasUsed != 21_000 {
		t.Errorf("gas limit %d, used %d; want %d and 21000", tx.GasLimit, r.GasUsed, simchain.BlockGasLimit)
	}
	// Only the gas used is paid: the rest of the prepayment is refunded.
	wantBig(t, "alice", c.Balance(native, alice), sub(eth(99), big.NewInt(21_000*gasPrice)))
}

func TestGasModel(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	const logCost = simchain.LogGas + 3*simchain.LogTopicGas + 32*simchain.LogDataGas
	const transferCost = simchain.ContractCallGas + 2*simchain.StorageReadGas + 2*simchain.StorageWriteGas + logCost

	cases := []struct {
		name string
		from common.Address
		data []byte
		want uint64
	}{
		{"transfer", alice, pack(t, "transfer", bob, usdc(1)), transferCost},
		{"approve", alice, pack(t, "approve", bob, usdc(10)), simchain.ContractCallGas + simchain.StorageWriteGas + logCost},
		{"transferFrom", bob, pack(t, "transferFrom", alice, carol, usdc(4)), transferCost + simchain.StorageReadGas + simchain.StorageWriteGas},
		{"balanceOf", alice, pack(t, "balanceOf", bob), simchain.ContractCallGas + simchain.StorageReadGas},
		{"decimals", alice, pack(t, "decimals"), simchain.ContractCallGas},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.Balance(native, tc.from)
			r := mustSucceed(t, c, tc.from, simchain.TxRequest{To: usdcAddr, Data: tc.data, GasLimit: 100_000})
			want := simchain.IntrinsicGas(tc.data) + tc.want
			if r.GasUsed != want {
				t.Errorf("gas used %d, want %d", r.GasUsed, want)
			}
			wantBig(t, "fee paid", sub(before, c.Balance(native, tc.from)), new(big.Int).SetUint64(want*gasPrice))
		})
	}
	if got := simchain.IntrinsicGas([]byte{0, 1, 0, 2}); got != 21_000+2*4+2*16 {
		t.Errorf("IntrinsicGas = %d", got)
	}
}

func TestBlocks(t *testing.T) {
	now := genesisTime
	clock := func() time.Time { return now }
	c, err := simchain.New(simchain.Config{Registry: testRegistry(t), ChainID: ethereum, Clock: clock, GasPrice: big.NewInt(gasPrice)})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Head()
	if g.Number != 0 || g.Time != uint64(genesisTime.Unix()) || len(g.Transactions) != 0 || g.ParentHash != (common.Hash{}) || g.Hash == (common.Hash{}) {
		t.Fatalf("genesis = %+v", g)
	}
	// Two blocks in the same second of the clock: the second is one second
	// later. Then the clock moves on and the block follows it.
	r1 := mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Value: big.NewInt(1)})
	r2 := mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Value: big.NewInt(1)})
	now = genesisTime.Add(time.Minute)
	r3 := send(t, c, alice, simchain.TxRequest{To: bob, Value: eth(1000)}) // fails, and is mined all the same
	wantTimes := []uint64{uint64(genesisTime.Unix()) + 1, uint64(genesisTime.Unix()) + 2, uint64(now.Unix())}
	for i, r := range []*simchain.Receipt{r1, r2, r3} {
		b, ok := c.BlockByNumber(uint64(i + 1))
		if !ok {
			t.Fatalf("no block %d", i+1)
		}
		parent, _ := c.BlockByNumber(uint64(i))
		if b.ParentHash != parent.Hash || b.Time != wantTimes[i] || b.GasUsed != r.GasUsed || b.GasLimit != simchain.BlockGasLimit ||
			len(b.Transactions) != 1 || b.Transactions[0] != r.TxHash {
			t.Errorf("block %d = %+v", i+1, b)
		}
		if r.BlockNumber != b.Number || r.BlockHash != b.Hash || r.BlockTime != b.Time || r.TxIndex != 0 {
			t.Errorf("receipt %d names block %d %s at %d", i+1, r.BlockNumber, r.BlockHash, r.BlockTime)
		}
	}
	if c.Head().Number != 3 {
		t.Errorf("head %d, want 3", c.Head().Number)
	}
	if _, ok := c.BlockByNumber(4); ok {
		t.Error("found block 4")
	}
}

// script runs the same sequence of transactions on a chain.
func script(t *testing.T, c *simchain.Chain) []*simchain.Receipt {
	var out []*simchain.Receipt
	for i := range 5 {
		out = append(out, send(t, c, alice, simchain.TxRequest{To: bob, Value: big.NewInt(int64(i + 1))}))
		out = append(out, send(t, c, bob, simchain.TxRequest{To: alice, Value: big.NewInt(7), Data: []byte{byte(i)}}))
	}
	// Same sender, nonce and recipient, different payload.
	out = append(out, send(t, c, carol, simchain.TxRequest{To: alice, Value: big.NewInt(1)}))
	out = append(out, send(t, c, carol, simchain.TxRequest{To: alice, Value: big.NewInt(1)}))
	return out
}

func TestHashesAreUniqueAndDeterministic(t *testing.T) {
	a, b := newChain(t, ethereum), newChain(t, ethereum)
	ra, rb := script(t, a), script(t, b)
	seen := map[common.Hash]bool{}
	for i := range ra {
		if ra[i].TxHash != rb[i].TxHash || ra[i].BlockHash != rb[i].BlockHash {
			t.Errorf("transaction %d: %s/%s on one chain, %s/%s on the other", i, ra[i].TxHash, ra[i].BlockHash, rb[i].TxHash, rb[i].BlockHash)
		}
		if seen[ra[i].TxHash] {
			t.Errorf("transaction %d: hash %s seen before", i, ra[i].TxHash)
		}
		seen[ra[i].TxHash] = true
	}
	for _, who := range []common.Address{alice, bob, carol} {
		wantBig(t, "balance", a.Balance(native, who), b.Balance(native, who))
	}
	if a.Head().Hash != b.Head().Hash {
		t.Error("heads differ")
	}

	// Another chain id gives other hashes for the same transactions.
	base := newChain(t, 8453)
	for i, r := range script(t, base) {
		if seen[r.TxHash] {
			t.Errorf("transaction %d on Base has an Ethereum hash", i)
		}
	}

	// The hash is keccak256 of the RLP list [chainId, from, nonce, to,
	// value, data, gasLimit, gasPrice]; pinned so that a change is seen.
	enc, err := rlp.EncodeToBytes([]any{uint64(ethereum), alice, uint64(0), bob, big.NewInt(1), []byte{}, uint64(simchain.BlockGasLimit), big.NewInt(gasPrice)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ra[0].TxHash, crypto.Keccak256Hash(enc); got != want {
		t.Errorf("first transaction hash = %s, want %s", got, want)
	}
	const pinned = "0x4f26ab6b6707fb358023e456b8a848b1781d06f94ff8599f5c8751a9314645dc"
	if got := ra[0].TxHash.Hex(); got != pinned {
		t.Errorf("first transaction hash = %s, pinned %s", got, pinned)
	}
}

func TestFaucetAddress(t *testing.T) {
	want := common.BytesToAddress(crypto.Keccak256([]byte("swapgate-sandbox-faucet"))[12:])
	if simchain.FaucetAddress() != want {
		t.Errorf("faucet %s, want %s", simchain.FaucetAddress(), want)
	}
}

func TestGenesisNativeOverride(t *testing.T) {
	reg := testRegistry(t)
	clock := func() time.Time { return genesisTime }
	cases := []struct {
		name    string
		genesis *big.Int
		want    *big.Int
		wantErr bool
	}{
		{"default 100 coins", nil, eth(100), false},
		{"override", big.NewInt(12345), big.NewInt(12345), false},
		{"zero refused", big.NewInt(0), nil, true},
		{"negative refused", big.NewInt(-1), nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := simchain.New(simchain.Config{Registry: reg, ChainID: ethereum, Clock: clock, GasPrice: big.NewInt(1), GenesisNative: tc.genesis})
			if tc.wantErr {
				if err == nil {
					t.Fatal("New accepted the allocation")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantBig(t, "native genesis", c.Balance(native, alice), tc.want)
			wantBig(t, "USDC genesis is untouched", c.Balance(token(t, ethereum, "USDC"), alice), usdc(1000))
		})
	}
}

func TestAllocateBeforeTheFirstTransactionOnly(t *testing.T) {
	c := newChain(t, ethereum)
	deployHold(t, c)
	usdcAddr := token(t, ethereum, "USDC")
	if err := c.Allocate(holdAddr, native, eth(7)); err != nil {
		t.Fatal(err)
	}
	if err := c.Allocate(holdAddr, usdcAddr, usdc(3)); err != nil {
		t.Fatal(err)
	}
	wantBig(t, "contract native reserve", c.Balance(native, holdAddr), eth(7))
	wantBig(t, "contract USDC reserve", c.Balance(usdcAddr, holdAddr), usdc(3))
	if c.Head().Number != 0 || len(c.Logs(simchain.LogFilter{})) != 0 {
		t.Fatal("an allocation mined something")
	}
	refused := []struct {
		name          string
		holder, token common.Address
		amount        *big.Int
	}{
		{"unknown token", alice, common.HexToAddress("0x9999999999999999999999999999999999999999"), big.NewInt(1)},
		{"zero address", common.Address{}, native, big.NewInt(1)},
		{"faucet", simchain.FaucetAddress(), native, big.NewInt(1)},
		{"negative", alice, native, big.NewInt(-1)},
		{"nil", alice, native, nil},
	}
	for _, tc := range refused {
		if err := c.Allocate(tc.holder, tc.token, tc.amount); err == nil {
			t.Errorf("%s: allocation accepted", tc.name)
		}
	}
	// The reserve is spendable by the contract's code like any balance.
	mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr, Data: packHold(t, "release", native, bob, eth(2))})
	wantBig(t, "paid from the reserve", c.Balance(native, holdAddr), eth(5))
	if err := c.Allocate(holdAddr, native, eth(1)); !errors.Is(err, simchain.ErrNotGenesis) {
		t.Fatalf("allocation after a transaction: %v, want ErrNotGenesis", err)
	}
}
