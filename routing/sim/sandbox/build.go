package sandbox

import (
	"context"
	"fmt"

	"github.com/swapgate/swapgate/routing/domain/pricing"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// legKind says which builder a pending leg runs.
type legKind uint8

const (
	legAggregator legKind = iota
	legIntents
)

// pendingLeg is a priced aggregator or intents leg waiting to be built. The
// route lives inside it, so pricing a leg costs one allocation; the engine
// builds only the routes it shows (quote.Complete), and a losing leg never
// packs calldata or makes its cost lists.
type pendingLeg struct {
	route       quote.Route
	m           *Market
	kind        legKind
	tool        *tools.Tool
	p           legPricing
	g           pricing.GasPlan
	erc20Source bool
}

var _ quote.Builder = (*pendingLeg)(nil)

// Build completes the route. It is called at most once per route.
func (b *pendingLeg) Build(_ context.Context, req *quote.Request, r *quote.Route) error {
	if r != &b.route {
		return fmt.Errorf("sandbox: %s: builder given another route", b.tool.Key)
	}
	switch b.kind {
	case legIntents:
		return b.buildIntents(req, r)
	default:
		return b.buildAggregator(req, r)
	}
}
