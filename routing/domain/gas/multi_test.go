package gas

import (
	"context"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fixedOracle answers every chain with the same marker record.
type fixedOracle struct{ mark int64 }

func (f fixedOracle) GasPrice(_ context.Context, c *registry.Chain) (Record, error) {
	return Record{ChainID: c.ID, LastUpdated: f.mark}, nil
}

func TestMultiRoutesByChain(t *testing.T) {
	overrides := map[uint64]Oracle{369: fixedOracle{mark: 2}}
	m := NewMulti(fixedOracle{mark: 1}, overrides)
	delete(overrides, 369) // the oracle keeps its own copy
	tests := []struct {
		chain uint64
		want  int64
	}{{369, 2}, {1, 1}, {8453, 1}}
	for _, tc := range tests {
		rec, err := m.GasPrice(context.Background(), &registry.Chain{ID: tc.chain, ChainType: registry.EVM})
		if err != nil {
			t.Fatal(err)
		}
		if rec.LastUpdated != tc.want || rec.ChainID != tc.chain {
			t.Errorf("chain %d answered by oracle %d, want %d", tc.chain, rec.LastUpdated, tc.want)
		}
	}
}
