package sandbox

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// wordSize is the width of one ABI word.
const wordSize = 32

// Head sizes of the two router methods: swap takes eight static words;
// bridge takes nine, one of them the offset of its dynamic receiver.
const (
	swapHeadWords   = 8
	bridgeHeadWords = 9
)

// routerCalls encodes the two sandbox router methods by hand. Every EVM
// quote carries one of these calls, and the reflection-driven abi.Pack spent
// dozens of allocations on each; the layouts are fixed, so the encoder
// writes words straight into one buffer sized up front. The selectors come
// from the parsed RouterABI, so the encoding cannot drift from the ABI the
// tests decode with.
type routerCalls struct {
	swapID   [4]byte
	bridgeID [4]byte
}

// newRouterCalls takes the selectors of swap and bridge from the router ABI.
func newRouterCalls(a abi.ABI) (routerCalls, error) {
	var c routerCalls
	swap, ok := a.Methods["swap"]
	if !ok {
		return c, errors.New("sandbox: router ABI has no swap method")
	}
	bridge, ok := a.Methods["bridge"]
	if !ok {
		return c, errors.New("sandbox: router ABI has no bridge method")
	}
	copy(c.swapID[:], swap.ID)
	copy(c.bridgeID[:], bridge.ID)
	return c, nil
}

// errNegative and errTooWide reject amounts a uint256 cannot hold. abi.Pack
// rejects negatives too; it would silently wrap values wider than 256 bits,
// which for an amount is never what the caller meant.
var (
	errNegative = errors.New("negative value for a uint256")
	errTooWide  = errors.New("value wider than 256 bits for a uint256")
	errNilValue = errors.New("nil value for a uint256")
)

// appendUint256 appends x as one big-endian word.
func appendUint256(buf []byte, x *big.Int) ([]byte, error) {
	switch {
	case x == nil:
		return buf, errNilValue
	case x.Sign() < 0:
		return buf, errNegative
	case x.BitLen() > 256:
		return buf, errTooWide
	}
	n := len(buf)
	buf = append(buf, make([]byte, wordSize)...)
	x.FillBytes(buf[n:])
	return buf, nil
}

// appendUint64 appends v as one big-endian word.
func appendUint64(buf []byte, v uint64) []byte {
	var w [wordSize]byte
	for i := 0; i < 8; i++ {
		w[wordSize-1-i] = byte(v >> (8 * i))
	}
	return append(buf, w[:]...)
}

// appendAddress appends a left-padded address word.
func appendAddress(buf []byte, a common.Address) []byte {
	var w [wordSize]byte
	copy(w[wordSize-common.AddressLength:], a[:])
	return append(buf, w[:]...)
}

// appendBytes appends the tail of a dynamic bytes value: its length word,
// then the bytes right-padded to whole words.
func appendBytes(buf []byte, b []byte) []byte {
	buf = appendUint64(buf, uint64(len(b)))
	buf = append(buf, b...)
	if r := len(b) % wordSize; r != 0 {
		var pad [wordSize]byte
		buf = append(buf, pad[:wordSize-r]...)
	}
	return buf
}

// paddedLen is len(b) rounded up to whole words.
func paddedLen(b []byte) int { return (len(b) + wordSize - 1) / wordSize * wordSize }

// swap encodes swap(quoteId, fromToken, fromAmount, toToken, minAmountOut,
// receiver, feeBps, feeRecipient).
func (c routerCalls) swap(quoteRef [32]byte, fromToken common.Address, fromAmount *big.Int, toToken common.Address, minOut *big.Int, receiver common.Address, feeBps uint16, feeTo common.Address) ([]byte, error) {
	buf := make([]byte, 0, len(c.swapID)+swapHeadWords*wordSize)
	buf = append(buf, c.swapID[:]...)
	buf = append(buf, quoteRef[:]...)
	buf = appendAddress(buf, fromToken)
	buf, err := appendUint256(buf, fromAmount)
	if err != nil {
		return nil, fmt.Errorf("fromAmount: %w", err)
	}
	buf = appendAddress(buf, toToken)
	if buf, err = appendUint256(buf, minOut); err != nil {
		return nil, fmt.Errorf("minAmountOut: %w", err)
	}
	buf = appendAddress(buf, receiver)
	buf = appendUint64(buf, uint64(feeBps))
	return appendAddress(buf, feeTo), nil
}

// bridge encodes bridge(quoteId, fromToken, fromAmount, toChainId, toToken,
// minAmountOut, receiver, feeBps, feeRecipient). receiver is the one dynamic
// argument: its head word is the offset of its tail, which follows the head.
func (c routerCalls) bridge(quoteRef [32]byte, fromToken common.Address, fromAmount *big.Int, toChainID uint64, toToken [32]byte, minOut *big.Int, receiver []byte, feeBps uint16, feeTo common.Address) ([]byte, error) {
	buf := make([]byte, 0, len(c.bridgeID)+(bridgeHeadWords+1)*wordSize+paddedLen(receiver))
	buf = append(buf, c.bridgeID[:]...)
	buf = append(buf, quoteRef[:]...)
	buf = appendAddress(buf, fromToken)
	buf, err := appendUint256(buf, fromAmount)
	if err != nil {
		return nil, fmt.Errorf("fromAmount: %w", err)
	}
	buf = appendUint64(buf, toChainID)
	buf = append(buf, toToken[:]...)
	if buf, err = appendUint256(buf, minOut); err != nil {
		return nil, fmt.Errorf("minAmountOut: %w", err)
	}
	buf = appendUint64(buf, bridgeHeadWords*wordSize)
	buf = appendUint64(buf, uint64(feeBps))
	buf = appendAddress(buf, feeTo)
	return appendBytes(buf, receiver), nil
}
