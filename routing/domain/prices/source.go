// Package prices provides USD prices of the registry's tokens. Consumers depend
// on the one-method Source interface; the refdata actors poll it per chain and
// cache the answers, so a Source is called a few times a minute, never on the
// request path.
package prices

import (
	"context"
	"errors"
)

// Source gives the USD price of every token it knows on one chain, keyed by
// lower-case token address (the native token under its registry address).
// Tokens it cannot price are absent from the map rather than zero.
type Source interface {
	Prices(ctx context.Context, chainID uint64) (map[string]float64, error)
}

// ErrUnknownChain is returned for a chain the source has no tokens for.
var ErrUnknownChain = errors.New("prices: unknown chain")
