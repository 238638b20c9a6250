package webhook

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// outboxCountLimit bounds the outbox entries a scrape counts (see
// Store.CountOutbox): past a million owed deliveries the gauge stays at the
// bound, which says enough, rather than a scrape walking the whole backlog.
const outboxCountLimit = 1 << 20

// outboxCountTimeout bounds the scrape's walk of the outbox.
const outboxCountTimeout = 5 * time.Second

// Collector exposes the pool's counters to Prometheus, read at scrape time
// from the same atomics the pool updates, so metrics cost the delivery path
// nothing; the outbox's depth is counted from the store at scrape time,
// which is the only place that knows it (events enter the outbox in their
// source's own batches).
func (p *Pool) Collector() prometheus.Collector { return statsCollector{p} }

type statsCollector struct{ p *Pool }

var (
	statsDesc = prometheus.NewDesc("swapgate_webhook_deliveries_total",
		"Webhook delivery attempts by outcome (attempt, delivered, retried, dead); retried and dead are the failed attempts, dead the dead letters.",
		[]string{"outcome"}, nil)
	commitsDesc = prometheus.NewDesc("swapgate_webhook_commits_total",
		"Synced batches that recorded webhook attempt outcomes.", nil, nil)
	storeFailuresDesc = prometheus.NewDesc("swapgate_webhook_store_failures_total",
		"Webhook pool store operations that failed, by operation (commit: recording outcomes; scan: listing due entries).",
		[]string{"op"}, nil)
	workersDesc = prometheus.NewDesc("swapgate_webhook_workers",
		"Webhook delivery workers (--webhook-pool-size).", nil, nil)
	busyDesc = prometheus.NewDesc("swapgate_webhook_busy_workers",
		"Webhook delivery workers making an attempt at scrape time.", nil, nil)
	queuedDesc = prometheus.NewDesc("swapgate_webhook_queued_deliveries",
		"Due deliveries the dispatcher holds in memory waiting for a worker at scrape time.", nil, nil)
	parkedDesc = prometheus.NewDesc("swapgate_webhook_parked_deliveries",
		"Due deliveries the dispatcher left in the outbox behind its full per-webhook queues, remembering their keys, at scrape time.", nil, nil)
	outboxDesc = prometheus.NewDesc("swapgate_webhook_outbox_entries",
		"Deliveries owed in the outbox at scrape time, by state: due (their attempt is due) or scheduled (a retry waiting out its backoff).",
		[]string{"state"}, nil)
)

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{statsDesc, commitsDesc, storeFailuresDesc, workersDesc, busyDesc, queuedDesc, parkedDesc, outboxDesc} {
		ch <- d
	}
}

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := &c.p.stats
	for _, m := range []struct {
		outcome string
		v       int64
	}{
		{"attempt", s.Attempts.Load()},
		{"delivered", s.Delivered.Load()},
		{"retried", s.Retried.Load()},
		{"dead", s.Dead.Load()},
	} {
		ch <- prometheus.MustNewConstMetric(statsDesc, prometheus.CounterValue, float64(m.v), m.outcome)
	}
	ch <- prometheus.MustNewConstMetric(commitsDesc, prometheus.CounterValue, float64(s.Commits.Load()))
	ch <- prometheus.MustNewConstMetric(storeFailuresDesc, prometheus.CounterValue, float64(s.CommitFailures.Load()), "commit")
	ch <- prometheus.MustNewConstMetric(storeFailuresDesc, prometheus.CounterValue, float64(s.ScanFailures.Load()), "scan")
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(c.p.cfg.PoolSize))
	ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(s.Busy.Load()))
	ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(s.Queued.Load()))
	ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(s.Parked.Load()))
	ctx, cancel := context.WithTimeout(context.Background(), outboxCountTimeout)
	defer cancel()
	// A store that cannot count (closed, failing) leaves the gauge out of
	// this scrape rather than failing the whole scrape.
	if due, scheduled, err := c.p.store.CountOutbox(ctx, c.p.cfg.Now(), outboxCountLimit); err == nil {
		ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(due), "due")
		ch <- prometheus.MustNewConstMetric(outboxDesc, prometheus.GaugeValue, float64(scheduled), "scheduled")
	}
}
