package webhook

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/persistence"
)

// scanMsg asks the dispatcher to read due outbox entries.
type scanMsg struct{}

// job hands one entry to a worker.
type job struct{ entry *persistence.OutboxEntry }

// doneMsg tells the dispatcher a worker finished an entry, whatever the
// outcome; the entry's new state is in the store.
type doneMsg struct {
	entry  *persistence.OutboxEntry
	worker *actor.PID
}

// dispatcher owns all scheduling state; only its own goroutine touches it.
// known holds every delivery queued or in flight so a scan never loads one
// twice; the per-webhook and per-partner counts enforce Config.PerWebhook
// and Config.PerPartner.
type dispatcher struct {
	p              *Pool
	idle           []*actor.PID
	queue          []*persistence.OutboxEntry
	known          map[string]bool
	queuedHook     map[string]int
	inflightHook   map[string]int
	inflightPartnr map[string]int
	// moreDue records that the last scan stopped early, so more due
	// entries may wait in the outbox as soon as the queue drains.
	moreDue bool
}

func newDispatcher(p *Pool) *dispatcher {
	return &dispatcher{
		p:              p,
		known:          make(map[string]bool),
		queuedHook:     make(map[string]int),
		inflightHook:   make(map[string]int),
		inflightPartnr: make(map[string]int),
	}
}

func (d *dispatcher) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		props := actor.PropsFromProducer(func() actor.Actor { return &worker{p: d.p} })
		for range d.p.cfg.PoolSize {
			d.idle = append(d.idle, ctx.Spawn(props))
		}
	case scanMsg:
		d.scan()
		d.pump(ctx)
	case *doneMsg:
		id := m.entry.DeliveryID
		delete(d.known, id)
		decr(d.queuedHook, m.entry.WebhookID)
		decr(d.inflightHook, m.entry.WebhookID)
		decr(d.inflightPartnr, m.entry.PartnerID)
		d.idle = append(d.idle, m.worker)
		d.pump(ctx)
		if d.moreDue && len(d.idle) > 0 {
			// Coalesced with every other wake-up: a burst of completions
			// costs one rescan, not one each.
			d.p.Wake()
		}
	}
}

func decr(m map[string]int, k string) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}

// scan tops the in-memory queue up from the outbox with entries due now,
// earliest first, skipping those already queued and those of a webhook that
// already has maxQueuedPerWebhook waiting.
func (d *dispatcher) scan() {
	d.p.woken.Store(false)
	room := d.p.cfg.ScanBatch - len(d.queue)
	if room <= 0 {
		d.moreDue = true
		return
	}
	if !d.p.enter() {
		return
	}
	defer d.p.leave()
	examined, limit := 0, d.p.cfg.ScanBatch*scanExamineFactor
	d.moreDue = false
	known := func(id string) bool { return d.known[id] }
	err := d.p.store.DueDeliveries(d.p.ctx, d.p.cfg.Now(), known, func(e *persistence.OutboxEntry) bool {
		examined++
		if d.queuedHook[e.WebhookID] >= maxQueuedPerWebhook {
			// Left in the outbox for now; a later scan, after this
			// webhook's queue has drained, picks it up.
			d.moreDue = true
			return examined < limit
		}
		d.known[e.DeliveryID] = true
		d.queuedHook[e.WebhookID]++
		d.queue = append(d.queue, e)
		room--
		if room == 0 || examined >= limit {
			d.moreDue = true
			return false
		}
		return true
	})
	if err != nil && !d.p.isShutdown(err) {
		d.p.cfg.Logger.Error("webhook outbox scan failed", slog.Any("err", err))
	}
}

// pump hands queued entries to idle workers in due order, passing over
// entries whose webhook or partner is at its in-flight cap: those wait
// without holding up anyone behind them.
func (d *dispatcher) pump(ctx actor.Context) {
	if len(d.idle) == 0 || len(d.queue) == 0 {
		return
	}
	rest := d.queue[:0]
	for i, e := range d.queue {
		if len(d.idle) == 0 {
			rest = append(rest, d.queue[i:]...)
			break
		}
		if d.inflightHook[e.WebhookID] >= d.p.cfg.PerWebhook || d.inflightPartnr[e.PartnerID] >= d.p.cfg.PerPartner {
			rest = append(rest, e)
			continue
		}
		w := d.idle[len(d.idle)-1]
		d.idle = d.idle[:len(d.idle)-1]
		d.inflightHook[e.WebhookID]++
		d.inflightPartnr[e.PartnerID]++
		ctx.Send(w, &job{entry: e})
	}
	clear(d.queue[len(rest):])
	d.queue = rest
}
