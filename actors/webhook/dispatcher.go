package webhook

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	hook "github.com/swapgate/swapgate/routing/webhook"
)

// scanMsg asks the dispatcher to read due outbox entries. A full scan reads
// the outbox from its start; others start at the dispatcher's floor.
type scanMsg struct{ full bool }

// floorMargin is how far below the time of a scan that left nothing behind
// the next wake-up's scan starts. It covers events whose outbox entry was
// stamped before that scan but committed after it (a Publish syncing, an
// event source's batch); anything later still is found by the periodic full
// scan, one ScanInterval at most.
const floorMargin = 250 * time.Millisecond

// job hands one entry to a worker.
type job struct{ entry *hook.OutboxEntry }

// doneMsg tells the dispatcher a worker finished an attempt of an entry.
// Unless settled is set, the outcome is on its way to the committer, and the
// entry stays known until the committer's settledMsg.
type doneMsg struct {
	entry   *hook.OutboxEntry
	worker  *actor.PID
	settled bool
}

// parkedEntry is what the dispatcher remembers of an entry it left in the
// outbox.
type parkedEntry struct {
	webhookID string
	due       time.Time
}

// dispatcher owns all scheduling state; only its own goroutine touches it.
// known holds every delivery queued or in flight so a scan never loads one
// twice; the per-webhook and per-partner counts enforce Config.PerWebhook
// and Config.PerPartner.
type dispatcher struct {
	p              *Pool
	idle           []*actor.PID
	queue          []*hook.OutboxEntry
	known          map[string]bool
	queuedHook     map[string]int
	inflightHook   map[string]int
	inflightPartnr map[string]int
	// parked maps the delivery IDs a scan found due but left in the outbox,
	// because their webhook's queue was full, to that webhook. The next scan
	// passes over them by key alone while the webhook is still full, instead
	// of decoding them again: without it, a backlog costs a full decode of
	// every waiting entry per wake-up. It holds at most maxParked entries;
	// beyond that, entries are decoded and left as before.
	parked map[string]parkedEntry
	// floor is where a wake-up's scan starts reading: below it the outbox
	// holds only entries known to the dispatcher and the tombstones of
	// delivered ones, which a scan from the start would walk every time.
	// Zero means from the start.
	floor time.Time
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
		parked:         make(map[string]parkedEntry),
	}
}

func (d *dispatcher) Receive(ctx actor.Context) {
	d.receive(ctx)
	// The dispatcher alone writes these; a scrape reads the last.
	d.p.stats.Busy.Store(int64(d.p.cfg.PoolSize - len(d.idle)))
	d.p.stats.Queued.Store(int64(len(d.queue)))
}

func (d *dispatcher) receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		committer := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return &committer{p: d.p} }))
		props := actor.PropsFromProducer(func() actor.Actor { return &worker{p: d.p, committer: committer} })
		for range d.p.cfg.PoolSize {
			d.idle = append(d.idle, ctx.Spawn(props))
		}
	case scanMsg:
		d.scan(m.full)
		d.pump(ctx)
	case *doneMsg:
		decr(d.queuedHook, m.entry.WebhookID)
		decr(d.inflightHook, m.entry.WebhookID)
		decr(d.inflightPartnr, m.entry.PartnerID)
		d.idle = append(d.idle, m.worker)
		if m.settled {
			d.settle(m.entry)
		}
		d.pump(ctx)
		d.wakeIfMoreDue()
	case *settledMsg:
		for _, e := range m.entries {
			d.settle(e)
		}
		d.wakeIfMoreDue()
	}
}

// settle forgets an entry whose outcome is in the store. Its webhook's
// queue already made room for the next entry when the attempt ended: the
// pending commit keeps the entry known, which is all a scan needs.
func (d *dispatcher) settle(e *hook.OutboxEntry) {
	delete(d.known, e.DeliveryID)
}

// wakeIfMoreDue rescans when the last scan left due entries behind and a
// worker is free to take one.
func (d *dispatcher) wakeIfMoreDue() {
	if d.moreDue && len(d.idle) > 0 {
		// Coalesced with every other wake-up: a burst of completions
		// costs one rescan, not one each.
		d.p.Wake()
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
// already has Config.QueuePerWebhook waiting. A full scan starts at the front of
// the outbox; any other starts at the floor the previous scan left.
func (d *dispatcher) scan(full bool) {
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
	from := d.floor
	if full {
		from = time.Time{}
	}
	now := d.p.cfg.Now()
	examined, limit := 0, d.p.cfg.ScanBatch*scanExamineFactor
	maxParked := limit
	d.moreDue = false
	// firstLeft is the due time of the earliest entry this scan leaves in
	// the outbox; the next floor may not pass it.
	var firstLeft time.Time
	leave := func(due time.Time) {
		d.moreDue = true
		if firstLeft.IsZero() {
			firstLeft = due
		}
	}
	skip := func(id string) bool {
		if d.known[id] {
			return true
		}
		if pe, ok := d.parked[id]; ok && d.queuedHook[pe.webhookID] >= d.p.cfg.QueuePerWebhook {
			leave(pe.due)
			return true
		}
		return false
	}
	err := d.p.store.DueDeliveries(d.p.ctx, from, now, skip, func(e *hook.OutboxEntry) bool {
		examined++
		if d.queuedHook[e.WebhookID] >= d.p.cfg.QueuePerWebhook {
			// Left in the outbox for now; a later scan, after this
			// webhook's queue has drained, picks it up.
			if len(d.parked) < maxParked {
				d.parked[e.DeliveryID] = parkedEntry{webhookID: e.WebhookID, due: e.Due}
			}
			leave(e.Due)
			return examined < limit
		}
		delete(d.parked, e.DeliveryID)
		d.known[e.DeliveryID] = true
		d.queuedHook[e.WebhookID]++
		d.queue = append(d.queue, e)
		room--
		if room == 0 || examined >= limit {
			// What follows e is unread.
			leave(e.Due)
			return false
		}
		return true
	})
	if err != nil {
		d.floor = time.Time{}
		if !d.p.isShutdown(err) {
			d.p.stats.ScanFailures.Add(1)
			d.p.cfg.Logger.Error("webhook outbox scan failed", slog.Any("err", err))
		}
		return
	}
	d.floor = now.Add(-floorMargin)
	if !firstLeft.IsZero() && firstLeft.Before(d.floor) {
		d.floor = firstLeft
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
