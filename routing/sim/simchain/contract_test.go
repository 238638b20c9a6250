package simchain_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

func TestContractPullsAndHolds(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	deployHold(t, c)
	wantBig(t, "a fresh contract holds no USDC", c.Balance(usdcAddr, holdAddr), new(big.Int))
	wantBig(t, "a fresh contract holds no ETH", c.Balance(native, holdAddr), new(big.Int))

	mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", holdAddr, usdc(600))})
	r := mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr, Data: packHold(t, "hold", usdcAddr, usdc(400))})
	wantBig(t, "alice USDC", c.Balance(usdcAddr, alice), usdc(600))
	wantBig(t, "contract USDC", c.Balance(usdcAddr, holdAddr), usdc(400))
	wantBig(t, "allowance left", c.Allowance(usdcAddr, alice, holdAddr), usdc(200))

	// The token's Transfer, then the contract's own event, in order.
	if len(r.Logs) != 2 {
		t.Fatalf("%d logs, want 2", len(r.Logs))
	}
	from, to, amount := decodeAmountLog(t, r.Logs[0], "Transfer")
	if r.Logs[0].Address != usdcAddr || from != alice || to != holdAddr || amount.Cmp(usdc(400)) != 0 {
		t.Errorf("first log: %s Transfer(%s, %s, %s)", r.Logs[0].Address, from, to, amount)
	}
	held := r.Logs[1]
	if held.Address != holdAddr || held.Index != 1 || held.Topics[0] != holdABI.Events["Held"].ID ||
		common.BytesToAddress(held.Topics[1].Bytes()) != alice || common.BytesToAddress(held.Topics[2].Bytes()) != usdcAddr {
		t.Errorf("Held log = %+v", held)
	}
	vals, err := holdABI.Unpack("Held", held.Data)
	if err != nil || vals[0].(*big.Int).Cmp(usdc(400)) != 0 {
		t.Errorf("Held data %v, %v", vals, err)
	}
	// Gas: the contract, the token it called, the pull, the balance read, the event.
	want := simchain.IntrinsicGas(packHold(t, "hold", usdcAddr, usdc(400))) +
		2*simchain.ContractCallGas + // the contract and the token
		3*simchain.StorageReadGas + 3*simchain.StorageWriteGas + // allowance and two balances
		simchain.LogGas + 3*simchain.LogTopicGas + 32*simchain.LogDataGas + // Transfer
		simchain.StorageReadGas + // the contract's balance check
		simchain.LogGas + 3*simchain.LogTopicGas + 32*simchain.LogDataGas // Held
	if r.GasUsed != want {
		t.Errorf("gas used %d, want %d", r.GasUsed, want)
	}

	// Up to the cap and no further; the failed attempt changes nothing.
	mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr, Data: packHold(t, "hold", usdcAddr, usdc(100))})
	r = send(t, c, alice, simchain.TxRequest{To: holdAddr, Data: packHold(t, "hold", usdcAddr, usdc(1))})
	if r.Succeeded() || r.RevertReason != "PullAndHold: cap exceeded" {
		t.Errorf("hold over the cap: status %d %q", r.Status, r.RevertReason)
	}
	wantBig(t, "contract USDC at the cap", c.Balance(usdcAddr, holdAddr), usdc(500))

	// The contract sends from its own balance: tokens, and native coin it
	// was sent.
	mustSucceed(t, c, bob, simchain.TxRequest{To: holdAddr, Data: packHold(t, "release", usdcAddr, carol, usdc(50))})
	wantBig(t, "carol USDC", c.Balance(usdcAddr, carol), usdc(1050))
	mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr, Value: eth(2)})
	wantBig(t, "contract ETH", c.Balance(native, holdAddr), eth(2))
	r = mustSucceed(t, c, bob, simchain.TxRequest{To: holdAddr, Data: packHold(t, "release", native, carol, eth(1))})
	wantBig(t, "carol ETH", c.Balance(native, carol), eth(101))
	wantBig(t, "contract ETH after", c.Balance(native, holdAddr), eth(1))
	r = send(t, c, bob, simchain.TxRequest{To: holdAddr, Data: packHold(t, "release", native, carol, eth(2))})
	if r.RevertReason != "insufficient funds for transfer" {
		t.Errorf("releasing more ETH than held: %q", r.RevertReason)
	}
}

