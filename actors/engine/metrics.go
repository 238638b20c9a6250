package engine

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/quote"
)

// OtherTool is the tool label of a leg, or a winning route, whose tool is
// not in Config.Tools: a real upstream's leg (its tool is known only from
// the route it answers) and any tool outside the catalog. Folding them
// together keeps the series of the leg metrics a fixed set.
const OtherTool = "other"

// The engine counts what it alone knows, in atomics read at scrape time by
// Collector: each provider tool's leg latency, errors, timeouts and wins,
// the races that ended at the deadline, and each provider pool's workers,
// idle workers, queued legs and saturation refusals. A leg's figures are
// resolved once, when the race sends it, so counting costs the quote path
// a few atomic adds and no lock, map write or allocation.

// legStats are one provider tool's figures.
type legStats struct {
	provider, tool string
	// latency is the time from the race's start to the worker's answer,
	// of every leg a worker finished, in time or late: how long a leg
	// holds a worker, which is what a pool is sized by.
	latency *actors.Histogram
	// errors counts legs answered with an error before the deadline (a
	// panic and a saturation refusal included); timeouts those with no
	// answer by the deadline; wins the quotes answered with this tool's
	// route.
	errors, timeouts, wins atomic.Uint64
}

// poolStats are one provider pool's figures. Its idle workers and queued
// legs are read at scrape time from what the race, the pool and its
// workers share (pool.go).
type poolStats struct {
	provider           string
	workers, capacity  int
	shared             *poolShared
	saturationRefusals atomic.Uint64
}

// newLegLatency is a leg latency histogram: 100 µs to about 15 s.
func newLegLatency() *actors.Histogram {
	return actors.NewDurationHistogram(100*time.Microsecond, 2.5, 14)
}

// newLegStats prepares the figures of a provider's tools and its
// OtherTool, keyed by tool.
func newLegStats(provider string, tools []string) map[string]*legStats {
	m := map[string]*legStats{OtherTool: {provider: provider, tool: OtherTool, latency: newLegLatency()}}
	for _, t := range tools {
		m[t] = &legStats{provider: provider, tool: t, latency: newLegLatency()}
	}
	return m
}

// legStatsFor returns the figures of a provider's tool, or its OtherTool's
// when the tool is not in the catalog; nil for an unknown provider. It
// only reads maps fixed at Start.
func (e *Engine) legStatsFor(provider, tool string) *legStats {
	m := e.legs[provider]
	if s, ok := m[tool]; ok {
		return s
	}
	return m[OtherTool]
}

// countRace adds a finished race's outcomes to its legs' figures: an
// answer with an error is an error, no answer a timeout.
func (e *Engine) countRace(outcomes []quote.LegOutcome, msgs []legMsg, atDeadline bool) {
	e.races.Add(1)
	if atDeadline {
		e.deadlineHits.Add(1)
	}
	for i := range outcomes {
		switch o := &outcomes[i]; {
		case !o.Answered:
			msgs[i].stats.timeouts.Add(1)
		case o.Err != nil:
			msgs[i].stats.errors.Add(1)
		}
	}
}

// Won counts a quote answered with a route of provider's tool. The Quoter
// calls it for every quote it answers; Routes, which answers a list, counts
// no win.
func (e *Engine) Won(provider, tool string) {
	if s := e.legStatsFor(provider, tool); s != nil {
		s.wins.Add(1)
	}
}

// Collector exposes the engine's figures to Prometheus, read at scrape
// time.
func (e *Engine) Collector() prometheus.Collector { return engineCollector{e} }

