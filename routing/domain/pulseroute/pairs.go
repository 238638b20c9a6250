package pulseroute

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Pair is a PulseX pair by its two tokens, in no particular order.
type Pair struct{ A, B common.Address }

// PricedPairs are the PulseX pairs pulseroute's paths on chain 369 go
// through: every registry token on 369 (the native coin as WPLS) with
// USDCh, since a path is direct when either end is USDCh and through USDCh
// otherwise (pulsePath). A reader that prices PulseX from pool reserves
// reads these pairs; a path with a hop outside them is priced by the
// router. The order follows the registry's, without duplicates.
func PricedPairs(reg *registry.Registry, c *Contracts) []Pair {
	usdch := c.USDCh().Token
	seen := map[common.Address]bool{usdch: true}
	var out []Pair
	for _, t := range reg.Tokens(quote.PulseChainID) {
		a := c.PulseX().WPLS
		if !t.IsNative() {
			a = common.HexToAddress(t.Address)
		}
		if seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, Pair{A: a, B: usdch})
	}
	return out
}
