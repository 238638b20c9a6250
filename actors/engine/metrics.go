package engine

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/breaker"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// OtherTool is the tool label of a leg, or a winning route, whose tool is
// not in Config.Tools: a real upstream's leg (its tool is known only from
// the route it answers) and any tool outside the catalog. Folding them
// together keeps the series of the leg metrics a fixed set.
const OtherTool = "other"

// The engine counts what it alone knows, in atomics read at scrape time by
// Collector: each provider tool's leg latency, errors, timeouts, wins,
// skipped and cancelled legs and breaker openings, the races by what ended
// them, and each provider pool's workers, idle workers, queued legs and
// saturation refusals; each leg's breaker state is read at scrape time. A
// leg's figures are resolved once, when the race sends it, so counting
// costs the quote path a few atomic adds and no map write or allocation;
// a healthy leg's breaker (closed, its window full of successes) is
// consulted without its lock.

// legStats are one provider tool's figures, and its breaker.
type legStats struct {
	provider, tool string
	// br is the leg's breaker, behind mu; open mirrors whether it is
	// other than closed, so that a closed breaker's leg is sent without
	// taking the lock. skipErr is the outcome of a leg not sent.
	mu      sync.Mutex
	br      *breaker.Breaker
	open    atomic.Bool
	skipErr error
	// clean mirrors the breaker's Clean: one more success would change
	// nothing, so it need not be told under the lock.
	clean atomic.Bool
	// skipped counts legs not sent (breaker open), cancelled legs cut off
	// unanswered by a race that ended before the deadline (its strategy or
	// the request's maxWait), opens the breaker's openings.
	skipped, cancelled, opens atomic.Uint64
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

// newLegStats prepares the figures and breakers of a provider's tools and
// its OtherTool, keyed by tool.
func newLegStats(provider string, tools []string, bc breaker.Config) map[string]*legStats {
	m := map[string]*legStats{OtherTool: newLeg(provider, OtherTool, bc)}
	for _, t := range tools {
		m[t] = newLeg(provider, t, bc)
	}
	return m
}

func newLeg(provider, tool string, bc breaker.Config) *legStats {
	// A live upstream's single leg (and any tool outside the catalog) is
	// OtherTool's: the refusal names the provider.
	name, detail := tool, tool
	if tool == OtherTool {
		name, detail = provider, ""
	}
	return &legStats{provider: provider, tool: tool, latency: newLegLatency(), br: breaker.New(bc),
		skipErr: apierr.New(apierr.UpstreamMaintenance, name+" is unavailable: most of its recent calls failed or timed out; it is tried again after a cool-down").
			With("provider", provider).With("tool", detail)}
}

// allow asks the leg's breaker whether the leg may be sent now, and
// whether as its probe; the clock is read only when the breaker is not
// closed.
func (s *legStats) allow(clock func() time.Time) (ok, probe bool) {
	if !s.open.Load() {
		return true, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.br.Allow(clock())
}

// record tells the leg's breaker how a call it allowed went.
func (s *legStats) record(now time.Time, probe bool, r breaker.Result) {
	s.mu.Lock()
	if s.br.Record(now, probe, r) {
		s.opens.Add(1)
	}
	s.open.Store(s.br.State(now) != breaker.Closed)
	s.clean.Store(s.br.Clean())
	s.mu.Unlock()
}

// state and status read the leg's breaker.
func (s *legStats) state(now time.Time) breaker.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.br.State(now)
}

func (s *legStats) status(now time.Time) breaker.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.br.Status(now)
}

// ToolStatus is a tool's health as GET /v1/tools shows it: its own leg's
// breaker, or its provider's single upstream leg's (OtherTool) when that is
// worse, since a live upstream's tools all go through that one leg.
func (e *Engine) ToolStatus(provider, tool string) breaker.Status {
	m := e.legs[provider]
	if m == nil {
		return breaker.StatusOK
	}
	now := e.cfg.Now()
	st := breaker.StatusOK
	if s, ok := m[tool]; ok {
		st = s.status(now)
	}
	return breaker.Worse(st, m[OtherTool].status(now))
}

// legStatsFor returns the figures of a provider's tool, or its OtherTool's
// when the tool is not in the catalog; nil for an unknown provider. It
// only reads maps fixed at Start.
func (e *Engine) legStatsFor(provider, tool string) *legStats {
	return legStatsIn(e.legs[provider], tool)
}

// legStatsIn returns the figures of a tool in its provider's map m, or
// its OtherTool's; nil for a nil m.
func legStatsIn(m map[string]*legStats, tool string) *legStats {
	if s, ok := m[tool]; ok {
		return s
	}
	return m[OtherTool]
}

