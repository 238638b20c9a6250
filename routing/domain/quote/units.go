package quote

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/holiman/uint256"
)

// Unit conversions run for every leg of every quote, so they have exact
// fast paths that do not allocate. Each fast path returns the very float
// (or integer) the arbitrary-precision reference would: the reference
// functions toUnitsBig and fromUnitsBig stay the definition, are used
// outside the fast paths' ranges, and tests compare the two.

// pow10f are the powers of ten a float64 holds exactly (10^22 is the last).
var pow10f = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// pow10u are the powers of ten a uint64 holds (10^19 is the last).
var pow10u = [...]uint64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// two64 and two256 bound the integer fast paths.
const (
	two64  = 1 << 64
	two256 = 0x1p256
)

// ToUnits converts a float amount of whole tokens into base units, rounded
// toward zero.
func ToUnits(whole float64, decimals uint8) *big.Int {
	if x, ok := scaledUnits(whole, decimals); ok && x < two64 {
		return new(big.Int).SetUint64(uint64(x))
	}
	return toUnitsBig(whole, decimals)
}

// ToUnits256 is ToUnits into a uint256; ok is false when the result is
// negative or does not fit in 256 bits.
func ToUnits256(whole float64, decimals uint8) (z uint256.Int, ok bool) {
	x, fast := scaledUnits(whole, decimals)
	switch {
	case fast && x < two64:
		z.SetUint64(uint64(x))
		return z, true
	case fast && x < two256:
		// x is an integer here (it is at least 2^64 > 2^53), so its
		// 53-bit mantissa shifted by its exponent is exact.
		mant, exp := math.Frexp(x)
		z.SetUint64(uint64(math.Ldexp(mant, 53)))
		z.Lsh(&z, uint(exp-53))
		return z, true
	case fast:
		return z, false
	}
	b := toUnitsBig(whole, decimals)
	if b.Sign() < 0 {
		return z, false
	}
	overflow := z.SetFromBig(b)
	return z, !overflow
}

// scaledUnits is whole × 10^decimals truncated, as a float64, when the
// product rounds exactly as toUnitsBig's 53-bit big.Float product does:
// 10^decimals is exact in a float64 and whole is finite and not negative.
func scaledUnits(whole float64, decimals uint8) (float64, bool) {
	if int(decimals) >= len(pow10f) || !(whole >= 0) || math.IsInf(whole, 0) {
		return 0, false
	}
	return math.Trunc(whole * pow10f[decimals]), true
}

// toUnitsBig is the reference conversion.
func toUnitsBig(whole float64, decimals uint8) *big.Int {
	f := new(big.Float).SetFloat64(whole)
	f.Mul(f, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	i, _ := f.Int(nil)
	return i
}

// FromUnits converts base units into a float amount of whole tokens.
func FromUnits(units *big.Int, decimals uint8) float64 {
	if units.Sign() >= 0 && units.IsUint64() && int(decimals) < len(pow10u) {
		return fromUnits64(units.Uint64(), decimals)
	}
	return fromUnitsBig(units, decimals)
}

// FromUnits256 is FromUnits of a uint256.
func FromUnits256(units *uint256.Int, decimals uint8) float64 {
	if units.IsUint64() && int(decimals) < len(pow10u) {
		return fromUnits64(units.Uint64(), decimals)
	}
	return fromUnitsBig(units.ToBig(), decimals)
}

// fromUnitsBig is the reference conversion: the quotient is rounded to the
// dividend's precision (at least 64 bits), then to a float64.
func fromUnitsBig(units *big.Int, decimals uint8) float64 {
	f := new(big.Float).SetInt(units)
	f.Quo(f, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	v, _ := f.Float64()
	return v
}

// fromUnits64 is fromUnitsBig for a uint64 and 10^decimals < 2^64, in
// integer arithmetic: the quotient is rounded to 64 bits, nearest even, as
// big.Float's Quo does at the dividend's 64-bit precision, and that value
// rounded again to 53 bits, as Float64 does.
func fromUnits64(u uint64, decimals uint8) float64 {
	if u == 0 {
		return 0
	}
	v := pow10u[decimals]
	a, b := bits.LeadingZeros64(u), bits.LeadingZeros64(v)
	un, vn := u<<a, v<<b // both in [2^63, 2^64)
	// u/v = un/vn × 2^(b-a); q is the first 64 bits of un/vn.
	var q, r uint64
	exp := b - a
	if un < vn {
		q, r = bits.Div64(un, 0, vn) // un/vn = q × 2^-64 + r/vn × 2^-64
		exp -= 64
	} else {
		q, r = bits.Div64(un>>1, un<<63, vn) // un/vn = q × 2^-63 + ...
		exp -= 63
	}
	if half := vn - r; r > half || (r == half && q&1 == 1) {
		q++
		if q == 0 {
			q = 1 << 63
			exp++
		}
	}
	m, low := q>>11, q&0x7ff
	if low > 0x400 || (low == 0x400 && m&1 == 1) {
		m++
	}
	return math.Ldexp(float64(m), exp+11)
}
