package onramp

import (
	"math/big"
	"strconv"
	"strings"
)

// Cents is an amount of fiat in its currency's minor unit. Every supported
// currency has two decimals.
type Cents int64

// String writes c as a decimal with two places, the form every fiat amount
// takes in answers ("100.00", "0.42").
func (c Cents) String() string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := strconv.FormatInt(int64(c)/100, 10) + "." + twoDigits(int64(c)%100)
	if neg {
		return "-" + s
	}
	return s
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Rat is c as an exact rational amount of whole currency units.
func (c Cents) Rat() *big.Rat { return big.NewRat(int64(c), 100) }

// centsOf converts an exact amount of whole currency units to cents when it
// is a whole number of cents and fits; ok is false otherwise.
func centsOf(r *big.Rat) (Cents, bool) {
	scaled := new(big.Rat).Mul(r, big.NewRat(100, 1))
	if !scaled.IsInt() || !scaled.Num().IsInt64() {
		return 0, false
	}
	return Cents(scaled.Num().Int64()), true
}

// roundHalfUp rounds a non-negative rational to the nearest cent, halves
// up: the rounding of fees stated as a share of an amount.
func roundHalfUp(r *big.Rat) Cents {
	scaled := new(big.Rat).Mul(r, big.NewRat(100, 1))
	q, m := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(scaled.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return Cents(q.Int64())
}

// roundUp rounds a non-negative rational up to the cent: the rounding of a
// cost the service must cover in full (the network fee).
func roundUp(r *big.Rat) Cents {
	scaled := new(big.Rat).Mul(r, big.NewRat(100, 1))
	q, m := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return Cents(q.Int64())
}

// bpsOf is amount × bps / 10,000 rounded half up to the cent.
func bpsOf(amount Cents, bps int) Cents {
	return roundHalfUp(new(big.Rat).Mul(amount.Rat(), big.NewRat(int64(bps), 10_000)))
}

// significant rounds a positive rational to n significant decimal digits,
// halves up, and returns it exactly.
func significant(r *big.Rat, n int) *big.Rat {
	if r.Sign() <= 0 {
		return new(big.Rat)
	}
	// The exponent e with 10^(e-1) <= r < 10^e.
	e := len(new(big.Int).Quo(r.Num(), r.Denom()).String())
	if r.Cmp(big.NewRat(1, 1)) < 0 {
		e = 0
		for t := new(big.Rat).Set(r); t.Cmp(big.NewRat(1, 10)) < 0; t.Mul(t, big.NewRat(10, 1)) {
			e--
		}
	}
	shift := n - e // multiply by 10^shift, round to an integer, divide back
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(shift))), nil))
	scaled := new(big.Rat).Set(r)
	if shift >= 0 {
		scaled.Mul(scaled, scale)
	} else {
		scaled.Quo(scaled, scale)
	}
	q, m := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(scaled.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	out := new(big.Rat).SetInt(q)
	if shift >= 0 {
		return out.Quo(out, scale)
	}
	return out.Mul(out, scale)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// decimalString writes an exact rational with a finite decimal expansion
// without trailing zeros ("3012.4512", "0.000030123"); places bounds the
// digits after the point.
func decimalString(r *big.Rat, places int) string {
	s := r.FloatString(places)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// truncate cuts a non-negative rational to places decimal places.
func truncate(r *big.Rat, places int) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	n := new(big.Int).Mul(r.Num(), scale)
	n.Quo(n, r.Denom())
	return new(big.Rat).SetFrac(n, scale)
}
