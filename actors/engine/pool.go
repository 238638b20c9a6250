package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// A provider pool is one parent actor per provider with a fixed number of
// worker children. Idle workers wait in a channel the race reads: a leg goes
// straight to an idle worker, one message, and only when every worker is
// busy does it go to the parent, which queues it (boundedly) and hands it to
// the next worker that frees up, so one slow upstream call never holds up a
// leg that another worker could take. (Routing every leg through the parent,
// with a message back from each worker as it freed up, was three messages
// and three mailbox runs per leg: some 6% of the quote path's CPU.) Workers run the
// provider's QuoteLeg inside their Receive, so a provider that panics
// crashes its worker, which the parent's supervisor restarts; the worker
// answers the leg with an error before it goes down, so the quote is
// answered from the others without waiting for the deadline.

// legMsg asks for one leg of one quote. ctx is the race's, shared by its
// legs; deadline is ctx's, kept as a value for the pool's queue.
type legMsg struct {
	index    int
	provider string
	leg      string
	req      *quote.Request
	ctx      context.Context
	deadline time.Time
	results  chan<- legResult
	start    time.Time
	// stats are the figures of the leg's provider tool, resolved by the
	// race when it sent the leg.
	stats *legStats
	// probe, skipped, refused and absent are the race's own: the leg is
	// its breaker's probe; it was not sent (its breaker open); its pool
	// refused it (saturated), which says nothing of the provider; its
	// provider was left out of the race (it cannot quote the request: an
	// exact output it cannot size), which says nothing of it either.
	probe, skipped, refused, absent bool
}

// legResult is one leg's outcome and its place in the race; refused marks
// a leg the pool refused, saturated.
type legResult struct {
	index   int
	out     quote.LegOutcome
	refused bool
}

// drain asks the parent to hand queued legs to idle workers.
type drain struct{}

// poolShared is what a pool's parent, its workers and the race share: the
// idle workers, and how many legs wait in the parent's queue.
type poolShared struct {
	// idle holds each idle worker once; its capacity is the pool's size,
	// so a worker putting itself back never blocks.
	idle chan *actor.PID
	// queued counts the legs in the parent's queue, so that a worker
	// freeing up knows to ask for one.
	queued atomic.Int64
}

// take returns an idle worker, or nil when all are busy.
func (s *poolShared) take() *actor.PID {
	select {
	case w := <-s.idle:
		return w
	default:
		return nil
	}
}

// free puts a worker back among the idle and, when legs are queued, asks
// the parent to hand them out. The order matters: a parent queueing a leg
// counts it before it looks for an idle worker, and a worker is idle before
// it looks at the count, so one of the two always sees the other.
func (s *poolShared) free(c actor.Context) {
	s.idle <- c.Self()
	if s.queued.Load() > 0 {
		c.Send(c.Parent(), drain{})
	}
}

type poolActor struct {
	p        quote.Provider
	size     int
	maxQueue int
	shared   *poolShared
	queue    []*legMsg
	// st counts the pool's saturation refusals for metrics; its idle
	// workers and queued legs are read from shared at scrape time.
	st *poolStats
	// opts are the workers' props options (their dispatcher).
	opts []actor.PropsOption
}

func (a *poolActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		props := actor.PropsFromProducer(func() actor.Actor {
			pricer, _ := a.p.(quote.Pricer)
			return &workerActor{p: a.p, pricer: pricer, shared: a.shared}
		}, a.opts...)
		// Fresh workers are idle from birth; registering them here
		// rather than waiting for a message from each means the first
		// quotes find the pool ready.
		for i := 0; i < a.size; i++ {
			a.shared.idle <- c.Spawn(props)
		}
	case *legMsg:
		// The race found every worker busy a moment ago; one may have
		// freed up since.
		if len(a.queue) >= a.maxQueue {
			a.st.saturationRefusals.Add(1)
			m.results <- legResult{index: m.index, refused: true, out: quote.LegOutcome{Provider: m.provider, Leg: m.leg, Answered: true, Elapsed: time.Since(m.start),
				Err: apierr.New(apierr.ServiceUnavailable, fmt.Sprintf("%s pool saturated (%d workers, %d queued)", m.provider, a.size, len(a.queue)))}}
			return
		}
		a.queue = append(a.queue, m)
		a.shared.queued.Add(1)
		a.drain(c)
	case drain:
		a.drain(c)
	}
}

// drain hands queued legs to idle workers, oldest first, dropping those
// whose race is over (nobody waits for them): past its deadline, or ended
// early and cancelled.
func (a *poolActor) drain(c actor.Context) {
	for len(a.queue) > 0 {
		if !time.Now().Before(a.queue[0].deadline) || a.queue[0].ctx.Err() != nil {
			a.pop()
			continue
		}
		w := a.shared.take()
		if w == nil {
			return
		}
		c.Send(w, a.pop())
	}
}

func (a *poolActor) pop() *legMsg {
	next := a.queue[0]
	a.queue[0] = nil
	a.queue = a.queue[1:]
	a.shared.queued.Add(-1)
	return next
}

type workerActor struct {
	p      quote.Provider
	pricer quote.Pricer // p, when it prices in two phases
	shared *poolShared
}

func (w *workerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Restarting:
		// The leg that crashed the worker was answered already; once
		// restarted, the worker is free again.
		w.shared.free(c)
	case *legMsg:
		// A leg whose race ended while it waited for this worker is not
		// run: it was cancelled.
		if m.ctx.Err() == nil {
			w.run(c, m)
		}
		w.shared.free(c)
	}
}

func (w *workerActor) run(c actor.Context, m *legMsg) {
	out := quote.LegOutcome{Provider: m.provider, Leg: m.leg, Answered: true}
	defer func() {
		if p := recover(); p != nil {
			out.Err = apierr.New(apierr.UpstreamError, fmt.Sprintf("%s/%s failed", m.provider, m.leg)).Wrap(fmt.Errorf("panic: %v", p))
			out.Elapsed = time.Since(m.start)
			m.results <- legResult{index: m.index, out: out}
			m.stats.latency.ObserveDuration(out.Elapsed)
			panic(p) // let the supervisor restart this worker
		}
	}()
	ctx := m.ctx
	if w.pricer != nil {
		out.Route, out.Err = w.pricer.PriceLeg(ctx, m.req, m.leg)
	} else {
		out.Route, out.Err = w.p.QuoteLeg(ctx, m.req, m.leg)
	}
	if out.Err == nil && out.Route == nil {
		out.Err = apierr.New(apierr.UpstreamError, m.provider+" answered neither a route nor an error")
	}
	// The leg held this worker until now, whether or not its race still
	// waits for it: that is what the latency tells an operator.
	out.Elapsed = time.Since(m.start)
	m.stats.latency.ObserveDuration(out.Elapsed)
	if ctx.Err() != nil {
		// The race is over (its deadline, or its strategy ended it): the
		// quote is answered already, the result is dropped, quietly (the
		// race counted the leg as timed out or cancelled).
		return
	}
	m.results <- legResult{index: m.index, out: out}
}
