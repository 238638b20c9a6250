package pricing

import (
	"math/big"
	"math/bits"

	"github.com/holiman/uint256"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// USDOf values an amount of token units at a USD price.
func USDOf(amount *big.Int, t *registry.Token, price float64) float64 {
	return quote.FromUnits(amount, t.Decimals) * price
}

// USDOf256 values an amount of token units held in a uint256; it equals
// USDOf of the same amount.
func USDOf256(amount *uint256.Int, t *registry.Token, price float64) float64 {
	return quote.FromUnits256(amount, t.Decimals) * price
}

// BpsOf takes bps basis points of an amount, rounded down. Amounts and
// rates that fit uint256 are worked out there, with a 512-bit product, so
// that the result is the only allocation; anything else, negatives
// included, takes big.Int arithmetic.
func BpsOf(amount *big.Int, bps int) *big.Int {
	var a uint256.Int
	if amount.Sign() >= 0 && bps >= 0 && !a.SetFromBig(amount) {
		var out uint256.Int
		if _, overflow := out.MulDivOverflow(&a, uint256.NewInt(uint64(bps)), uint256.NewInt(10_000)); !overflow {
			return NewBig(&out)
		}
	}
	out := new(big.Int).Mul(amount, big.NewInt(int64(bps)))
	return out.Quo(out, big.NewInt(10_000))
}

// wordsPer256 is how many big.Words hold 256 bits on this platform.
const wordsPer256 = 256 / bits.UintSize

// RouteAmounts backs the three big.Int amounts of a built route (pre-fee,
// net and partner fee) with one allocation instead of two per value. Each
// value's words are a capacity-bounded slice of its own array, so later
// arithmetic on one can never write into another.
type RouteAmounts struct {
	ints  [3]big.Int
	words [3][wordsPer256]big.Word
}

// Set makes the i-th value (0 to 2) equal x and returns it.
func (a *RouteAmounts) Set(i int, x *uint256.Int) *big.Int {
	return setWords(&a.ints[i], &a.words[i], x)
}

// bigValue is one big.Int with room for 256 bits, in one allocation.
type bigValue struct {
	i big.Int
	w [wordsPer256]big.Word
}

// NewBig returns x as a big.Int made with a single allocation.
func NewBig(x *uint256.Int) *big.Int {
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

// MulUint64 is x × y. When the product fits 256 bits, as gas amounts do,
// it takes one allocation instead of three.
func MulUint64(x *big.Int, y uint64) *big.Int {
	var ux uint256.Int
	if x.Sign() >= 0 && !ux.SetFromBig(x) {
		if prod, overflow := new(uint256.Int).MulOverflow(&ux, uint256.NewInt(y)); !overflow {
			return NewBig(prod)
		}
	}
	return new(big.Int).Mul(x, new(big.Int).SetUint64(y))
}
