package simchain

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
)

// ERC20ABIJSON is the ABI every sandbox token answers to: the standard
// ERC-20 functions and events (without totalSupply: every account starts
// with the genesis allocation, so the supply is unbounded and a figure would
// mislead), plus mint(address,uint256) and burn(address,uint256), which only
// the token's minters may call.
const ERC20ABIJSON = `[
 {"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"symbol","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"decimals","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint8"}]},
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"account","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"allowance","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"transfer","stateMutability":"nonpayable","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"transferFrom","stateMutability":"nonpayable","inputs":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"approve","stateMutability":"nonpayable","inputs":[{"name":"spender","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"mint","stateMutability":"nonpayable","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[]},
 {"type":"function","name":"burn","stateMutability":"nonpayable","inputs":[{"name":"from","type":"address"},{"name":"value","type":"uint256"}],"outputs":[]},
 {"type":"event","name":"Transfer","anonymous":false,"inputs":[{"name":"from","type":"address","indexed":true},{"name":"to","type":"address","indexed":true},{"name":"value","type":"uint256","indexed":false}]},
 {"type":"event","name":"Approval","anonymous":false,"inputs":[{"name":"owner","type":"address","indexed":true},{"name":"spender","type":"address","indexed":true},{"name":"value","type":"uint256","indexed":false}]}
]`

// erc20ABI is ERC20ABIJSON parsed once; it is never modified.
var erc20ABI = mustParseABI(ERC20ABIJSON)

func mustParseABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(fmt.Sprintf("simchain: parse ABI: %v", err))
	}
	return a
}

// ERC20ABI parses ERC20ABIJSON, for callers that encode calls to sandbox
// tokens or decode their logs.
func ERC20ABI() abi.ABI { return mustParseABI(ERC20ABIJSON) }

// ApproveCalldata is the calldata of a token's approve(spender, amount), the
// transaction a wallet sends before a swap that spends its tokens.
func ApproveCalldata(spender common.Address, amount *big.Int) ([]byte, error) {
	return erc20ABI.Pack("approve", spender, amount)
}

// The topics of the ERC-20 events: keccak256 of their signatures.
var (
	transferTopic = erc20ABI.Events["Transfer"].ID
	approvalTopic = erc20ABI.Events["Approval"].ID
)

// ERC20 is the code of every token of the chain: an ERC-20 whose state
// (balances, allowances) lives in the chain under the token's address, with
// OpenZeppelin's rules and revert reasons:
//
//   - transfer and transferFrom revert with "ERC20: transfer amount exceeds
//     balance" when the holder has too little, and to or from the zero
//     address; transferFrom first spends the caller's allowance, reverting
//     with "ERC20: insufficient allowance" when it is too small; an
//     allowance of 2^256-1 is infinite and never spent. Each emits Transfer;
//     spending an allowance emits no Approval (OpenZeppelin 5);
//   - approve sets the allowance (not to the zero address) and emits
//     Approval; on a token the registry marks ApprovalReset (USDT on
//     Ethereum) it reverts, as Tether's contract does, when both the current
//     allowance and the new one are non-zero (ApproveNonZeroReason):
//     such an allowance is changed by approving 0 first;
//   - mint and burn are for the token's minters only and emit Transfer from
//     or to the zero address;
//   - no function is payable, an unknown selector reverts, and so does
//     calldata too short for its function.
//
// ERC20 holds no state of its own, so one value serves every token, and a
// contract deployed at a token's address in its place (a bridge's synthetic
// token that is also its router) can hand the calls it does not handle
// itself to ERC20{}.Execute.
type ERC20 struct{}

var _ Contract = ERC20{}

// Execute runs one ERC-20 call on the token at env.Self().
func (ERC20) Execute(env *Env, from common.Address, value *big.Int, data []byte) ([]byte, error) {
	c := env.chain
	token := env.self
	t := c.tokens[token]
	if t == nil || token == (common.Address{}) {
		return nil, Revertf("%s is not a token of chain %d", token.Hex(), c.id)
	}
	if len(data) < 4 {
		return nil, Revert("ERC20: no function selector in the calldata, and no fallback")
	}
	m, err := erc20ABI.MethodById(data[:4])
	if err != nil {
		return nil, Revertf("ERC20: function selector %#x not recognised", data[:4])
	}
	if value != nil && value.Sign() != 0 {
		return nil, Revertf("ERC20: %s is not payable", m.Name)
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, Revertf("ERC20: invalid calldata for %s", m.Name)
	}
	switch m.Name {
	case "name":
		return m.Outputs.Pack(t.name)
	case "symbol":
		return m.Outputs.Pack(t.symbol)
	case "decimals":
		return m.Outputs.Pack(t.decimals)
	case "balanceOf":
		b, err := env.Balance(token, args[0].(common.Address))
		if err != nil {
			return nil, err
		}
		return m.Outputs.Pack(b)
	case "allowance":
		a, err := env.Allowance(token, args[0].(common.Address), args[1].(common.Address))
		if err != nil {
			return nil, err
		}
		return m.Outputs.Pack(a)
	case "transfer":
		if err := erc20Transfer(env, from, args[0].(common.Address), args[1].(*big.Int)); err != nil {
			return nil, err
		}
		return m.Outputs.Pack(true)
	case "transferFrom":
		owner, to, amount := args[0].(common.Address), args[1].(common.Address), args[2].(*big.Int)
		if err := erc20SpendAllowance(env, owner, from, amount); err != nil {
			return nil, err
		}
		if err := erc20Transfer(env, owner, to, amount); err != nil {
			return nil, err
		}
		return m.Outputs.Pack(true)
	case "approve":
		if err := erc20Approve(env, from, args[0].(common.Address), args[1].(*big.Int)); err != nil {
			return nil, err
		}
		return m.Outputs.Pack(true)
	case "mint", "burn":
		if !c.isMinter(token, from) {
			return nil, Revertf("ERC20: %s is not a minter of %s", from.Hex(), t.symbol)
		}
		holder, amount := args[0].(common.Address), args[1].(*big.Int)
		if m.Name == "mint" {
			return nil, erc20Mint(env, holder, amount)
		}
		return nil, erc20Burn(env, holder, amount)
	}
	return nil, Revertf("ERC20: function %s not implemented", m.Name)
}

