package sandbox

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
		a := new(routeAmounts)
		got := [3]*big.Int{a.set(0, x), a.set(1, x), a.set(2, x)}
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
