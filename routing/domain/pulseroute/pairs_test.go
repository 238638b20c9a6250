package pulseroute

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// TestPricedPairs holds the pairs a reserves snapshot reads to the paths
// pulsePath builds: every registry token on 369 with USDCh, the native
// coin as WPLS (listed once though the registry has both), and no USDCh
// paired with itself.
func TestPricedPairs(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultContracts()
	usdch := c.USDCh().Token
	pairs := PricedPairs(reg, c)
	seen := map[common.Address]int{}
	for _, p := range pairs {
		if p.B != usdch || p.A == usdch || p.A == (common.Address{}) {
			t.Errorf("pair %s/%s", p.A.Hex(), p.B.Hex())
		}
		seen[p.A]++
	}
	for _, tok := range reg.Tokens(quote.PulseChainID) {
		a := common.HexToAddress(tok.Address)
		if tok.IsNative() {
			a = c.PulseX().WPLS
		}
		if a == usdch {
			continue
		}
		if seen[a] != 1 {
			t.Errorf("%s (%s) is in %d pairs, want 1", tok.Symbol, a.Hex(), seen[a])
		}
		// Every path pulseroute quotes from USDCh to the token goes
		// through a priced pair.
		p := (&Provider{contracts: c}).pulsePath(usdch, a)
		if len(p) != 2 {
			t.Errorf("path to %s: %v", tok.Symbol, p)
		}
	}
}
