package postgres

import (
	"sync"
	"sync/atomic"
)

// walletChannel is the notification channel of fee wallet changes: every
// write of a wallet notifies it, in the write's transaction (so the
// notification goes out when, and only if, the write commits), with
// "<partnerID>/<ecosystem>" as its payload.
const walletChannel = "swapgate_fee_wallets"

// walletKey is the fee-wallet cache's key.
type walletKey struct{ partner, ecosystem string }

// walletCache keeps fee wallets' addresses ("" for none) in front of the
// database, for the quote path, which asks on every partner quote. Another
// node may change a wallet, so entries are kept only while this store
// listens to walletChannel (listen.go): each notification drops its
// entry, and losing the listening connection drops every entry and keeps
// none until it listens again.
//
// A fill (an address read from the database) is kept only if no
// invalidation happened since the read began (gen), so that a read that
// raced a change cannot keep the old address after the change's
// notification was handled. The store's own writes drop their entry after
// their commit, before they return, so that on this node a change is seen
// by everything after it, as with the Pebble store; another node sees it
// once the notification arrives, milliseconds after the commit.
type walletCache struct {
	mu   sync.Mutex
	m    map[walletKey]string
	gen  uint64
	live bool

	hits, misses atomic.Uint64
}

// lookup returns the cached address of k and whether there was one; on a
// miss it returns the generation a fill must present.
func (c *walletCache) lookup(k walletKey) (addr string, ok bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr, ok := c.m[k]; ok {
		c.hits.Add(1)
		return addr, true, 0
	}
	c.misses.Add(1)
	return "", false, c.gen
}

// fill keeps addr for k if the cache is live and nothing was invalidated
// since gen.
func (c *walletCache) fill(k walletKey, addr string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if c.m == nil {
		c.m = map[walletKey]string{}
	}
	c.m[k] = addr
}

// invalidate drops k and voids fills under way.
func (c *walletCache) invalidate(k walletKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
	c.gen++
}

// reset drops every entry, voids fills under way, and says whether fills
// may be kept from now on.
func (c *walletCache) reset(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.gen++
	c.live = live
}
