package refdata

import (
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
)

// gasEntry is the published gas record of one chain and its version, under
// the same rules as prices.Snapshot: one version stands for one servable
// answer, a record or its absence.
type gasEntry struct {
	Record  gas.Record
	Version uint64
	// ReadAt is when the oracle last answered with these figures (an
	// answer with the same figures renews it without a new version); the
	// record is served until it is older than the maximum age.
	ReadAt time.Time
	// Gone is a record dropped for its age: nothing is served under its
	// version.
	Gone bool
}

// servable reports whether e's record may be served at now.
func (e *gasEntry) servable(now time.Time, maxAge time.Duration) bool {
	return e != nil && !e.Gone && prices.Fresh(e.ReadAt, now, maxAge)
}

// version is the version of what e serves at now: its own, or, for a
// record grown too old that the actor has not dropped yet, the version its
// drop will publish, so that readers (the edge's encoded answers) never
// take an absence for the record they encoded. Zero: no record yet.
func (e *gasEntry) version(now time.Time, maxAge time.Duration) uint64 {
	switch {
	case e == nil:
		return 0
	case e.Gone || e.servable(now, maxAge):
		return e.Version
	}
	return e.Version + 1
}

// chainState is where a chain actor publishes its results. The chain actor is
// the only writer, so publishing is a plain load-compare-store; readers only
// load. The atomic pointers are the source of truth, and the ristretto caches
// in front of them serve the hot per-token lookups: a ristretto Set may be
// dropped, so a cache miss falls back to the pointer and never loses data.
type chainState struct {
	id         uint64
	prices     atomic.Pointer[prices.Snapshot]
	gas        atomic.Pointer[gasEntry]
	priceCache *ristretto.Cache[string, prices.Price]
	gasCache   *ristretto.Cache[uint64, *gasEntry]
	// versions hands out price snapshot versions: the actor's snapshots and
	// the readers' expired-price copies (see Service.Prices) each draw a
	// new one, so that one version never stands for two sets of prices.
	versions atomic.Uint64
	// maxAge is how old a price may be and still be served, gasMaxAge a
	// gas record from the oracle's last answer; now is the clock both are
	// judged by.
	maxAge    time.Duration
	gasMaxAge time.Duration
	now       func() time.Time
}

// priceKey is the ristretto key of one token's price.
func priceKey(chainID uint64, lowerAddress string) string {
	return strconv.FormatUint(chainID, 10) + ":" + lowerAddress
}

// publishPrices installs a source's answer, received at now, and reports
// whether the servable values changed (and the version with them). A
// complete answer replaces the chain's prices: a token it leaves out is no
// longer priced. A partial one (the source answered with an error) is
// merged into them: a price it does not renew stays until it is older than
// maxAge, and a token keeps its newest observation. Prices observed too
// long ago are dropped either way; answers without an observation time are
// stamped now.
func (st *chainState) publishPrices(fresh map[string]prices.Price, complete bool, now time.Time) bool {
	old := st.prices.Load()
	merged := make(map[string]prices.Price, len(fresh))
	if old != nil && !complete {
		for addr, usd := range old.ByAddress {
			merged[addr] = prices.Price{USD: usd, ObservedAt: old.ObservedAt[addr], LogoURI: old.Logos[addr]}
		}
	}
	for addr, p := range fresh {
		if p.ObservedAt.IsZero() {
			p.ObservedAt = now
		}
		addr = strings.ToLower(addr)
		if prev, ok := merged[addr]; ok && prev.ObservedAt.After(p.ObservedAt) {
			continue
		}
		merged[addr] = p
	}
	return st.install(old, merged, now)
}

// expirePrices drops the prices that are too old at now and reports
// whether any was dropped.
func (st *chainState) expirePrices(now time.Time) bool {
	old := st.prices.Load()
	if old == nil || old.ExpiresAt.IsZero() || !now.After(old.ExpiresAt) {
		return false
	}
	merged := make(map[string]prices.Price, len(old.ByAddress))
	for addr, usd := range old.ByAddress {
		merged[addr] = prices.Price{USD: usd, ObservedAt: old.ObservedAt[addr], LogoURI: old.Logos[addr]}
	}
	return st.install(old, merged, now)
}

// install publishes the servable part of merged. A snapshot whose values
// (prices and logos) equal the current one's keeps its version and
// UpdatedAt; only its observation times move.
func (st *chainState) install(old *prices.Snapshot, merged map[string]prices.Price, now time.Time) bool {
	next := &prices.Snapshot{ByAddress: make(map[string]float64, len(merged)),
		ObservedAt: make(map[string]time.Time, len(merged))}
	for addr, p := range merged {
		if !prices.Fresh(p.ObservedAt, now, st.maxAge) {
			continue
		}
		next.ByAddress[addr] = p.USD
		next.ObservedAt[addr] = p.ObservedAt
		if p.LogoURI != "" {
			if next.Logos == nil {
				next.Logos = map[string]string{}
			}
			next.Logos[addr] = p.LogoURI
		}
		if exp := p.ObservedAt.Add(st.maxAge); st.maxAge > 0 && (next.ExpiresAt.IsZero() || exp.Before(next.ExpiresAt)) {
			next.ExpiresAt = exp
		}
	}
	if old == nil && len(next.ByAddress) == 0 {
		return false // nothing ever priced: no snapshot yet
	}
	if old != nil && maps.Equal(old.ByAddress, next.ByAddress) && maps.Equal(old.Logos, next.Logos) {
		next.Version, next.UpdatedAt = old.Version, old.UpdatedAt
		st.prices.Store(next)
		st.cachePrices(old, next)
		return false
	}
	next.Version, next.UpdatedAt = st.versions.Add(1), now
	st.prices.Store(next)
	st.cachePrices(old, next)
	return true
}

