// Package prices provides USD prices of the registry's tokens. Consumers depend
// on the one-method Source interface; the refdata actors poll it per chain and
// cache the answers, so a Source is called a few times a minute, never on the
// request path. Every price carries the time it was observed, so that a price
// older than the service's maximum age is not served (see Snapshot).
package prices

import (
	"context"
	"errors"
	"time"
)

// Price is one token's USD price as a source observed it.
type Price struct {
	// USD is the price of one whole token in US dollars.
	USD float64
	// ObservedAt is when the source observed the price: the upstream's own
	// stamp where it gives one, else the time of the fetch. Zero means the
	// source does not know, and the reader stamps it with the time it got
	// the answer.
	ObservedAt time.Time
	// LogoURI is the source's image of the token, "" when it has none.
	LogoURI string
}

// Source gives the USD price of every token it knows on one chain, keyed by
// lower-case token address (the native token under its registry address).
// Tokens it cannot price are absent from the map rather than zero. A source
// may answer with the prices it has together with an error that says what
// it could not read.
type Source interface {
	Prices(ctx context.Context, chainID uint64) (map[string]Price, error)
}

// ErrUnknownChain is returned for a chain the source has no tokens for.
var ErrUnknownChain = errors.New("prices: unknown chain")
