package suite

import (
	"math"
	"slices"
)

// Spread is a figure over the rounds of a suite: its median and its
// range. Medians resist the odd round spoiled by another process on a
// shared machine; the range shows how much the rounds disagreed.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// N is the number of rounds the figure has.
	N int `json:"n"`
}

// Valid reports whether the spread holds any value.
func (s Spread) Valid() bool { return s.N > 0 }

// SpreadOf returns the median, min and max of vs, ignoring NaNs (a ratio
// with a zero denominator). The median of an even count is the mean of the
// two middle values.
func SpreadOf(vs []float64) Spread {
	clean := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			clean = append(clean, v)
		}
	}
	if len(clean) == 0 {
		return Spread{}
	}
	slices.Sort(clean)
	n := len(clean)
	med := clean[n/2]
	if n%2 == 0 {
		med = (clean[n/2-1] + clean[n/2]) / 2
	}
	return Spread{Median: med, Min: clean[0], Max: clean[n-1], N: n}
}

// Ratio is a/b, or NaN when b is zero (no reference to divide by).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// Ratios divides each round's value by the same round's reference: the
// suite compares with the bare server as measured in the same round, so
// that a round slowed down by the machine is slowed down on both sides.
// Rounds missing on either side are skipped.
func Ratios(values, refs map[int]float64) []float64 {
	rounds := make([]int, 0, len(values))
	for r := range values {
		if _, ok := refs[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	out := make([]float64, 0, len(rounds))
	for _, r := range rounds {
		out = append(out, Ratio(values[r], refs[r]))
	}
	return out
}

// valuesOf returns the map's values in round order.
func valuesOf(m map[int]float64) []float64 {
	rounds := make([]int, 0, len(m))
	for r := range m {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	out := make([]float64, 0, len(m))
	for _, r := range rounds {
		out = append(out, m[r])
	}
	return out
}

// one is the spread of a single value.
func one(v float64) Spread { return Spread{Median: v, Min: v, Max: v, N: 1} }
