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
// the same rules as prices.Snapshot.
type gasEntry struct {
	Record  gas.Record
	Version uint64
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
	priceCache *ristretto.Cache[string, float64]
	gasCache   *ristretto.Cache[uint64, *gasEntry]
}

// priceKey is the ristretto key of one token's price.
func priceKey(chainID uint64, lowerAddress string) string {
	return strconv.FormatUint(chainID, 10) + ":" + lowerAddress
}

// publishPrices installs a new snapshot when any value differs from the
// current one and reports whether it did.
func (st *chainState) publishPrices(fresh map[string]float64, now time.Time) bool {
	byAddress := make(map[string]float64, len(fresh))
	for addr, p := range fresh {
		byAddress[strings.ToLower(addr)] = p
	}
	old := st.prices.Load()
	if old != nil && maps.Equal(old.ByAddress, byAddress) {
		return false
	}
	next := &prices.Snapshot{Version: 1, ByAddress: byAddress, UpdatedAt: now}
	if old != nil {
		next.Version = old.Version + 1
	}
	st.prices.Store(next)
	for addr, p := range byAddress {
		st.priceCache.Set(priceKey(st.id, addr), p, 1)
	}
	if old != nil {
		for addr := range old.ByAddress {
			if _, still := byAddress[addr]; !still {
				st.priceCache.Del(priceKey(st.id, addr))
			}
		}
	}
	// Make the writes visible before the refresh counts as done.
	st.priceCache.Wait()
	return true
}

// publishGas installs a new record when its figures differ from the current
// one (the timestamp alone does not count) and reports whether it did.
func (st *chainState) publishGas(rec gas.Record) bool {
	old := st.gas.Load()
	if old != nil && old.Record.ChainID == rec.ChainID && old.Record.Speed == rec.Speed {
		return false
	}
	next := &gasEntry{Record: rec, Version: 1}
	if old != nil {
		next.Version = old.Version + 1
	}
	st.gas.Store(next)
	st.gasCache.Set(st.id, next, 1)
	st.gasCache.Wait()
	return true
}

// price reads the published snapshot first: an atomic load and a map
// lookup allocate nothing, where the ristretto key would be a string built
// per call, and prices are read for every leg of every quote. The cache
// answers only before the first snapshot.
func (st *chainState) price(lowerAddress string) (float64, bool) {
	if snap := st.prices.Load(); snap != nil {
		p, ok := snap.ByAddress[lowerAddress]
		return p, ok
	}
	return st.priceCache.Get(priceKey(st.id, lowerAddress))
}

func (st *chainState) gasRecord() (gas.Record, bool) {
	if e, ok := st.gasCache.Get(st.id); ok {
		return e.Record, true
	}
	e := st.gas.Load()
	if e == nil {
		return gas.Record{}, false
	}
	return e.Record, true
}
