package suite

import (
	"math"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{3, 3, 3, 1}},
		{[]float64{5, 1, 3}, Spread{3, 1, 5, 3}},
		{[]float64{4, 1, 3, 10}, Spread{3.5, 1, 10, 4}},
		{[]float64{2, math.NaN(), 4, math.Inf(1)}, Spread{3, 2, 4, 2}},
	} {
		if got := SpreadOf(tc.in); got != tc.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	if (Spread{}).Valid() || !SpreadOf([]float64{1}).Valid() {
		t.Fatal("Valid")
	}
}

// TestRatiosPerRound checks that ratios pair each round with the same
// round's reference, and that the median of ratios is not the ratio of
// medians: round 2 is slow on both sides and must not look like a gain.
func TestRatiosPerRound(t *testing.T) {
	swapgate := map[int]float64{1: 600, 2: 300, 3: 660, 4: 1}
	bare := map[int]float64{1: 1000, 2: 500, 3: 1100}
	got := Ratios(swapgate, bare)
	want := []float64{0.6, 0.6, 0.6}
	if len(got) != len(want) {
		t.Fatalf("ratios %v, want %v (round 4 has no reference)", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("ratios %v, want %v", got, want)
		}
	}
	s := SpreadOf(got)
	if math.Abs(s.Median-0.6) > 1e-12 || math.Abs(s.Max-s.Min) > 1e-12 {
		t.Fatalf("spread %+v", s)
	}
	if !math.IsNaN(Ratio(1, 0)) || Ratio(3, 2) != 1.5 {
		t.Fatal("Ratio")
	}
	if v := valuesOf(map[int]float64{3: 30, 1: 10, 2: 20}); v[0] != 10 || v[1] != 20 || v[2] != 30 {
		t.Fatalf("valuesOf %v", v)
	}
}
