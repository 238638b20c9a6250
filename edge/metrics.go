package edge

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// metrics are the edge's Prometheus series: request counts by route and
// status, and latency histograms by route.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "swapgate_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "swapgate_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("edge: register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, statusText(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// statusText avoids an allocation for the common codes.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 404:
		return "404"
	case 429:
		return "429"
	case 500:
		return "500"
	}
	return strconv.Itoa(code)
}

// CacheStats reports the edge's caches, by name, with their hits and
// misses so far: the partner cache of API key authentication
// ("partner_auth") and the pre-encoded reference answers ("ref_tokens",
// "ref_gas", "ref_chains", "ref_connections"). The counters are atomics the
// request path adds to; reading them is for a metrics collector.
func (s *Server) CacheStats(visit func(cache string, hits, misses uint64)) {
	visit("partner_auth", s.auth.hits.Load(), s.auth.misses.Load())
	s.ref.cacheStats(visit)
}

var refusalsDesc = prometheus.NewDesc("swapgate_ratelimit_refusals_total",
	"Requests refused by a rate limit, by bucket (heavy, read).", []string{"bucket"}, nil)

// limiterCollector exposes the limiter's refusal counts, read at scrape
// time.
type limiterCollector struct{ l *Limiter }

func (c limiterCollector) Describe(ch chan<- *prometheus.Desc) { ch <- refusalsDesc }

func (c limiterCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range []Bucket{BucketHeavy, BucketRead} {
		ch <- prometheus.MustNewConstMetric(refusalsDesc, prometheus.CounterValue, float64(c.l.Refusals(b)), b.String())
	}
}

func (m *metrics) handler(reg *prometheus.Registry) fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
