package pulseroute

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// The encoders and readers below have no caller in the service: the
// provider builds only transferRemote and bridgeAndSwap, and reads only
// quoteGasPayment and getAmountsOut. The ABI keeps the other functions so
// that Decode reads any calldata a pulseroute flow involves (an ERC-20
// approve or transfer, a PulseX swap); the tests build such calldata with
// these helpers to check the ABI's selectors and layouts.

// Bytes32ToAddress reads an address back from a left-padded bytes32,
// refusing words whose upper 12 bytes are not zero (a non-EVM recipient).
func Bytes32ToAddress(b [32]byte) (common.Address, error) {
	for _, x := range b[:12] {
		if x != 0 {
			return common.Address{}, fmt.Errorf("bytes32 %x is not a left-padded address", b)
		}
	}
	return common.BytesToAddress(b[12:]), nil
}

// Approve encodes ERC-20 approve(spender, amount).
func Approve(spender common.Address, amount *big.Int) ([]byte, error) {
	if err := requireAmount("amount", amount); err != nil {
		return nil, fmt.Errorf("approve: %w", err)
	}
	return pack(MethodApprove, spender, amount)
}

// Transfer encodes ERC-20 transfer(to, amount).
func Transfer(to common.Address, amount *big.Int) ([]byte, error) {
	if err := requireAmount("amount", amount); err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	return pack(MethodTransfer, to, amount)
}

// BalanceOfCall encodes ERC-20 balanceOf(owner).
func BalanceOfCall(owner common.Address) ([]byte, error) { return pack(MethodBalanceOf, owner) }

// AllowanceCall encodes ERC-20 allowance(owner, spender).
func AllowanceCall(owner, spender common.Address) ([]byte, error) {
	return pack(MethodAllowance, owner, spender)
}

// Selector returns the 4-byte selector of a method of the known ABIs.
func Selector(method string) ([4]byte, error) {
	m, ok := contractABI.Methods[method]
	if !ok {
		return [4]byte{}, fmt.Errorf("unknown method %q", method)
	}
	return [4]byte(m.ID), nil
}
