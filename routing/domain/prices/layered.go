package prices

import (
	"context"
	"errors"
	"fmt"
)

// Layered asks a primary source and fills in, from a secondary source, only
// the tokens the primary does not price: live mode prices from the
// aggregator's token list first and from the intents provider's list for the
// assets only the latter knows. One source failing leaves the other's prices
// served, with the failure reported beside them: while the primary is down,
// the secondary's prices stand in for every token it prices (a live price
// observed within the maximum age, rather than none).
type Layered struct {
	Primary, Secondary Source
}

var _ Source = Layered{}

// Prices merges the two sources' answers for the chain.
func (l Layered) Prices(ctx context.Context, chainID uint64) (map[string]Price, error) {
	first, perr := l.Primary.Prices(ctx, chainID)
	if perr != nil {
		perr = fmt.Errorf("primary: %w", perr)
	}
	more, serr := l.Secondary.Prices(ctx, chainID)
	if serr != nil {
		serr = fmt.Errorf("secondary: %w", serr)
	}
	if first == nil && more == nil {
		return nil, errors.Join(perr, serr)
	}
	// A new map: the sources' own answers are theirs.
	out := make(map[string]Price, len(first)+len(more))
	for addr, p := range first {
		out[addr] = p
	}
	for addr, p := range more {
		if _, ok := out[addr]; !ok {
			out[addr] = p
		}
	}
	return out, errors.Join(perr, serr)
}