// readBalance and writeBalance are the token's storage accesses, charged
// as such.
func readBalance(env *Env, holder common.Address) (*big.Int, error) {
	if err := env.gas.use(StorageReadGas); err != nil {
		return nil, err
	}
	return env.chain.balance(env.self, holder), nil
}

func writeBalance(env *Env, holder common.Address, v *big.Int) error {
	if err := env.gas.use(StorageWriteGas); err != nil {
		return err
	}
	env.chain.setBalance(env.self, holder, v)
	return nil
}

func erc20Transfer(env *Env, from, to common.Address, amount *big.Int) error {
	if from == (common.Address{}) {
		return Revert("ERC20: transfer from the zero address")
	}
	if to == (common.Address{}) {
		return Revert("ERC20: transfer to the zero address")
	}
	fromBal, err := readBalance(env, from)
	if err != nil {
		return err
	}
	if fromBal.Cmp(amount) < 0 {
		return Revert("ERC20: transfer amount exceeds balance")
	}
	if err := writeBalance(env, from, new(big.Int).Sub(fromBal, amount)); err != nil {
		return err
	}
	// Read after the debit, so that a transfer to oneself nets to nothing.
	toBal, err := readBalance(env, to)
	if err != nil {
		return err
	}
	sum := new(big.Int).Add(toBal, amount)
	if sum.Cmp(math.MaxBig256) > 0 {
		return Revert("ERC20: balance overflow")
	}
	if err := writeBalance(env, to, sum); err != nil {
		return err
	}
	return emitAmount(env, transferTopic, from, to, amount)
}

func erc20SpendAllowance(env *Env, owner, spender common.Address, amount *big.Int) error {
	cur, err := env.Allowance(env.self, owner, spender)
	if err != nil {
		return err
	}
	if cur.Cmp(math.MaxBig256) == 0 {
		return nil
	}
	if cur.Cmp(amount) < 0 {
		return Revert("ERC20: insufficient allowance")
	}
	if err := env.gas.use(StorageWriteGas); err != nil {
		return err
	}
	env.chain.setAllowance(env.self, owner, spender, cur.Sub(cur, amount))
	return nil
}

// ApproveNonZeroReason is the revert reason of an approve from a non-zero
// allowance to another non-zero one on a token that must be reset first.
// Tether's contract reverts there without a reason (a bare require); the
// sandbox names the rule so that a developer sees why.
const ApproveNonZeroReason = "ERC20: approve from a non-zero allowance to a non-zero one; approve 0 first"

func erc20Approve(env *Env, owner, spender common.Address, amount *big.Int) error {
	if owner == (common.Address{}) {
		return Revert("ERC20: approve from the zero address")
	}
	if spender == (common.Address{}) {
		return Revert("ERC20: approve to the zero address")
	}
	if t := env.chain.tokens[env.self]; t != nil && t.approvalReset && amount.Sign() != 0 {
		cur, err := env.Allowance(env.self, owner, spender)
		if err != nil {
			return err
		}
		if cur.Sign() != 0 {
			return Revert(ApproveNonZeroReason)
		}
	}
	if err := env.gas.use(StorageWriteGas); err != nil {
		return err
	}
	env.chain.setAllowance(env.self, owner, spender, new(big.Int).Set(amount))
	return emitAmount(env, approvalTopic, owner, spender, amount)
}

func erc20Mint(env *Env, to common.Address, amount *big.Int) error {
	if to == (common.Address{}) {
		return Revert("ERC20: mint to the zero address")
	}
	bal, err := readBalance(env, to)
	if err != nil {
		return err
	}
	sum := new(big.Int).Add(bal, amount)
	if sum.Cmp(math.MaxBig256) > 0 {
		return Revert("ERC20: balance overflow")
	}
	if err := writeBalance(env, to, sum); err != nil {
		return err
	}
	return emitAmount(env, transferTopic, common.Address{}, to, amount)
}

func erc20Burn(env *Env, from common.Address, amount *big.Int) error {
	if from == (common.Address{}) {
		return Revert("ERC20: burn from the zero address")
	}
	bal, err := readBalance(env, from)
	if err != nil {
		return err
	}
	if bal.Cmp(amount) < 0 {
		return Revert("ERC20: burn amount exceeds balance")
	}
	if err := writeBalance(env, from, new(big.Int).Sub(bal, amount)); err != nil {
		return err
	}
	return emitAmount(env, transferTopic, from, common.Address{}, amount)
}

// emitAmount emits Transfer or Approval: two indexed addresses as topics,
// the amount ABI-encoded as data.
func emitAmount(env *Env, topic common.Hash, a, b common.Address, amount *big.Int) error {
	return env.Emit(
		[]common.Hash{topic, common.BytesToHash(a.Bytes()), common.BytesToHash(b.Bytes())},
		common.BigToHash(amount).Bytes(),
	)
}
