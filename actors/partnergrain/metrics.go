package partnergrain

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts, on one node, what its partner grains decided and what
// its limiter and ledger asked of them, in atomics read at scrape time.
type Metrics struct {
	// Grain side: activations started here, acquires served, blocks (and
	// the admissions in them) granted, and activations that found their
	// epoch moved (a stale activation: another took over).
	activations, served, blocks, admissions, stale atomic.Int64
	// Node side: acquires sent and those that failed, requests admitted
	// from a local block, and ledger batches of a partner refused for a
	// stale epoch (then sent again after a lease refresh).
	acquires, acquireFailures, localAdmits, ledgerStale atomic.Int64
}

// NewMetrics returns zeroed counters.
func NewMetrics() *Metrics { return &Metrics{} }

var (
	activationsDesc = prometheus.NewDesc("swapgate_partner_grain_activations_total",
		"Partner grain activations started on this node (each bumps the partner's epoch).", nil, nil)
	servedDesc = prometheus.NewDesc("swapgate_partner_grain_acquires_total",
		"Acquires the partner grains on this node served.", nil, nil)
	blocksDesc = prometheus.NewDesc("swapgate_partner_grain_blocks_granted_total",
		"Blocks of admissions the partner grains on this node granted.", nil, nil)
	admissionsDesc = prometheus.NewDesc("swapgate_partner_grain_admissions_granted_total",
		"Admissions in the blocks the partner grains on this node granted.", nil, nil)
	staleDesc = prometheus.NewDesc("swapgate_partner_grain_stale_activations_total",
		"Partner grain activations on this node that found their epoch moved (another activation took over) and stopped.", nil, nil)
	acquiresDesc = prometheus.NewDesc("swapgate_partner_limiter_acquires_total",
		"Acquires this node's partner limiter sent to partner grains.", nil, nil)
	acquireFailuresDesc = prometheus.NewDesc("swapgate_partner_limiter_acquire_failures_total",
		"Acquires this node's partner limiter sent that got no answer (the requests waiting for them failed).", nil, nil)
	localAdmitsDesc = prometheus.NewDesc("swapgate_partner_limiter_local_admits_total",
		"Partner requests this node admitted from a block it held, without a round trip.", nil, nil)
	ledgerStaleDesc = prometheus.NewDesc("swapgate_partner_ledger_stale_batches_total",
		"A partner's ledger rows refused for a stale epoch and sent again after the node's lease was refreshed.", nil, nil)
)

// Collector exposes the counters.
func (m *Metrics) Collector() prometheus.Collector { return metricsCollector{m} }

type metricsCollector struct{ m *Metrics }

func (c metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{activationsDesc, servedDesc, blocksDesc, admissionsDesc, staleDesc,
		acquiresDesc, acquireFailuresDesc, localAdmitsDesc, ledgerStaleDesc} {
		ch <- d
	}
}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	for _, v := range []struct {
		d *prometheus.Desc
		n *atomic.Int64
	}{{activationsDesc, &m.activations}, {servedDesc, &m.served}, {blocksDesc, &m.blocks}, {admissionsDesc, &m.admissions},
		{staleDesc, &m.stale}, {acquiresDesc, &m.acquires}, {acquireFailuresDesc, &m.acquireFailures},
		{localAdmitsDesc, &m.localAdmits}, {ledgerStaleDesc, &m.ledgerStale}} {
		ch <- prometheus.MustNewConstMetric(v.d, prometheus.CounterValue, float64(v.n.Load()))
	}
}
