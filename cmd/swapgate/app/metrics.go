package app

import (
	"github.com/prometheus/client_golang/prometheus"

	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// cacheStats is how a component reports its caches: each by name with its
// hits and misses so far (edge.Server, pebblestore.Store and
// refdata.Service each have one).
type cacheStats func(visit func(cache string, hits, misses uint64))

// cacheCollector gathers every component's caches into one pair of
// metric families, swapgate_cache_hits_total and
// swapgate_cache_misses_total by cache: one family per figure, whichever
// package owns the cache, so that a dashboard computes every hit ratio
// with one query. It reads the components' atomics at scrape time.
type cacheCollector struct{ sources []cacheStats }

var (
	cacheHitsDesc = prometheus.NewDesc("swapgate_cache_hits_total",
		"Lookups a cache answered, by cache.", []string{"cache"}, nil)
	cacheMissesDesc = prometheus.NewDesc("swapgate_cache_misses_total",
		"Lookups a cache could not answer (the value was then read or built), by cache.", []string{"cache"}, nil)
)

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cacheHitsDesc
	ch <- cacheMissesDesc
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for _, src := range c.sources {
		src(func(cache string, hits, misses uint64) {
			ch <- prometheus.MustNewConstMetric(cacheHitsDesc, prometheus.CounterValue, float64(hits), cache)
			ch <- prometheus.MustNewConstMetric(cacheMissesDesc, prometheus.CounterValue, float64(misses), cache)
		})
	}
}

// walSyncCollector exposes the store's WAL syncs as
// swapgate_store_wal_sync_seconds, read at scrape time: the floor of a fee
// quote's latency (it waits for the ledger's synced commit), so that a
// tail in the quotes can be told apart from one in the disk or the
// operating system under them.
type walSyncCollector struct {
	syncs func() (pebblestore.WALSyncStats, bool)
}

// walSyncer is a store that reports its WAL syncs (the Pebble store).
type walSyncer interface {
	WALSyncs() (pebblestore.WALSyncStats, bool)
}

var walSyncDesc = prometheus.NewDesc("swapgate_store_wal_sync_seconds",
	"Time the store's WAL syncs took (Pebble's fsync of its write-ahead log; a fee quote waits for one).", nil, nil)

func (c walSyncCollector) Describe(ch chan<- *prometheus.Desc) { ch <- walSyncDesc }

func (c walSyncCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.syncs()
	if !ok {
		return
	}
	buckets := make(map[float64]uint64, len(st.Bounds))
	for i, b := range st.Bounds {
		buckets[b] = st.AtMost[i]
	}
	ch <- prometheus.MustNewConstHistogram(walSyncDesc, st.Count, st.Seconds, buckets)
}