func TestMinterRole(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	deployHold(t, c)
	mint := simchain.TxRequest{To: holdAddr, Data: packHold(t, "mint", usdcAddr, carol, usdc(5))}
	if r := send(t, c, alice, mint); r.Succeeded() {
		t.Fatal("minted without the role")
	}
	if err := c.GrantMinter(usdcAddr, holdAddr); err != nil {
		t.Fatal(err)
	}
	r := mustSucceed(t, c, alice, mint)
	from, to, amount := decodeAmountLog(t, r.Logs[0], "Transfer")
	if from != native || to != carol || amount.Cmp(usdc(5)) != 0 {
		t.Errorf("mint logged Transfer(%s, %s, %s)", from, to, amount)
	}
	wantBig(t, "carol USDC", c.Balance(usdcAddr, carol), usdc(1005))

	if err := c.GrantMinter(native, holdAddr); !errors.Is(err, simchain.ErrUnknownToken) {
		t.Errorf("granting the native coin: %v", err)
	}
	r = send(t, c, alice, simchain.TxRequest{To: holdAddr, Data: packHold(t, "mint", native, carol, eth(1))})
	if r.RevertReason != "the native coin cannot be minted" {
		t.Errorf("minting native: %q", r.RevertReason)
	}
}

// synthetic is what a bridge's synthetic token looks like when it is its
// own router: it handles transferRemote(amount) itself (burning the
// sender's tokens, no approval needed) and hands every other call to ERC20.
type synthetic struct{}

var transferRemoteSelector = []byte{0x01, 0x02, 0x03, 0x04}

func (synthetic) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if len(data) == 36 && string(data[:4]) == string(transferRemoteSelector) {
		return nil, env.Burn(env.Self(), from, new(big.Int).SetBytes(data[4:]))
	}
	return simchain.ERC20{}.Execute(env, from, value, data)
}

