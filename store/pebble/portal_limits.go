package pebblestore

import (
	"context"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/portal"
)

// signInCounters are the portal's sign-in counters of a Pebble store, in
// memory: a Pebble store is one process's (its directory is locked), so
// its counts are all the counts there are, and a restart forgets them,
// which the codes' own tries make harmless. A cluster's nodes share the
// PostgreSQL store, which keeps them in a table.
type signInCounters struct {
	mu sync.Mutex
	m  map[string]portal.Counter
}

// maxSignInCounters bounds the counters kept; past it, those older than
// portal.LimitRetention are swept.
const maxSignInCounters = 100_000

// UpdateSignInCounts applies fn to the counters of keys (in their order; a
// zero portal.Counter for a key not counted) under one lock and keeps them
// as fn left them when it returns nil; it returns fn's error.
func (s *Store) UpdateSignInCounts(ctx context.Context, now time.Time, keys []string, fn func([]portal.Counter) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	c := &s.signIn
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]portal.Counter{}
	}
	cs := make([]portal.Counter, len(keys))
	for i, k := range keys {
		cs[i] = c.m[k]
	}
	if err := fn(cs); err != nil {
		return err
	}
	if len(c.m)+len(keys) > maxSignInCounters {
		c.sweep(now, len(keys))
	}
	for i, k := range keys {
		c.m[k] = cs[i]
	}
	return nil
}

// sweep drops the counters older than portal.LimitRetention and, if room
// for n more is still lacking, the oldest ones. The caller holds c.mu.
func (c *signInCounters) sweep(now time.Time, n int) {
	for k, v := range c.m {
		if now.Sub(v.Start) >= portal.LimitRetention {
			delete(c.m, k)
		}
	}
	for len(c.m)+n > maxSignInCounters {
		var oldest string
		var at time.Time
		for k, v := range c.m {
			if oldest == "" || v.Start.Before(at) {
				oldest, at = k, v.Start
			}
		}
		delete(c.m, oldest)
	}
}

// PortalCodeKey is the key login code digests are keyed with
// (local.SecretSealer.PortalCodeKey says which).
func (s *Store) PortalCodeKey() []byte { return s.seal.PortalCodeKey() }
