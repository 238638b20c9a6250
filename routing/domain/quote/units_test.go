package quote

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/holiman/uint256"
)

// TestFromUnitsMatchesReference checks the integer fast path against the
// big.Float reference bit for bit, on random amounts of every width and on
// amounts built to sit on rounding ties.
func TestFromUnitsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(u uint64, d uint8) {
		t.Helper()
		want := fromUnitsBig(new(big.Int).SetUint64(u), d)
		if got := fromUnits64(u, d); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("fromUnits64(%d, %d) = %v, reference %v", u, d, got, want)
		}
		var z uint256.Int
		z.SetUint64(u)
		if got := FromUnits256(&z, d); got != want {
			t.Fatalf("FromUnits256(%d, %d) = %v, reference %v", u, d, got, want)
		}
	}
	for i := 0; i < 60_000; i++ {
		d := uint8(rng.IntN(len(pow10u)))
		u := rng.Uint64() >> rng.IntN(64)
		check(u, d)
		// Multiples of powers of ten near the 53-bit boundary land on
		// exact and near-tie quotients.
		m := (uint64(1)<<53 + uint64(rng.IntN(4096)) - 2048) | 1
		if p := pow10u[d%8]; m < math.MaxUint64/p {
			check(m*p, d%8)
			check(m*p+1, d%8)
			check(m*p-1, d%8)
		}
	}
	for _, u := range []uint64{0, 1, 2, 9, 10, 1 << 53, 1<<53 + 1, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		for d := range uint8(len(pow10u)) {
			check(u, d)
		}
	}
	// Outside the fast path: negative, wide and 30-decimal amounts.
	wide, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	for _, c := range []struct {
		u *big.Int
		d uint8
	}{{big.NewInt(-5), 6}, {wide, 18}, {big.NewInt(12345), 30}} {
		if got, want := FromUnits(c.u, c.d), fromUnitsBig(c.u, c.d); got != want {
			t.Errorf("FromUnits(%s, %d) = %v, reference %v", c.u, c.d, got, want)
		}
	}
}

// TestToUnitsMatchesReference checks ToUnits and ToUnits256 against the
// big.Float reference.
func TestToUnitsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(w float64, d uint8) {
		t.Helper()
		want := toUnitsBig(w, d)
		if got := ToUnits(w, d); got.Cmp(want) != 0 {
			t.Fatalf("ToUnits(%v, %d) = %s, reference %s", w, d, got, want)
		}
		z, ok := ToUnits256(w, d)
		if fits := want.Sign() >= 0 && want.BitLen() <= 256; ok != fits || (ok && z.ToBig().Cmp(want) != 0) {
			t.Fatalf("ToUnits256(%v, %d) = %s %v, reference %s", w, d, z.Dec(), ok, want)
		}
	}
	for i := 0; i < 40_000; i++ {
		d := uint8(rng.IntN(31))
		w := rng.Float64() * math.Pow(10, float64(rng.IntN(40)-10))
		check(w, d)
	}
	for _, w := range []float64{0, 1, 0.1, 0.3, 999.999, 1e40, 1e60, 1.5e77, 2e77, -1, -0.5} {
		for _, d := range []uint8{0, 6, 8, 9, 18, 22, 23, 30} {
			check(w, d)
		}
	}
}

func TestSplitFee256MatchesSplitFee(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 10_000; i++ {
		var a uint256.Int
		a.SetUint64(rng.Uint64())
		if i%3 == 0 {
			a.Lsh(&a, uint(rng.IntN(190)))
		}
		bps := rng.IntN(501)
		wantNet, wantFee := SplitFee(a.ToBig(), bps)
		net, fee := SplitFee256(&a, bps)
		if net.ToBig().Cmp(wantNet) != 0 || fee.ToBig().Cmp(wantFee) != 0 {
			t.Fatalf("SplitFee256(%s, %d) = %s, %s; want %s, %s", a.Dec(), bps, net.Dec(), fee.Dec(), wantNet, wantFee)
		}
	}
}
