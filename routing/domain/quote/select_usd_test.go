package quote

import "testing"

// TestRankPutsUnknownUSDLast: a route valued without its prices (NoUSD)
// ranks after every route with known figures under the USD orders, and
// never beats one by a comparison with NaN.
func TestRankPutsUnknownUSDLast(t *testing.T) {
	known := func(tool string, out, gas, fee float64) *Route {
		return &Route{Tool: tool, ToAmountUSD: out, ExecutionDuration: 60,
			GasCosts: []GasCost{{AmountUSD: gas}}, FeeCosts: []FeeCost{{AmountUSD: fee}}}
	}
	unknown := &Route{Tool: "a-unpriced", ToAmountUSD: NoUSD(), ExecutionDuration: 60,
		GasCosts: []GasCost{{AmountUSD: NoUSD()}}, FeeCosts: []FeeCost{{AmountUSD: NoUSD()}}}
	for _, tc := range []struct {
		order Order
		want  []string
	}{
		{Recommended, []string{"b-best", "c-worse", "a-unpriced"}},
		{Cheapest, []string{"b-best", "c-worse", "a-unpriced"}},
	} {
		routes := []*Route{unknown, known("c-worse", 90, 2, 3), known("b-best", 99, 1, 1)}
		Rank(routes, tc.order, "")
		for i, r := range routes {
			if r.Tool != tc.want[i] {
				t.Errorf("order %v: position %d is %s, want %v", tc.order, i, r.Tool, tc.want)
				break
			}
		}
	}
}
