// Package engine is the quote engine's actor topology: a balancing pool of
// worker actors per provider, and the fan-out that races every eligible leg
// of a quote under its deadline and timing strategy (quote.Strategy). It
// answers with whatever arrived by the time the strategy ended the race;
// the legs still running then are cancelled (their context ends) and their
// late answers dropped. Each provider leg has a circuit breaker
// (routing/domain/breaker): a leg whose recent calls mostly failed or timed out is
// not sent (skipped) until a probe finds it answering again.
package engine

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/routing/domain/breaker"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Config sizes the engine.
type Config struct {
	// Deadline bounds a quote's race (default 1,500 ms).
	Deadline time.Duration
	// PoolSize is the number of workers per provider (default 64);
	// PoolSizes overrides it per provider name.
	PoolSize  int
	PoolSizes map[string]int
	// NetworkProviders names the providers whose legs wait on a network
	// upstream (a configured aggregator, intents API or JSON-RPC node). A
	// leg holds its worker while it waits, so such a pool serves at most
	// workers ÷ upstream latency legs a second: 64 workers at 200 ms are
	// 320 legs/s. Their pools default to NetworkPoolSize workers instead
	// of PoolSize (PoolSizes still overrides), and their workers run on
	// protoactor's default dispatcher rather than Dispatcher, so that legs
	// blocked on the network do not hold the warm goroutines the rest of
	// the quote path runs on.
	NetworkProviders []string
	// NetworkPoolSize is the workers of a network provider's pool
	// (default DefaultNetworkPoolSize).
	NetworkPoolSize int
	// QueuePerWorker bounds how many legs wait per worker when all are busy
	// (default 16); beyond it a leg fails at once rather than queueing
	// past any deadline.
	QueuePerWorker int
	// Dispatcher runs the pools' mailboxes; nil means protoactor's
	// default (a new goroutine per scheduling).
	Dispatcher actor.Dispatcher
	// Tools lists, by provider, the tools whose legs and wins are counted
	// apart (the tool catalog's keys); any other tool is counted as
	// OtherTool, so the metrics' series stay a fixed set. Each of them,
	// and each provider's OtherTool, has its breaker.
	Tools map[string][]string
	// Strategy is the default timing strategy of a race, which a request's
	// own parameters override (quote.StrategyParams); its MaxWait is
	// ignored (the deadline bounds the default).
	Strategy quote.Strategy
	// Breaker sets every leg's breaker; the zero Config means
	// breaker.DefaultConfig.
	Breaker breaker.Config
	// Now is the breakers' clock (nil: time.Now).
	Now func() time.Time
	// Eligible names a request's eligible providers, a new slice each call
	// (nil: quote.Providers, the specification's table). The composition
	// root hands its upstreams' pairs here.
	Eligible func(req *quote.Request) []string
}

// Defaults of Config.
const (
	DefaultDeadline       = 1500 * time.Millisecond
	DefaultPoolSize       = 64
	DefaultQueuePerWorker = 16
	// DefaultNetworkPoolSize sizes a network provider's pool for 2,000
	// quotes/s of one leg each at upstream latencies up to 250 ms with
	// headroom ×2: workers ≥ quotes/s × legs per quote × latency × 2 =
	// 2,000 × 1 × 0.25 × 2 = 1,000. An idle worker costs an actor (about a
	// kilobyte), so the headroom is cheap.
	DefaultNetworkPoolSize = 1024
)

// The default timing strategy (Config.Strategy): every leg is waited for,
// up to the deadline (README, Racing, has the measurements behind it).
const (
	DefaultMinWait         = 0
	DefaultExpectedResults = 0
	DefaultReduceEvery     = 0
)

// Engine races providers.
type Engine struct {
	cfg  Config
	root *actor.RootContext
	// provs is each provider's race-time state, so that a race looks a
	// provider up once rather than once per leg; fixed at Start.
	provs map[string]*racer
	// legs and poolStats are the figures of each provider's tools and
	// pool (see metrics.go); the maps are fixed at Start.
	legs      map[string]map[string]*legStats
	poolStats map[string]*poolStats
	races     atomic.Uint64
	// ends counts races by what ended them (quote.StopReason); those
	// ended at the deadline are the deadline hits.
	ends [quote.StopDeadline + 1]atomic.Uint64
	// exempters are the providers that declare fee-exempt requests (see
	// FeeExempter); fixed at Start.
	exempters []FeeExempter
}

// racer is what a race needs of one provider: the provider, its pool,
// the pool's idle workers and its tools' figures (e.legs's map).
type racer struct {
	p      quote.Provider
	pool   *actor.PID
	shared *poolShared
	legs   map[string]*legStats
}