var (
	legSecondsDesc = prometheus.NewDesc("swapgate_quote_leg_seconds",
		"Time from a quote's race start to a provider leg's answer, by provider and tool, of every leg a worker finished (late ones included).",
		[]string{"provider", "tool"}, nil)
	legErrorsDesc = prometheus.NewDesc("swapgate_quote_leg_errors_total",
		"Provider legs answered with an error before the deadline (panics and pool saturation refusals included), by provider and tool.",
		[]string{"provider", "tool"}, nil)
	legTimeoutsDesc = prometheus.NewDesc("swapgate_quote_leg_timeouts_total",
		"Provider legs that had not answered by the quote's deadline, by provider and tool.",
		[]string{"provider", "tool"}, nil)
	winsDesc = prometheus.NewDesc("swapgate_quote_wins_total",
		"Quotes answered, by the provider and tool of the route they answered with.",
		[]string{"provider", "tool"}, nil)
	racesDesc = prometheus.NewDesc("swapgate_quote_races_total",
		"Provider races run (one per quote or routes request with at least one leg).", nil, nil)
	deadlineHitsDesc = prometheus.NewDesc("swapgate_quote_deadline_hits_total",
		"Provider races that ended at the deadline rather than with every leg answered.", nil, nil)
	poolWorkersDesc = prometheus.NewDesc("swapgate_provider_pool_workers",
		"Worker actors of a provider's pool (--provider-pool-size, --provider-pool-sizes).", []string{"provider"}, nil)
	poolIdleDesc = prometheus.NewDesc("swapgate_provider_pool_idle_workers",
		"Workers of a provider's pool idle at scrape time.", []string{"provider"}, nil)
	poolQueuedDesc = prometheus.NewDesc("swapgate_provider_pool_queued_legs",
		"Legs waiting in a provider pool's queue for a worker at scrape time.", []string{"provider"}, nil)
	poolCapacityDesc = prometheus.NewDesc("swapgate_provider_pool_queue_capacity",
		"Legs a provider pool queues at most (workers times --provider-queue-per-worker).", []string{"provider"}, nil)
	poolRefusalsDesc = prometheus.NewDesc("swapgate_provider_pool_saturation_refusals_total",
		"Legs a provider pool refused at once because every worker was busy and its queue full.", []string{"provider"}, nil)
)

type engineCollector struct{ e *Engine }

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{legSecondsDesc, legErrorsDesc, legTimeoutsDesc, winsDesc, racesDesc,
		deadlineHitsDesc, poolWorkersDesc, poolIdleDesc, poolQueuedDesc, poolCapacityDesc, poolRefusalsDesc} {
		ch <- d
	}
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	ch <- prometheus.MustNewConstMetric(racesDesc, prometheus.CounterValue, float64(e.races.Load()))
	ch <- prometheus.MustNewConstMetric(deadlineHitsDesc, prometheus.CounterValue, float64(e.deadlineHits.Load()))
	for _, p := range e.providerNames() {
		for _, s := range sortedLegs(e.legs[p]) {
			ch <- s.latency.Metric(legSecondsDesc, s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legErrorsDesc, prometheus.CounterValue, float64(s.errors.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legTimeoutsDesc, prometheus.CounterValue, float64(s.timeouts.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(winsDesc, prometheus.CounterValue, float64(s.wins.Load()), s.provider, s.tool)
		}
		ps := e.poolStats[p]
		ch <- prometheus.MustNewConstMetric(poolWorkersDesc, prometheus.GaugeValue, float64(ps.workers), p)
		ch <- prometheus.MustNewConstMetric(poolIdleDesc, prometheus.GaugeValue, float64(len(ps.shared.idle)), p)
		ch <- prometheus.MustNewConstMetric(poolQueuedDesc, prometheus.GaugeValue, float64(ps.shared.queued.Load()), p)
		ch <- prometheus.MustNewConstMetric(poolCapacityDesc, prometheus.GaugeValue, float64(ps.capacity), p)
		ch <- prometheus.MustNewConstMetric(poolRefusalsDesc, prometheus.CounterValue, float64(ps.saturationRefusals.Load()), p)
	}
}

// providerNames lists the engine's providers in name order.
func (e *Engine) providerNames() []string {
	out := make([]string, 0, len(e.poolStats))
	for p := range e.poolStats {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func sortedLegs(m map[string]*legStats) []*legStats {
	out := make([]*legStats, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tool < out[j].tool })
	return out
}
