package webhook

import "github.com/prometheus/client_golang/prometheus"

// Collector exposes the pool's counters to Prometheus, read at scrape time
// from the same atomics the pool updates, so metrics cost the delivery path
// nothing.
func (p *Pool) Collector() prometheus.Collector { return statsCollector{p.Stats()} }

type statsCollector struct{ s *Stats }

var statsDesc = prometheus.NewDesc("swapgate_webhook_deliveries_total",
	"Webhook delivery attempts by outcome (attempt, delivered, retried, dead).", []string{"outcome"}, nil)

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- statsDesc }

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range []struct {
		outcome string
		v       int64
	}{
		{"attempt", c.s.Attempts.Load()},
		{"delivered", c.s.Delivered.Load()},
		{"retried", c.s.Retried.Load()},
		{"dead", c.s.Dead.Load()},
	} {
		ch <- prometheus.MustNewConstMetric(statsDesc, prometheus.CounterValue, float64(m.v), m.outcome)
	}
}