// Start spawns one pool per provider.
func Start(sys *actor.ActorSystem, providers []quote.Provider, cfg Config) (*Engine, error) {
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	if cfg.QueuePerWorker <= 0 {
		cfg.QueuePerWorker = DefaultQueuePerWorker
	}
	if cfg.NetworkPoolSize <= 0 {
		cfg.NetworkPoolSize = DefaultNetworkPoolSize
	}
	if cfg.Breaker == (breaker.Config{}) {
		cfg.Breaker = breaker.DefaultConfig()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Strategy.MaxWait = 0
	e := &Engine{cfg: cfg, root: sys.Root, provs: map[string]*racer{}, legs: map[string]map[string]*legStats{},
		poolStats: map[string]*poolStats{}}
	for _, p := range providers {
		size := cfg.PoolSize
		network := slices.Contains(cfg.NetworkProviders, p.Name())
		if network {
			size = cfg.NetworkPoolSize
		}
		if n := cfg.PoolSizes[p.Name()]; n > 0 {
			size = n
		}
		shared := &poolShared{idle: make(chan *actor.PID, size)}
		st := &poolStats{provider: p.Name(), workers: size, capacity: size * cfg.QueuePerWorker, shared: shared}
		e.legs[p.Name()] = newLegStats(p.Name(), cfg.Tools[p.Name()], cfg.Breaker)
		e.poolStats[p.Name()] = st
		pa := &poolActor{p: p, size: size, maxQueue: size * cfg.QueuePerWorker, shared: shared, st: st}
		opts := []actor.PropsOption{actor.WithSupervisor(actor.NewRestartingStrategy())}
		if cfg.Dispatcher != nil {
			if !network {
				pa.opts = []actor.PropsOption{actor.WithDispatcher(cfg.Dispatcher)}
			}
			opts = append(opts, actor.WithDispatcher(cfg.Dispatcher))
		}
		props := actor.PropsFromProducer(func() actor.Actor { return pa }, opts...)
		pid, err := sys.Root.SpawnNamed(props, "provider-"+p.Name())
		if err != nil {
			e.Stop()
			return nil, fmt.Errorf("engine: spawn %s pool: %w", p.Name(), err)
		}
		e.provs[p.Name()] = &racer{p: p, pool: pid, shared: shared, legs: e.legs[p.Name()]}
		if x, ok := p.(FeeExempter); ok {
			e.exempters = append(e.exempters, x)
		}
	}
	return e, nil
}

// eligible names req's eligible providers (see Config.Eligible).
func (e *Engine) eligible(req *quote.Request) []string {
	if e.cfg.Eligible != nil {
		return e.cfg.Eligible(req)
	}
	return quote.Providers(req)
}

// Deadline is the configured race deadline.
func (e *Engine) Deadline() time.Duration { return e.cfg.Deadline }

// Runs reports whether the engine races the named provider.
func (e *Engine) Runs(provider string) bool {
	_, ok := e.provs[provider]
	return ok
}

// Race asks every leg of every named provider and returns the outcomes in
// the order the legs were asked, and how the race ended. The race follows
// the engine's timing strategy overridden by the request's own parameters
// (quote.Strategy.Decide): it ends when every leg has answered, when the
// strategy has the routes it expects, at the request's maxWait or at the
// deadline (or ctx's end), whichever comes first. When it returns, the
// race's context is cancelled, which tells the legs still running to stop;
// they are outcomes that did not answer. A leg whose breaker is open is not
// sent: its outcome is skipped, answered at once with UPSTREAM_MAINTENANCE.
// onLeg, when not nil, is called on the calling goroutine with each outcome
// as it arrives (the outcome may be changed by it, as a build failure is),
// before the strategy counts it. Providers that price in two phases
// (quote.Pricer) answer with priced routes, which quote.Complete builds.
func (e *Engine) Race(ctx context.Context, req *quote.Request, providers []string, onLeg func(*quote.LegOutcome)) ([]quote.LegOutcome, quote.RaceEnd) {
	start := time.Now()
	// Each provider's legs are asked for once and counted first, so that
	// the outcomes are one allocation rather than a slice grown by append.
	// A provider that cannot quote the request as asked (an exact output
	// it cannot size, a refund address it cannot honour) is left out with
	// its reason: one outcome, answered at once, not sent.
	type provLegs struct {
		name                 string
		r                    *racer
		legs                 []string
		absent, absentReason string
	}
	checkAbsent := req.ExactOutput() || req.RefundTo != ""
	var buf [8]provLegs
	asked, n := buf[:0], 0
	for _, name := range providers {
		r, ok := e.provs[name]
		if !ok {
			continue
		}
		if checkAbsent {
			if reason, why := quote.Unsupported(r.p, req); reason != "" {
				asked = append(asked, provLegs{name: name, r: r, absent: why, absentReason: reason})
				n++
				continue
			}
		}
		legs := r.p.Legs(req)
		asked = append(asked, provLegs{name: name, r: r, legs: legs})
		n += len(legs)
	}
	var outcomes []quote.LegOutcome
	if n > 0 {
		outcomes = make([]quote.LegOutcome, 0, n)
	}
	for _, pl := range asked {
		if pl.absent != "" {
			outcomes = append(outcomes, quote.UnsupportedOutcome(pl.name, pl.absentReason, pl.absent))
			continue
		}
		for _, leg := range pl.legs {
			outcomes = append(outcomes, quote.LegOutcome{Provider: pl.name, Leg: leg})
		}
	}
	if len(outcomes) == 0 {
		return outcomes, quote.RaceEnd{Reason: quote.StopAllAnswered}
	}
	strat := e.cfg.Strategy.Override(req.Strategy)
	limit, atLimit := strat.Limit(e.cfg.Deadline)
	// One context for the whole race: its deadline is every leg's, and
	// cancelling it when the race is over tells late legs to stop.
	raceCtx, cancel := context.WithDeadline(ctx, start.Add(early(limit)))
	defer cancel()
	deadline, _ := raceCtx.Deadline()
	// Buffered for every leg, so a worker answering after the deadline
	// never blocks; the channel is garbage once both sides let go. The
	// messages are one allocation; workers only read them.
	results := make(chan legResult, len(outcomes))
	msgs := make([]legMsg, len(outcomes))
	answered, routes := 0, 0
	i := 0
	for _, pl := range asked {
		if pl.absent != "" {
			msgs[i].absent = true
			answered++
			if onLeg != nil {
				onLeg(&outcomes[i])
			}
			i++
			continue
		}
		for range pl.legs {
			o := &outcomes[i]
			msgs[i] = legMsg{index: i, provider: o.Provider, leg: o.Leg, req: req, ctx: raceCtx,
				deadline: deadline, results: results, start: start, stats: legStatsIn(pl.r.legs, o.Leg)}
			m := &msgs[i]
			i++
			ok, probe := m.stats.allow(e.cfg.Now)
			if !ok {
				m.skipped = true
				o.Answered, o.Skipped, o.Err = true, true, m.stats.skipErr
				answered++
				if onLeg != nil {
					onLeg(o)
				}
				continue
			}
			m.probe = probe
			// Straight to an idle worker; through the pool's queue when
			// all are busy (see pool.go).
			to := pl.r.shared.take()
			if to == nil {
				to = pl.r.pool
			}
			e.root.Send(to, m)
		}
	}
	var timer *time.Timer
	reason := quote.StopAllAnswered
race:
	for {
		// Decided timerSlack ahead, so that a time the strategy names
		// (minWaitMs, a reduction) is kept rather than overrun.
		elapsed := time.Since(start) + timerSlack
		d := strat.Decide(e.cfg.Deadline, elapsed, len(outcomes), answered, routes)
		if d.Stop {
			reason = d.Reason
			break
		}
		// The race's context ends it at its limit; a timer only for a
		// check the strategy asks for before that.
		var tick <-chan time.Time
		if d.Next > 0 && elapsed+d.Next < limit {
			if timer == nil {
				timer = time.NewTimer(d.Next)
			} else {
				timer.Reset(d.Next)
			}
			tick = timer.C
		}
		select {
		case r := <-results:
			o := &outcomes[r.index]
			*o = r.out
			if r.refused {
				// The pool refused it and is done with the message.
				msgs[r.index].refused = true
			}
			if onLeg != nil {
				onLeg(o)
			}
			answered++
			if o.Route != nil && o.Err == nil {
				routes++
			}
		case <-tick:
		case <-raceCtx.Done():
			reason = atLimit
			if ctx.Err() != nil {
				reason = quote.StopDeadline
			}
			break race
		}
	}
	if timer != nil {
		timer.Stop()
	}
	e.countRace(outcomes, msgs, reason, ctx.Err() != nil)
	return outcomes, quote.RaceEnd{Total: time.Since(start), Reason: reason}
}

// timerSlack is how late the runtime's timers may fire: an idle process's
// poller sleeps in whole milliseconds, so a timer due in under one fires
// up to a millisecond after its time (measured: races run to a 300 ms
// deadline ended at 300.15 to 300.92 ms). The race acts this much early,
// so that a quote run to its deadline or to its strategy's time is answered
// at it, not after.
const timerSlack = time.Millisecond

// early is when a race with this limit stops waiting: timerSlack before it,
// for limits long enough to spare it.
func early(limit time.Duration) time.Duration {
	if limit > 2*timerSlack {
		return limit - timerSlack
	}
	return limit
}

// Stop stops every pool and waits for them.
func (e *Engine) Stop() {
	for _, r := range e.provs {
		_ = e.root.StopFuture(r.pool).Wait()
	}
}
