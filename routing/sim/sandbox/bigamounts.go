package sandbox

import (
	"math/big"
	"math/bits"

	"github.com/holiman/uint256"
)

// wordsPer256 is how many big.Words hold 256 bits on this platform.
const wordsPer256 = 256 / bits.UintSize

// routeAmounts backs the three big.Int amounts of a built route (pre-fee,
// net and partner fee) with one allocation instead of two per value. Each
// value's words are a capacity-bounded slice of its own array, so later
// arithmetic on one can never write into another.
type routeAmounts struct {
	ints  [3]big.Int
	words [3][wordsPer256]big.Word
}

// set makes ints[i] equal x, backed by words[i].
func (a *routeAmounts) set(i int, x *uint256.Int) *big.Int {
	return setWords(&a.ints[i], &a.words[i], x)
}

// bigValue is one big.Int with room for 256 bits, in one allocation.
type bigValue struct {
	i big.Int
	w [wordsPer256]big.Word
}

// newBig returns x as a big.Int made with a single allocation.
func newBig(x *uint256.Int) *big.Int {
	v := new(bigValue)
	return setWords(&v.i, &v.w, x)
}

// setWords makes dst equal x, backed by w.
func setWords(dst *big.Int, w *[wordsPer256]big.Word, x *uint256.Int) *big.Int {
	if bits.UintSize == 64 {
		for j := range x {
			w[j] = big.Word(x[j])
		}
	} else {
		for j := range x {
			w[2*j] = big.Word(x[j])
			w[2*j+1] = big.Word(x[j] >> 32)
		}
	}
	// SetBits trims leading zero words and keeps the slice as the value;
	// its capacity ends with w, so growing dst later reallocates.
	return dst.SetBits(w[:])
}

// mulUint64 is x × y. When the product fits 256 bits, as gas amounts do,
// it takes one allocation instead of three.
func mulUint64(x *big.Int, y uint64) *big.Int {
	var ux uint256.Int
	if x.Sign() >= 0 && !ux.SetFromBig(x) {
		if prod, overflow := new(uint256.Int).MulOverflow(&ux, uint256.NewInt(y)); !overflow {
			return newBig(prod)
		}
	}
	return new(big.Int).Mul(x, new(big.Int).SetUint64(y))
}
