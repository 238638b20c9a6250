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
	w := a.words[i][:]
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
	// SetBits trims leading zero words and keeps the slice as the value.
	return a.ints[i].SetBits(w[:len(w):len(w)])
}
