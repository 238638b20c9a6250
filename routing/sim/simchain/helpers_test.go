package simchain_test

import (
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// Test accounts.
var (
	alice = common.HexToAddress("0x1111111111111111111111111111111111111111")
	bob   = common.HexToAddress("0x2222222222222222222222222222222222222222")
	carol = common.HexToAddress("0x3333333333333333333333333333333333333333")
	// holdAddr is where tests deploy the pull-and-hold example contract.
	holdAddr = common.HexToAddress("0x4444444444444444444444444444444444444444")
	native   = common.Address{}
)

const (
	ethereum = 1
	gasPrice = 2_000_000_000 // 2 gwei
)

// genesisTime is the fixed clock of most tests: every block after genesis is
// then one second after its parent.
var genesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var loadRegistry = sync.OnceValues(registry.Load)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := loadRegistry()
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	return reg
}

// newChain is a chain on a fixed clock at gasPrice.
func newChain(t testing.TB, chainID uint64) *simchain.Chain {
	t.Helper()
	c, err := simchain.New(simchain.Config{
		Registry: testRegistry(t),
		ChainID:  chainID,
		Clock:    func() time.Time { return genesisTime },
		GasPrice: big.NewInt(gasPrice),
	})
	if err != nil {
		t.Fatalf("new chain %d: %v", chainID, err)
	}
	return c
}

// token is the address of a registry token by symbol.
func token(t testing.TB, chainID uint64, symbol string) common.Address {
	t.Helper()
	tok, ok := testRegistry(t).TokenBySymbol(chainID, symbol)
	if !ok {
		t.Fatalf("no %s on chain %d", symbol, chainID)
	}
	return common.HexToAddress(tok.Address)
}

// units is n whole units at the given decimals.
func units(n int64, decimals uint8) *big.Int {
	v := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
	return v.Mul(v, big.NewInt(n))
}

func eth(n int64) *big.Int  { return units(n, 18) }
func usdc(n int64) *big.Int { return units(n, 6) }

// standardERC20JSON is the ERC-20 interface as published with
// OpenZeppelin's IERC20, independent of the package's own ABI, so that the
// tests decode what the chain emits the way a client would.
const standardERC20JSON = `[
 {"anonymous":false,"inputs":[{"indexed":true,"internalType":"address","name":"owner","type":"address"},{"indexed":true,"internalType":"address","name":"spender","type":"address"},{"indexed":false,"internalType":"uint256","name":"value","type":"uint256"}],"name":"Approval","type":"event"},
 {"anonymous":false,"inputs":[{"indexed":true,"internalType":"address","name":"from","type":"address"},{"indexed":true,"internalType":"address","name":"to","type":"address"},{"indexed":false,"internalType":"uint256","name":"value","type":"uint256"}],"name":"Transfer","type":"event"},
 {"inputs":[{"internalType":"address","name":"owner","type":"address"},{"internalType":"address","name":"spender","type":"address"}],"name":"allowance","outputs":[{"internalType":"uint256","name":"","type":"uint256"}],"stateMutability":"view","type":"function"},
 {"inputs":[{"internalType":"address","name":"spender","type":"address"},{"internalType":"uint256","name":"value","type":"uint256"}],"name":"approve","outputs":[{"internalType":"bool","name":"","type":"bool"}],"stateMutability":"nonpayable","type":"function"},
 {"inputs":[{"internalType":"address","name":"account","type":"address"}],"name":"balanceOf","outputs":[{"internalType":"uint256","name":"","type":"uint256"}],"stateMutability":"view","type":"function"},
 {"inputs":[],"name":"decimals","outputs":[{"internalType":"uint8","name":"","type":"uint8"}],"stateMutability":"view","type":"function"},
 {"inputs":[],"name":"name","outputs":[{"internalType":"string","name":"","type":"string"}],"stateMutability":"view","type":"function"},
 {"inputs":[],"name":"symbol","outputs":[{"internalType":"string","name":"","type":"string"}],"stateMutability":"view","type":"function"},
 {"inputs":[],"name":"totalSupply","outputs":[{"internalType":"uint256","name":"","type":"uint256"}],"stateMutability":"view","type":"function"},
 {"inputs":[{"internalType":"address","name":"to","type":"address"},{"internalType":"uint256","name":"value","type":"uint256"}],"name":"transfer","outputs":[{"internalType":"bool","name":"","type":"bool"}],"stateMutability":"nonpayable","type":"function"},
 {"inputs":[{"internalType":"address","name":"from","type":"address"},{"internalType":"address","name":"to","type":"address"},{"internalType":"uint256","name":"value","type":"uint256"}],"name":"transferFrom","outputs":[{"internalType":"bool","name":"","type":"bool"}],"stateMutability":"nonpayable","type":"function"}
]`

