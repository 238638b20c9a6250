package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
)

// A provider pool is one parent actor per provider with a fixed number of
// worker children. The parent balances: it hands each leg to an idle worker
// and queues it (boundedly) when all are busy, so one slow upstream call
// never holds up a leg that another worker could take. Workers run the
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
}

// legResult is one leg's outcome and its place in the race.
type legResult struct {
	index int
	out   quote.LegOutcome
}

// idle tells the parent a worker is free.
type idle struct{ pid *actor.PID }

type poolActor struct {
	p        quote.Provider
	size     int
	maxQueue int
	idle     []*actor.PID
	queue    []*legMsg
	// st is where the pool publishes its idle workers, queue length and
	// refusals for metrics.
	st *poolStats
	// opts are the workers' props options (their dispatcher).
	opts []actor.PropsOption
}

func (a *poolActor) Receive(c actor.Context) {
	a.receive(c)
	// Plain stores, by the pool's only writer: a scrape reads the last.
	a.st.idle.Store(int64(len(a.idle)))
	a.st.queued.Store(int64(len(a.queue)))
}

func (a *poolActor) receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		props := actor.PropsFromProducer(func() actor.Actor {
			pricer, _ := a.p.(quote.Pricer)
			return &workerActor{p: a.p, pricer: pricer}
		}, a.opts...)
		// Fresh workers are idle from birth; registering them here
		// rather than waiting for a message from each means the first
		// quotes find the pool ready.
		for i := 0; i < a.size; i++ {
			a.idle = append(a.idle, c.Spawn(props))
		}
	case *legMsg:
		if len(a.idle) > 0 {
			w := a.idle[len(a.idle)-1]
			a.idle = a.idle[:len(a.idle)-1]
			c.Send(w, m)
			return
		}
		if len(a.queue) >= a.maxQueue {
			a.st.saturationRefusals.Add(1)
			m.results <- legResult{index: m.index, out: quote.LegOutcome{Provider: m.provider, Leg: m.leg, Answered: true,
				Err: apierr.New(apierr.ServiceUnavailable, fmt.Sprintf("%s pool saturated (%d workers, %d queued)", m.provider, a.size, len(a.queue)))}}
			return
		}
		a.queue = append(a.queue, m)
	case idle:
		for len(a.queue) > 0 {
			next := a.queue[0]
			a.queue[0] = nil
			a.queue = a.queue[1:]
			if time.Now().Before(next.deadline) {
				c.Send(m.pid, next)
				return
			}
			// Its quote has already been answered; nobody waits for it.
		}
		a.idle = append(a.idle, m.pid)
	case *actor.Terminated:
		for i, p := range a.idle {
			if p.Equal(m.Who) {
				a.idle = append(a.idle[:i], a.idle[i+1:]...)
				break
			}
		}
	}
}

type workerActor struct {
	p      quote.Provider
	pricer quote.Pricer // p, when it prices in two phases
}

func (w *workerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Restarting:
		// The leg that crashed the worker was answered already; once
		// restarted, the worker is free again.
		c.Send(c.Parent(), idle{pid: c.Self()})
	case *legMsg:
		w.run(c, m)
		c.Send(c.Parent(), idle{pid: c.Self()})
	}
}

func (w *workerActor) run(c actor.Context, m *legMsg) {
	out := quote.LegOutcome{Provider: m.provider, Leg: m.leg, Answered: true}
	defer func() {
		if p := recover(); p != nil {
			out.Err = apierr.New(apierr.UpstreamError, fmt.Sprintf("%s/%s failed", m.provider, m.leg)).Wrap(fmt.Errorf("panic: %v", p))
			m.results <- legResult{index: m.index, out: out}
			m.stats.latency.ObserveDuration(time.Since(m.start))
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
	m.stats.latency.ObserveDuration(time.Since(m.start))
	if ctx.Err() != nil {
		// Past the deadline: the quote is answered already, the result
		// is dropped, quietly (the race counted it as a timeout).
		return
	}
	m.results <- legResult{index: m.index, out: out}
}