// countRace adds a finished race's outcomes to its legs' figures and
// judges each leg sent for its breaker. An answer with a route or a
// reasoned no route is a success; an error (a panic included) a failure,
// but for a saturated pool's refusal and a route that could not be built,
// which say nothing of the provider; no answer is a failure (a timeout)
// only when the race ran to the server's deadline: a leg cut off by the
// strategy or the request's maxWait was cancelled, and is not judged.
// parentEnded is set when the caller's context ended the race.
func (e *Engine) countRace(outcomes []quote.LegOutcome, msgs []legMsg, reason quote.StopReason, parentEnded bool) {
	e.races.Add(1)
	if int(reason) < len(e.ends) {
		e.ends[reason].Add(1)
	}
	// The breakers' clock, read once and only for a leg its breaker is
	// told of.
	var now time.Time
	for i := range outcomes {
		o, m := &outcomes[i], &msgs[i]
		var judged breaker.Result
		switch {
		case m.absent:
			// Not sent: nothing to count or judge.
			continue
		case m.skipped:
			m.stats.skipped.Add(1)
			continue
		case !o.Answered && reason == quote.StopDeadline && !parentEnded:
			m.stats.timeouts.Add(1)
			judged = breaker.Failure
		case !o.Answered:
			m.stats.cancelled.Add(1)
			judged = breaker.Neutral
		case o.Err != nil:
			m.stats.errors.Add(1)
			var be *quote.BuildError
			switch {
			case m.refused, errors.As(o.Err, &be), errors.Is(o.Err, scenario.ErrScripted):
				// A sandbox scenario's scripted failure says nothing of
				// the tool either.
				judged = breaker.Neutral
			case errors.Is(o.Err, quote.ErrNoRoute):
				judged = breaker.Success
			default:
				judged = breaker.Failure
			}
		default:
			judged = breaker.Success
		}
		// A success judged by a breaker whose window is full of
		// successes changes nothing: the common case takes no lock.
		if judged == breaker.Success && !m.probe && m.stats.clean.Load() {
			continue
		}
		if now.IsZero() {
			now = e.cfg.Now()
		}
		m.stats.record(now, m.probe, judged)
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
	legSkippedDesc = prometheus.NewDesc("swapgate_quote_leg_skipped_total",
		"Provider legs not sent because their breaker was open, by provider and tool.",
		[]string{"provider", "tool"}, nil)
	legCancelledDesc = prometheus.NewDesc("swapgate_quote_leg_cancelled_total",
		"Provider legs cut off unanswered by a race that ended before the deadline (its timing strategy or the request's maxWaitMs), by provider and tool.",
		[]string{"provider", "tool"}, nil)
	breakerStateDesc = prometheus.NewDesc("swapgate_quote_leg_breaker_state",
		"State of a provider leg's breaker at scrape time: 0 closed, 1 half-open (the next leg probes), 2 open (legs skipped).",
		[]string{"provider", "tool"}, nil)
	breakerOpensDesc = prometheus.NewDesc("swapgate_quote_leg_breaker_opens_total",
		"Times a provider leg's breaker opened (from closed, or again after a failed probe).",
		[]string{"provider", "tool"}, nil)
	racesDesc = prometheus.NewDesc("swapgate_quote_races_total",
		"Provider races run (one per quote or routes request with at least one leg).", nil, nil)
	deadlineHitsDesc = prometheus.NewDesc("swapgate_quote_deadline_hits_total",
		"Provider races that ended at the server's quote deadline rather than with every leg answered or by their timing strategy.", nil, nil)
	raceEndsDesc = prometheus.NewDesc("swapgate_quote_race_ends_total",
		"Provider races by what ended them: all_answered, expected_results, max_wait (the request's maxWaitMs), deadline.",
		[]string{"reason"}, nil)
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
	for _, d := range []*prometheus.Desc{legSecondsDesc, legErrorsDesc, legTimeoutsDesc, winsDesc, legSkippedDesc,
		legCancelledDesc, breakerStateDesc, breakerOpensDesc, racesDesc, deadlineHitsDesc, raceEndsDesc,
		poolWorkersDesc, poolIdleDesc, poolQueuedDesc, poolCapacityDesc, poolRefusalsDesc} {
		ch <- d
	}
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	ch <- prometheus.MustNewConstMetric(racesDesc, prometheus.CounterValue, float64(e.races.Load()))
	ch <- prometheus.MustNewConstMetric(deadlineHitsDesc, prometheus.CounterValue, float64(e.ends[quote.StopDeadline].Load()))
	for i := range e.ends {
		ch <- prometheus.MustNewConstMetric(raceEndsDesc, prometheus.CounterValue, float64(e.ends[i].Load()), quote.StopReason(i).String())
	}
	now := e.cfg.Now()
	for _, p := range e.providerNames() {
		for _, s := range sortedLegs(e.legs[p]) {
			ch <- s.latency.Metric(legSecondsDesc, s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legErrorsDesc, prometheus.CounterValue, float64(s.errors.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legTimeoutsDesc, prometheus.CounterValue, float64(s.timeouts.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(winsDesc, prometheus.CounterValue, float64(s.wins.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legSkippedDesc, prometheus.CounterValue, float64(s.skipped.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(legCancelledDesc, prometheus.CounterValue, float64(s.cancelled.Load()), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(breakerStateDesc, prometheus.GaugeValue, float64(s.state(now)), s.provider, s.tool)
			ch <- prometheus.MustNewConstMetric(breakerOpensDesc, prometheus.CounterValue, float64(s.opens.Load()), s.provider, s.tool)
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