func TestDeploy(t *testing.T) {
	c := newChain(t, 369)
	usdch := token(t, 369, "USDCh")
	mustSucceed(t, c, alice, simchain.TxRequest{To: usdch, Data: pack(t, "transfer", bob, usdc(10))})

	// Replacing a token's code keeps its balances.
	if err := c.Deploy(usdch, synthetic{}); err != nil {
		t.Fatal(err)
	}
	wantBig(t, "bob USDCh after the code changed", c.Balance(usdch, bob), usdc(1010))
	r := mustSucceed(t, c, bob, simchain.TxRequest{To: usdch, Data: append(append([]byte{}, transferRemoteSelector...), common.BigToHash(usdc(10)).Bytes()...)})
	from, to, amount := decodeAmountLog(t, r.Logs[0], "Transfer")
	if from != bob || to != native || amount.Cmp(usdc(10)) != 0 {
		t.Errorf("burn logged Transfer(%s, %s, %s)", from, to, amount)
	}
	wantBig(t, "bob USDCh after the burn", c.Balance(usdch, bob), usdc(1000))
	mustSucceed(t, c, bob, simchain.TxRequest{To: usdch, Data: pack(t, "transfer", carol, usdc(1))})
	wantBig(t, "carol USDCh", c.Balance(usdch, carol), usdc(1001))

	cases := []struct {
		name string
		addr common.Address
		code simchain.Contract
		want error
	}{
		{"an account that sent a transaction", alice, &pullAndHold{}, simchain.ErrAccountInUse},
		{"an account that received tokens", carol, &pullAndHold{}, simchain.ErrAccountInUse},
		{"the zero address", native, &pullAndHold{}, nil},
		{"the faucet", simchain.FaucetAddress(), &pullAndHold{}, nil},
		{"no code", holdAddr, nil, nil},
	}
	for _, tc := range cases {
		err := c.Deploy(tc.addr, tc.code)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("deploy at %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A contract cannot send transactions.
	deployHold(t, c)
	if _, err := c.Send(holdAddr, simchain.TxRequest{To: bob}); !errors.Is(err, simchain.ErrInvalidSender) {
		t.Errorf("send from a contract: %v", err)
	}
	if c.Code(holdAddr) == nil || c.Code(bob) != nil {
		t.Error("Code does not tell contracts from accounts")
	}
}

// misbehaving covers contracts that panic, swallow running out of gas,
// recurse, or return a plain error.
type misbehaving struct{ mode string }

func (m misbehaving) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	usdcAddr := common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	switch m.mode {
	case "panic":
		panic("boom")
	case "swallow":
		for env.UseGas(1_000) == nil {
		}
		return nil, nil
	case "recurse":
		return env.Call(env.Self(), nil, nil)
	case "plain error":
		return nil, errors.New("plain failure")
	case "catch":
		// A failed inner call is rolled back on its own; the outer call
		// carries on, as a Solidity try/catch does.
		if _, err := env.Call(usdcAddr, nil, []byte{0xde, 0xad, 0xbe, 0xef}); !errors.Is(err, simchain.ErrReverted) {
			return nil, simchain.Revertf("inner call: %v", err)
		}
		return nil, nil
	}
	return nil, nil
}

func TestMisbehavingContracts(t *testing.T) {
	cases := []struct {
		mode   string
		reason string // empty: success
	}{
		{"panic", "contract " + holdAddr.Hex() + " panicked: boom"},
		{"swallow", "out of gas"},
		{"recurse", "call depth exceeded"},
		{"plain error", "plain failure"},
		{"catch", ""},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			c := newChain(t, ethereum)
			if err := c.Deploy(holdAddr, misbehaving{tc.mode}); err != nil {
				t.Fatal(err)
			}
			r := send(t, c, alice, simchain.TxRequest{To: holdAddr, Value: big.NewInt(1), GasLimit: 5_000_000})
			if tc.reason == "" {
				if !r.Succeeded() {
					t.Fatalf("reverted: %s", r.RevertReason)
				}
				return
			}
			if r.Succeeded() || r.RevertReason != tc.reason {
				t.Errorf("status %d reason %q, want %q", r.Status, r.RevertReason, tc.reason)
			}
			wantBig(t, "contract ETH", c.Balance(native, holdAddr), new(big.Int))
			if tc.mode == "swallow" && r.GasUsed != 5_000_000 {
				t.Errorf("gas used %d, want the whole limit", r.GasUsed)
			}
		})
	}
}

