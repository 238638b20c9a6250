package simchain

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Contract is code deployed at an address. Execute runs one call of it:
// from is msg.sender, value is msg.value (already credited to the
// contract's native balance when Execute runs) and data is the calldata.
// It returns the call's return data, or an error to revert the call: a
// *RevertError (Revert, Revertf) gives the reason the receipt reports; any
// other error reverts with its text as the reason, and ErrOutOfGas (which
// Env's methods return when gas runs out) fails the whole transaction.
// Every change the call made through env, and every call it made, is
// rolled back when it reverts.
//
// A contract keeps its state in the chain, through env: balances,
// allowances, logs and its own storage slots (Load, Store), all of which
// are rolled back on revert and left untouched by Chain.Call. A Go value
// may hold state of its own too, but nothing rolls that back: contracts
// should keep their state in storage.
type Contract interface {
	Execute(env *Env, from common.Address, value *big.Int, data []byte) ([]byte, error)
}

// ErrReverted is what every *RevertError is (errors.Is).
var ErrReverted = errors.New("execution reverted")

// RevertError is a call that reverted, with its reason.
type RevertError struct {
	Reason string
}

func (e *RevertError) Error() string {
	if e.Reason == "" {
		return ErrReverted.Error()
	}
	return ErrReverted.Error() + ": " + e.Reason
}

// Is makes errors.Is(err, ErrReverted) true.
func (e *RevertError) Is(target error) bool { return target == ErrReverted }

// Data is the revert data a Solidity contract returns for this reason: the
// selector of Error(string) (0x08c379a0) and the ABI-encoded reason.
func (e *RevertError) Data() []byte {
	t, _ := abi.NewType("string", "", nil)
	packed, err := abi.Arguments{{Type: t}}.Pack(e.Reason)
	if err != nil {
		return nil
	}
	return append([]byte{0x08, 0xc3, 0x79, 0xa0}, packed...)
}

// Revert is the error a contract returns to revert with a reason.
func Revert(reason string) error { return &RevertError{Reason: reason} }

// Revertf is Revert with a formatted reason.
func Revertf(format string, args ...any) error {
	return &RevertError{Reason: fmt.Sprintf(format, args...)}
}

// asFailure turns what a call returned into the failure the chain reports:
// ErrOutOfGas, or a *RevertError.
func asFailure(err error) error {
	if errors.Is(err, ErrOutOfGas) {
		return ErrOutOfGas
	}
	var re *RevertError
	if errors.As(err, &re) {
		return re
	}
	return &RevertError{Reason: err.Error()}
}

// Env is what a running contract sees of the chain: who it is, the block,
// the gas left, and the operations a contract may perform, each under the
// chain's rules and charged to the transaction's gas. An Env is valid only
// during the Execute call it was passed to.
type Env struct {
	chain  *Chain
	self   common.Address
	origin common.Address
	gas    *meter
	depth  int
}

// Self is the address of the running contract.
func (e *Env) Self() common.Address { return e.self }

// Origin is the account that sent the transaction (tx.origin).
func (e *Env) Origin() common.Address { return e.origin }

// ChainID is the chain's id.
func (e *Env) ChainID() uint64 { return e.chain.id }

// BlockNumber is the number of the block the call runs in: the block being
// mined for a transaction, the head for Chain.Call.
func (e *Env) BlockNumber() uint64 { return e.chain.exec.number }

// Time is that block's timestamp, in Unix seconds.
func (e *Env) Time() uint64 { return e.chain.exec.time }

// GasLeft is the gas the transaction has left.
func (e *Env) GasLeft() uint64 { return e.gas.left() }

// UseGas charges gas for the contract's own work.
func (e *Env) UseGas(n uint64) error { return e.gas.use(n) }

// Balance is holder's balance of token (the zero address: the native coin),
// read as one storage read.
func (e *Env) Balance(token, holder common.Address) (*big.Int, error) {
	if err := e.gas.use(StorageReadGas); err != nil {
		return nil, err
	}
	return new(big.Int).Set(e.chain.balance(token, holder)), nil
}

// Allowance is what owner lets spender move of token, read as one storage
// read.
func (e *Env) Allowance(token, owner, spender common.Address) (*big.Int, error) {
	if err := e.gas.use(StorageReadGas); err != nil {
		return nil, err
	}
	return new(big.Int).Set(e.chain.allowance(token, owner, spender)), nil
}

// Load reads one of this contract's storage slots (zero if never written),
// as one storage read.
func (e *Env) Load(key common.Hash) (common.Hash, error) {
	if err := e.gas.use(StorageReadGas); err != nil {
		return common.Hash{}, err
	}
	return e.chain.storageAt(e.self, key), nil
}

