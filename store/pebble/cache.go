package pebblestore

import (
	"sync"
	"sync/atomic"
)

// readCache is a read-through cache in front of Pebble for records read far
// more often than written (fee wallets, webhook registrations). A hit takes
// no lock. A miss fills the entry under mu, and every write of a cached
// record updates or drops its entry under mu after its commit, so a fill
// that read a record before a write committed has stored it before the
// write replaces it: the cache never outlives an acknowledged write. A
// positive limit bounds the entries; past it, fills are not kept. hits and
// misses count lookups, for metrics (Store.CacheStats).
type readCache[K comparable, V any] struct {
	m            sync.Map // K → V
	mu           sync.Mutex
	n, limit     int
	hits, misses atomic.Uint64
}

// get returns the cached value of key, or what fill returns, kept unless it
// is an error.
func (c *readCache[K, V]) get(key K, fill func() (V, error)) (V, error) {
	if v, ok := c.m.Load(key); ok {
		c.hits.Add(1)
		return v.(V), nil
	}
	c.misses.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m.Load(key); ok {
		return v.(V), nil
	}
	v, err := fill()
	if err == nil {
		c.storeLocked(key, v)
	}
	return v, err
}

// set records a write's value after its commit.
func (c *readCache[K, V]) set(key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeLocked(key, v)
}

func (c *readCache[K, V]) storeLocked(key K, v V) {
	if _, ok := c.m.Load(key); !ok {
		if c.limit > 0 && c.n >= c.limit {
			return
		}
		c.n++
	}
	c.m.Store(key, v)
}

// drop forgets key, after a write that removed its record or whose outcome
// is unknown.
func (c *readCache[K, V]) drop(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m.LoadAndDelete(key); ok {
		c.n--
	}
}
