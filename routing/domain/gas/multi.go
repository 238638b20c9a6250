package gas

import (
	"context"
	"fmt"
	"maps"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Multi routes each chain to its own oracle: chains with a configured RPC
// endpoint read the live fee market, every other chain falls back to the
// default (the sandbox).
type Multi struct {
	byChain  map[uint64]Oracle
	fallback Oracle
}

var _ Oracle = (*Multi)(nil)

// NewMulti returns an oracle that asks overrides[chain.ID] when present and
// fallback otherwise. The map is copied, so the caller may reuse it.
func NewMulti(fallback Oracle, overrides map[uint64]Oracle) *Multi {
	return &Multi{byChain: maps.Clone(overrides), fallback: fallback}
}

// GasPrice asks the oracle responsible for the chain.
func (m *Multi) GasPrice(ctx context.Context, chain *registry.Chain) (Record, error) {
	if o, ok := m.byChain[chain.ID]; ok {
		return o.GasPrice(ctx, chain)
	}
	return m.fallback.GasPrice(ctx, chain)
}

// Unavailable is the oracle of chains no source serves (a live chain whose
// node is not configured): every chain is refused with ErrNoSource, which
// leaves it without a record rather than with an invented one.
type Unavailable struct{}

var _ Oracle = Unavailable{}

// GasPrice refuses every chain.
func (Unavailable) GasPrice(_ context.Context, chain *registry.Chain) (Record, error) {
	return Record{}, fmt.Errorf("gas: chain %d: %w", chain.ID, ErrNoSource)
}
