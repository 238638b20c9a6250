package pricing

import (
	"math/big"
	"testing"

	"github.com/holiman/uint256"
)

// TestRouteAmountsMatchToBig checks each slot against uint256's own ToBig
// and that growing one value leaves its neighbours alone.
func TestRouteAmountsMatchToBig(t *testing.T) {
	values := []*uint256.Int{
		uint256.NewInt(0), uint256.NewInt(1), uint256.NewInt(1_000_000),
		new(uint256.Int).Lsh(uint256.NewInt(1), 64), new(uint256.Int).Lsh(uint256.NewInt(3), 190),
		new(uint256.Int).SetAllOne(),
	}
	for _, x := range values {
		a := new(RouteAmounts)
		got := [3]*big.Int{a.Set(0, x), a.Set(1, x), a.Set(2, x)}
		for i, g := range got {
			if g.Cmp(x.ToBig()) != 0 {
				t.Errorf("slot %d of %s = %s", i, x, g)
			}
		}
		got[1].Mul(got[1], new(big.Int).Lsh(big.NewInt(1), 300))
		if got[0].Cmp(x.ToBig()) != 0 || got[2].Cmp(x.ToBig()) != 0 {
			t.Errorf("growing slot 1 of %s changed its neighbours: %s, %s", x, got[0], got[2])
		}
	}
}

// TestMulUint64 checks the one-allocation product against big.Int.Mul,
// including products past 256 bits and negative factors, which take the
// general path.
func TestMulUint64(t *testing.T) {
	huge := new(big.Int).Lsh(big.NewInt(1), 250)
	tests := []struct {
		x *big.Int
		y uint64
	}{
		{big.NewInt(0), 21_000},
		{big.NewInt(1), 0},
		{big.NewInt(30_000_000_000), 120_000},
		{new(big.Int).Lsh(big.NewInt(1), 100), ^uint64(0)},
		{huge, 1 << 5},
		{huge, 1 << 6},
		{new(big.Int).Lsh(big.NewInt(1), 300), 3},
		{big.NewInt(-7), 3},
	}
	for _, tt := range tests {
		want := new(big.Int).Mul(tt.x, new(big.Int).SetUint64(tt.y))
		if got := MulUint64(tt.x, tt.y); got.Cmp(want) != 0 {
			t.Errorf("MulUint64(%s, %d) = %s, want %s", tt.x, tt.y, got, want)
		}
	}
}

// TestBpsOf checks the uint256 path against big.Int arithmetic, across
// the 256-bit bound and for negative inputs, which keep big.Int's
// truncation toward zero.
func TestBpsOf(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	tests := []struct {
		amount *big.Int
		bps    int
	}{
		{big.NewInt(0), 30},
		{big.NewInt(1_000_000_000), 30},
		{big.NewInt(9_999), 1},
		{big.NewInt(123_456_789), 10_000},
		{max, 30},
		{max, 10_000},
		{max, 20_000},
		{new(big.Int).Lsh(big.NewInt(1), 300), 30},
		{big.NewInt(-1_000_001), 30},
		{big.NewInt(1_000_001), -30},
	}
	for _, tt := range tests {
		want := new(big.Int).Mul(tt.amount, big.NewInt(int64(tt.bps)))
		want.Quo(want, big.NewInt(10_000))
		if got := BpsOf(tt.amount, tt.bps); got.Cmp(want) != 0 {
			t.Errorf("BpsOf(%s, %d) = %s, want %s", tt.amount, tt.bps, got, want)
		}
	}
}