// Store writes one of this contract's storage slots, as one storage write.
func (e *Env) Store(key, value common.Hash) error {
	if err := e.gas.use(StorageWriteGas); err != nil {
		return err
	}
	e.chain.setStorage(e.self, key, value)
	return nil
}

// Call calls another account as this contract (msg.sender is Self), with
// native value from this contract's balance (nil: none) and calldata. A
// call to an account without code only moves the value. If the callee
// reverts, its changes are rolled back and its failure is returned; a
// contract that returns that error reverts in turn, as a Solidity contract
// does with a failed call it requires.
func (e *Env) Call(to common.Address, value *big.Int, data []byte) ([]byte, error) {
	if value == nil {
		value = zero
	}
	if value.Sign() < 0 {
		return nil, Revert("negative call value")
	}
	if value.Sign() > 0 {
		if err := e.gas.use(CallValueGas); err != nil {
			return nil, err
		}
	}
	return e.chain.call(e.self, to, value, data, e.origin, e.gas, e.depth+1)
}

// Transfer sends amount of token from this contract's own balance to to:
// for an ERC-20, a transfer call on the token; for the native coin (the
// zero address), a call to to carrying the value.
func (e *Env) Transfer(token, to common.Address, amount *big.Int) error {
	if token == (common.Address{}) {
		_, err := e.Call(to, amount, nil)
		return err
	}
	return e.callToken(token, "transfer", to, amount)
}

// TransferFrom moves amount of an ERC-20 from from to to with the token's
// transferFrom, as this contract: it needs an allowance from from to Self,
// as a contract pulling a user's tokens does.
func (e *Env) TransferFrom(token, from, to common.Address, amount *big.Int) error {
	if token == (common.Address{}) {
		return Revert("the native coin has no transferFrom")
	}
	return e.callToken(token, "transferFrom", from, to, amount)
}

// Approve lets spender move amount of an ERC-20 held by this contract.
func (e *Env) Approve(token, spender common.Address, amount *big.Int) error {
	if token == (common.Address{}) {
		return Revert("the native coin has no approve")
	}
	return e.callToken(token, "approve", spender, amount)
}

// Mint creates amount of an ERC-20 for to, with the token's mint: only the
// token's minters may (Chain.GrantMinter), as only a bridge's router may
// mint its synthetic token. The native coin cannot be minted.
func (e *Env) Mint(token, to common.Address, amount *big.Int) error {
	if token == (common.Address{}) {
		return Revert("the native coin cannot be minted")
	}
	return e.callToken(token, "mint", to, amount)
}

// Burn destroys amount of an ERC-20 held by from, with the token's burn:
// only the token's minters may, and they need no allowance, as a synthetic
// token's router burns what a user sends away.
func (e *Env) Burn(token, from common.Address, amount *big.Int) error {
	if token == (common.Address{}) {
		return Revert("the native coin cannot be burned")
	}
	return e.callToken(token, "burn", from, amount)
}

// callToken calls an ERC-20 function on token the way OpenZeppelin's
// SafeERC20 does: the token must have code, and a call that returns data
// must return true. The last argument is the amount.
func (e *Env) callToken(token common.Address, method string, args ...any) error {
	if amount, _ := args[len(args)-1].(*big.Int); amount == nil || amount.Sign() < 0 || amount.Cmp(maxUint256) > 0 {
		return Revertf("%s: the amount must be between 0 and 2^256-1", method)
	}
	if e.chain.codeAt(token) == nil {
		return Revertf("SafeERC20: %s on %s, which has no code", method, token.Hex())
	}
	data, err := erc20ABI.Pack(method, args...)
	if err != nil {
		return Revertf("SafeERC20: encode %s: %v", method, err)
	}
	out, err := e.Call(token, nil, data)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	vals, err := erc20ABI.Unpack(method, out)
	if ok, isBool := firstBool(vals); err != nil || !isBool || !ok {
		return Revertf("SafeERC20: %s on %s did not succeed", method, token.Hex())
	}
	return nil
}

func firstBool(vals []any) (v, ok bool) {
	if len(vals) != 1 {
		return false, false
	}
	v, ok = vals[0].(bool)
	return v, ok
}

// Emit appends a log from this contract with the given topics (at most
// four) and data.
func (e *Env) Emit(topics []common.Hash, data []byte) error {
	if len(topics) > 4 {
		return Revertf("a log has at most 4 topics, not %d", len(topics))
	}
	cost := uint64(LogGas) + uint64(LogTopicGas)*uint64(len(topics)) + uint64(LogDataGas)*uint64(len(data))
	if err := e.gas.use(cost); err != nil {
		return err
	}
	e.chain.addLog(&types.Log{
		Address: e.self,
		Topics:  append([]common.Hash(nil), topics...),
		Data:    append([]byte(nil), data...),
	})
	return nil
}