func TestLogFilter(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr, weth := token(t, ethereum, "USDC"), token(t, ethereum, "WETH")
	mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(1))}) // block 1
	mustSucceed(t, c, alice, simchain.TxRequest{To: weth, Data: pack(t, "transfer", bob, eth(1))})      // block 2
	mustSucceed(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "approve", bob, usdc(1))})  // block 3
	send(t, c, alice, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(5000))})     // block 4, reverted
	mustSucceed(t, c, bob, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", carol, usdc(1))}) // block 5

	transfer := standardERC20.Events["Transfer"].ID
	toBob := common.BytesToHash(bob.Bytes())
	cases := []struct {
		name   string
		f      simchain.LogFilter
		blocks []uint64
	}{
		{"everything", simchain.LogFilter{}, []uint64{1, 2, 3, 5}},
		{"USDC", simchain.LogFilter{Addresses: []common.Address{usdcAddr}}, []uint64{1, 3, 5}},
		{"transfers", simchain.LogFilter{Topics: [][]common.Hash{{transfer}}}, []uint64{1, 2, 5}},
		{"transfers to bob", simchain.LogFilter{Topics: [][]common.Hash{{transfer}, nil, {toBob}}}, []uint64{1, 2}},
		{"USDC transfers to bob from block 2", simchain.LogFilter{FromBlock: 2, Addresses: []common.Address{usdcAddr}, Topics: [][]common.Hash{{transfer}, nil, {toBob}}}, nil},
		{"blocks 2 to 3", simchain.LogFilter{FromBlock: 2, ToBlock: 3}, []uint64{2, 3}},
		{"past the head", simchain.LogFilter{FromBlock: 9}, nil},
		{"more topics than logs have", simchain.LogFilter{Topics: [][]common.Hash{nil, nil, nil, nil}}, nil},
	}
	for _, tc := range cases {
		var got []uint64
		for _, l := range c.Logs(tc.f) {
			got = append(got, l.BlockNumber)
		}
		if len(got) != len(tc.blocks) {
			t.Errorf("%s: logs in blocks %v, want %v", tc.name, got, tc.blocks)
			continue
		}
		for i := range got {
			if got[i] != tc.blocks[i] {
				t.Errorf("%s: logs in blocks %v, want %v", tc.name, got, tc.blocks)
				break
			}
		}
	}
}

func TestEnvReportsTheBlock(t *testing.T) {
	c := newChain(t, ethereum)
	var seen struct {
		self, origin common.Address
		chainID      uint64
		number, time uint64
		gasLeft      uint64
	}
	probe := contractFunc(func(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
		seen.self, seen.origin, seen.chainID = env.Self(), env.Origin(), env.ChainID()
		seen.number, seen.time, seen.gasLeft = env.BlockNumber(), env.Time(), env.GasLeft()
		return nil, nil
	})
	if err := c.Deploy(holdAddr, probe); err != nil {
		t.Fatal(err)
	}
	r := mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr, GasLimit: 100_000})
	if seen.self != holdAddr || seen.origin != alice || seen.chainID != ethereum || seen.number != r.BlockNumber || seen.time != r.BlockTime ||
		seen.gasLeft != 100_000-21_000-simchain.ContractCallGas {
		t.Errorf("env saw %+v; receipt %+v", seen, r)
	}
	if _, err := c.Call(bob, holdAddr, nil); err != nil {
		t.Fatal(err)
	}
	if seen.origin != bob || seen.number != c.Head().Number || seen.time != c.Head().Time {
		t.Errorf("call saw %+v, head %+v", seen, c.Head())
	}
}

type contractFunc func(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error)

func (f contractFunc) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	return f(env, from, value, data)
}

func TestRevertError(t *testing.T) {
	err := simchain.Revertf("PullAndHold: %s", "cap exceeded")
	if !errors.Is(err, simchain.ErrReverted) || err.Error() != "execution reverted: PullAndHold: cap exceeded" {
		t.Errorf("revert error %v", err)
	}
	if !strings.HasPrefix(string((&simchain.RevertError{}).Data()), "\x08\xc3\x79\xa0") {
		t.Error("revert data lacks the Error(string) selector")
	}
}