// cachePrices mirrors a snapshot into the ristretto cache.
func (st *chainState) cachePrices(old, next *prices.Snapshot) {
	for addr, usd := range next.ByAddress {
		st.priceCache.Set(priceKey(st.id, addr), prices.Price{USD: usd, ObservedAt: next.ObservedAt[addr]}, 1)
	}
	if old != nil {
		for addr := range old.ByAddress {
			if _, still := next.ByAddress[addr]; !still {
				st.priceCache.Del(priceKey(st.id, addr))
			}
		}
	}
	// Make the writes visible before the refresh counts as done.
	st.priceCache.Wait()
}

// snapshot is the published snapshot as a reader may serve it at now: when
// a price in it has expired and the actor has not yet dropped it (its
// expiry is on the way, or the actor is busy refreshing), a copy without
// the expired prices, under a version of its own.
func (st *chainState) snapshot(now time.Time) (prices.Snapshot, bool) {
	snap := st.prices.Load()
	if snap == nil {
		return prices.Snapshot{}, false
	}
	if snap.ExpiresAt.IsZero() || !now.After(snap.ExpiresAt) {
		return *snap, true
	}
	cp := prices.Snapshot{Version: st.versions.Add(1), ByAddress: make(map[string]float64, len(snap.ByAddress)),
		ObservedAt: make(map[string]time.Time, len(snap.ByAddress)), UpdatedAt: snap.UpdatedAt}
	for addr, usd := range snap.ByAddress {
		obs := snap.ObservedAt[addr]
		if !prices.Fresh(obs, now, st.maxAge) {
			continue
		}
		cp.ByAddress[addr], cp.ObservedAt[addr] = usd, obs
		if logo, ok := snap.Logos[addr]; ok {
			if cp.Logos == nil {
				cp.Logos = map[string]string{}
			}
			cp.Logos[addr] = logo
		}
		if exp := obs.Add(st.maxAge); cp.ExpiresAt.IsZero() || exp.Before(cp.ExpiresAt) {
			cp.ExpiresAt = exp
		}
	}
	return cp, true
}

// publishGas installs the oracle's answer, read at now, and reports
// whether the record changed (and its version with it). An answer whose
// figures equal the held record's (the timestamp alone does not count)
// only renews its ReadAt, keeping its version, even when the record had
// grown too old but was not yet dropped: that version stands for these
// figures, and the absence in between for the one after it, which a
// changed record skips.
func (st *chainState) publishGas(rec gas.Record, now time.Time) bool {
	old := st.gas.Load()
	if old != nil && !old.Gone && old.Record.ChainID == rec.ChainID && old.Record.Speed == rec.Speed {
		st.storeGas(&gasEntry{Record: old.Record, Version: old.Version, ReadAt: now})
		return false
	}
	st.storeGas(&gasEntry{Record: rec, Version: old.version(now, st.gasMaxAge) + 1, ReadAt: now})
	return true
}

// expireGas drops a record older than the maximum age at now and reports
// whether it did.
func (st *chainState) expireGas(now time.Time) bool {
	old := st.gas.Load()
	if old == nil || old.Gone || old.servable(now, st.gasMaxAge) {
		return false
	}
	st.storeGas(&gasEntry{Version: old.Version + 1, Gone: true})
	return true
}

// storeGas publishes e and mirrors it into the ristretto cache.
func (st *chainState) storeGas(e *gasEntry) {
	st.gas.Store(e)
	st.gasCache.Set(st.id, e, 1)
	st.gasCache.Wait()
}

// price reads the published snapshot first: an atomic load and a map
// lookup allocate nothing, where the ristretto key would be a string built
// per call, and prices are read for every leg of every quote. The cache
// answers only before the first snapshot. A price older than maxAge is
// absent, whether or not the actor has dropped it yet.
func (st *chainState) price(lowerAddress string) (float64, bool) {
	if snap := st.prices.Load(); snap != nil {
		p, ok := snap.ByAddress[lowerAddress]
		if !ok {
			return 0, false
		}
		if !snap.ExpiresAt.IsZero() {
			if now := st.now(); now.After(snap.ExpiresAt) && !prices.Fresh(snap.ObservedAt[lowerAddress], now, st.maxAge) {
				return 0, false
			}
		}
		return p, true
	}
	p, ok := st.priceCache.Get(priceKey(st.id, lowerAddress))
	if !ok || !prices.Fresh(p.ObservedAt, st.now(), st.maxAge) {
		return 0, false
	}
	return p.USD, true
}

// gasRecord is the record a reader may serve: none when it is older than
// the maximum age, whether or not the actor has dropped it yet.
func (st *chainState) gasRecord() (gas.Record, bool) {
	e, ok := st.gasCache.Get(st.id)
	if !ok {
		e = st.gas.Load()
	}
	if !e.servable(st.now(), st.gasMaxAge) {
		return gas.Record{}, false
	}
	return e.Record, true
}