var standardERC20 = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(standardERC20JSON))
	if err != nil {
		panic(err)
	}
	return a
}()

// pack encodes a call with the standard ERC-20 ABI.
func pack(t testing.TB, method string, args ...any) []byte {
	t.Helper()
	data, err := standardERC20.Pack(method, args...)
	if err != nil {
		t.Fatalf("pack %s: %v", method, err)
	}
	return data
}

// send sends and fails the test on a refused request.
func send(t testing.TB, c *simchain.Chain, from common.Address, req simchain.TxRequest) *simchain.Receipt {
	t.Helper()
	r, err := c.Send(from, req)
	if err != nil {
		t.Fatalf("send from %s: %v", from.Hex(), err)
	}
	return r
}

// mustSucceed sends and fails the test unless the transaction succeeds.
func mustSucceed(t testing.TB, c *simchain.Chain, from common.Address, req simchain.TxRequest) *simchain.Receipt {
	t.Helper()
	r := send(t, c, from, req)
	if !r.Succeeded() {
		t.Fatalf("transaction from %s reverted: %s", from.Hex(), r.RevertReason)
	}
	return r
}

// fee is what a receipt cost its sender.
func fee(r *simchain.Receipt) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
}

func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }

func wantBig(t testing.TB, what string, got, want *big.Int) {
	t.Helper()
	if got.Cmp(want) != 0 {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// holdABIJSON is the ABI of pullAndHold.
const holdABIJSON = `[
 {"type":"function","name":"hold","stateMutability":"nonpayable","inputs":[{"name":"token","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]},
 {"type":"function","name":"release","stateMutability":"nonpayable","inputs":[{"name":"token","type":"address"},{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]},
 {"type":"function","name":"mint","stateMutability":"nonpayable","inputs":[{"name":"token","type":"address"},{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]},
 {"type":"event","name":"Held","anonymous":false,"inputs":[{"name":"from","type":"address","indexed":true},{"name":"token","type":"address","indexed":true},{"name":"amount","type":"uint256","indexed":false}]}
]`

var holdABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(holdABIJSON))
	if err != nil {
		panic(err)
	}
	return a
}()

// pullAndHold is the example application contract. hold(token, amount)
// pulls amount from the caller with transferFrom (so the caller must have
// approved the contract), keeps it, and reverts with "PullAndHold: cap
// exceeded" when its holding of the token then exceeds cap, which rolls
// back the pull. release(token, to, amount) sends from its own balance;
// mint(token, to, amount) mints as the contract; empty calldata accepts
// native coin.
type pullAndHold struct {
	cap *big.Int
}

func (p *pullAndHold) Execute(env *simchain.Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) < 4 {
		return nil, simchain.Revert("PullAndHold: bad calldata")
	}
	m, err := holdABI.MethodById(data[:4])
	if err != nil {
		return nil, simchain.Revert("PullAndHold: unknown function")
	}
	if value.Sign() != 0 {
		return nil, simchain.Revert("PullAndHold: not payable")
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, simchain.Revert("PullAndHold: bad arguments")
	}
	switch m.Name {
	case "hold":
		tok, amount := args[0].(common.Address), args[1].(*big.Int)
		if err := env.TransferFrom(tok, from, env.Self(), amount); err != nil {
			return nil, err
		}
		held, err := env.Balance(tok, env.Self())
		if err != nil {
			return nil, err
		}
		if held.Cmp(p.cap) > 0 {
			return nil, simchain.Revert("PullAndHold: cap exceeded")
		}
		ev := holdABI.Events["Held"]
		evData, err := ev.Inputs.NonIndexed().Pack(amount)
		if err != nil {
			return nil, err
		}
		return nil, env.Emit([]common.Hash{ev.ID, common.BytesToHash(from.Bytes()), common.BytesToHash(tok.Bytes())}, evData)
	case "release":
		return nil, env.Transfer(args[0].(common.Address), args[1].(common.Address), args[2].(*big.Int))
	case "mint":
		return nil, env.Mint(args[0].(common.Address), args[1].(common.Address), args[2].(*big.Int))
	}
	return nil, simchain.Revert("PullAndHold: unknown function")
}

func packHold(t testing.TB, method string, args ...any) []byte {
	t.Helper()
	data, err := holdABI.Pack(method, args...)
	if err != nil {
		t.Fatalf("pack %s: %v", method, err)
	}
	return data
}

// deployHold deploys pullAndHold at holdAddr with a cap of 500 USDC.
func deployHold(t testing.TB, c *simchain.Chain) {
	t.Helper()
	if err := c.Deploy(holdAddr, &pullAndHold{cap: usdc(500)}); err != nil {
		t.Fatalf("deploy: %v", err)
	}
}