// TestChainsRunIndependently runs chains on their own goroutines, as one
// actor per chain does: they share nothing mutable (the race detector
// watches the parsed ABI they share).
func TestChainsRunIndependently(t *testing.T) {
	ids := []uint64{1, 10, 8453, 42161}
	done := make(chan error, len(ids))
	for _, id := range ids {
		c := newChain(t, id)
		usdcAddr := token(t, id, "USDC")
		transfer, balanceOf := pack(t, "transfer", bob, usdc(1)), pack(t, "balanceOf", bob)
		go func() {
			for range 20 {
				r, err := c.Send(alice, simchain.TxRequest{To: usdcAddr, Data: transfer})
				if err != nil || !r.Succeeded() {
					done <- errors.New("transfer failed")
					return
				}
				if _, err := c.Call(bob, usdcAddr, balanceOf); err != nil {
					done <- err
					return
				}
			}
			if c.Balance(usdcAddr, bob).Cmp(usdc(1020)) != 0 {
				done <- errors.New("wrong balance")
				return
			}
			done <- nil
		}()
	}
	for range ids {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// counter increments storage slot 0 on every call and then reverts when the
// calldata is "fail", so that a test sees storage rolled back.
var counter = contractFunc(func(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	v, err := env.Load(common.Hash{})
	if err != nil {
		return nil, err
	}
	next := common.BigToHash(new(big.Int).Add(v.Big(), big.NewInt(1)))
	if err := env.Store(common.Hash{}, next); err != nil {
		return nil, err
	}
	if string(data) == "fail" {
		return nil, simchain.Revert("counter: failing on purpose")
	}
	return next.Bytes(), nil
})

func TestContractStorage(t *testing.T) {
	c := newChain(t, ethereum)
	if err := c.Deploy(holdAddr, counter); err != nil {
		t.Fatal(err)
	}
	slot := func() int64 { return c.Storage(holdAddr, common.Hash{}).Big().Int64() }
	r := mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr})
	if slot() != 1 {
		t.Fatalf("slot after one call = %d", slot())
	}
	if want := uint64(21_000 + simchain.ContractCallGas + simchain.StorageReadGas + simchain.StorageWriteGas); r.GasUsed != want {
		t.Errorf("gas used %d, want %d", r.GasUsed, want)
	}
	if r := send(t, c, alice, simchain.TxRequest{To: holdAddr, Data: []byte("fail")}); r.Succeeded() {
		t.Fatal("the failing call succeeded")
	}
	if slot() != 1 {
		t.Errorf("a reverted write stayed: slot = %d", slot())
	}
	out, err := c.Call(alice, holdAddr, nil)
	if err != nil || new(big.Int).SetBytes(out).Int64() != 2 || slot() != 1 {
		t.Errorf("call answered %x, %v; slot %d", out, err, slot())
	}
	mustSucceed(t, c, alice, simchain.TxRequest{To: holdAddr})
	if slot() != 2 {
		t.Errorf("slot after two calls = %d", slot())
	}
	if c.Storage(bob, common.Hash{}) != (common.Hash{}) {
		t.Error("an account without code has storage")
	}
}

func TestEnvRefusesBadAmounts(t *testing.T) {
	usdcAddr := common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	cases := []struct {
		name string
		op   func(env *simchain.Env) error
	}{
		{"nil transfer", func(env *simchain.Env) error { return env.Transfer(usdcAddr, bob, nil) }},
		{"negative transfer", func(env *simchain.Env) error { return env.Transfer(usdcAddr, bob, big.NewInt(-1)) }},
		{"negative native transfer", func(env *simchain.Env) error { return env.Transfer(native, bob, big.NewInt(-1)) }},
		{"nil approve", func(env *simchain.Env) error { return env.Approve(usdcAddr, bob, nil) }},
		{"oversized transferFrom", func(env *simchain.Env) error {
			return env.TransferFrom(usdcAddr, alice, bob, new(big.Int).Lsh(big.NewInt(1), 256))
		}},
		{"transfer of a token without code", func(env *simchain.Env) error { return env.Transfer(carol, bob, big.NewInt(1)) }},
		{"transferFrom of the native coin", func(env *simchain.Env) error { return env.TransferFrom(native, alice, bob, big.NewInt(1)) }},
		{"too many topics", func(env *simchain.Env) error { return env.Emit(make([]common.Hash, 5), nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChain(t, ethereum)
			op := contractFunc(func(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
				return nil, tc.op(env)
			})
			if err := c.Deploy(holdAddr, op); err != nil {
				t.Fatal(err)
			}
			r := send(t, c, alice, simchain.TxRequest{To: holdAddr})
			if r.Succeeded() || strings.Contains(r.RevertReason, "panicked") {
				t.Errorf("status %d reason %q, want a plain revert", r.Status, r.RevertReason)
			}
		})
	}
}
