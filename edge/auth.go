package edge

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

var headerAPIKey = []byte("X-API-Key")

// PartnerFinder looks a partner up by the SHA-256 digest of its API key.
type PartnerFinder interface {
	PartnerByKeyDigest(ctx context.Context, digest [32]byte) (*account.Partner, error)
}

// DefaultAuthCacheSize is the partners the authenticator caches by default:
// far more keys than partners send in practice, so that the bound only
// guards memory.
const DefaultAuthCacheSize = 65536

// authenticator resolves X-API-Key values to partners. Keys are never kept:
// only their digests, as in the store. Found partners are cached by digest,
// and the whole cache is dropped whenever an operator changes a partner
// (Invalidate), which is rare, so a rotated or disabled key stops working at
// once without a restart. Only keys that name a partner are cached, so the
// cache holds at most the partners' keys; it is also bounded (max): a fill
// past the bound drops the whole cache, as an invalidation does. That
// costs the next requests a store read each, and needs no eviction order
// kept on every hit of the request path.
type authenticator struct {
	finder PartnerFinder
	max    int64
	size   atomic.Int64
	cache  sync.Map // [32]byte → *account.Partner
	// gen counts invalidations, so that a lookup that raced one does not
	// put a stale partner back into the cache.
	gen atomic.Uint64
	// hits and misses count cache lookups, for metrics.
	hits, misses atomic.Uint64
}

// Authenticate returns the partner of a key, or UNAUTHORIZED for a malformed,
// unknown or disabled key: a key that was sent but is wrong never falls back
// to the anonymous tier.
func (a *authenticator) Authenticate(ctx context.Context, key []byte) (*account.Partner, *apierr.Error) {
	if !account.WellFormedKey(string(key)) {
		return nil, apierr.New(apierr.Unauthorized, "invalid API key")
	}
	d := account.KeyDigest(string(key))
	if v, ok := a.cache.Load(d); ok {
		a.hits.Add(1)
		return check(v.(*account.Partner))
	}
	a.misses.Add(1)
	gen := a.gen.Load()
	p, err := a.finder.PartnerByKeyDigest(ctx, d)
	if errors.Is(err, account.ErrNotFound) {
		return nil, apierr.New(apierr.Unauthorized, "invalid API key")
	}
	if err != nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "partner store unavailable").Wrap(err)
	}
	if a.gen.Load() == gen {
		if _, loaded := a.cache.LoadOrStore(d, p); !loaded && a.size.Add(1) > a.max {
			a.Invalidate("")
		}
	}
	return check(p)
}

func check(p *account.Partner) (*account.Partner, *apierr.Error) {
	if p.Disabled {
		return nil, apierr.New(apierr.Unauthorized, "API key disabled")
	}
	return p, nil
}

// Invalidate drops every cached partner; the admin listener calls it after
// each change it makes.
func (a *authenticator) Invalidate(string) {
	a.gen.Add(1)
	a.cache.Clear()
	a.size.Store(0)
}
