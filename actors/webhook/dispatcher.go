package webhook

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// scanMsg asks the dispatcher to read due outbox entries. A full scan reads
// the outbox from its start; others start at the dispatcher's floor.
type scanMsg struct{ full bool }

// timerMsg is the dispatcher's own timer going off (see dispatcher.scanIn);
// gen tells a timer replaced since from the current one.
type timerMsg struct{ gen uint64 }

// arrivedMsg hands the dispatcher entries the pool itself just committed
// (Pool.Publish, Pool.SendTest), so that they need no scan to be found.
type arrivedMsg struct{ entries []*hook.OutboxEntry }

// floorMargin is how far below the time of a scan that left nothing behind
// the next wake-up's scan starts. It covers events whose outbox entry was
// stamped before that scan but committed after it (an event source's batch
// syncing); anything later still is found by the periodic full scan, one
// ScanInterval at most. Retries need no margin: the committer reports each
// batch's earliest (see dispatcher.retryFloor).
const floorMargin = 250 * time.Millisecond

// scanGap is the least time between two scans other than the periodic full
// one. Under a stream of events every publish wakes the dispatcher, and
// each scan walks the floor margin's entries again: a scan at most every
// scanGap reads each new entry once and the margin about 1/scanGap times a
// second, whatever the event rate, for at most scanGap of added latency.
const scanGap = 5 * time.Millisecond

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

// parkedKey is what the dispatcher remembers of a due entry it left in the
// outbox because its webhook's queue was full: enough to read it again by
// its key when the queue has room.
type parkedKey = store.OutboxKey

// hookState is the dispatcher's view of one webhook with deliveries owed:
// entries loaded and waiting for a worker (at most Config.QueuePerWebhook),
// the keys of due entries left in the outbox behind them, in due order, and
// the attempts in flight. Its entries are delivered in the order a scan
// found them, which is due order but for entries committed late.
type hookState struct {
	id, partner string
	queue       []*hook.OutboxEntry
	parked      []parkedKey
	inflight    int
	// overflow is the due time of the first of this webhook's due entries
	// that could be neither loaded nor parked (the parking bounds were
	// reached): it and every later entry of the webhook are left unread by
	// scans until a catch-up scan from overflow reads them, once the
	// webhook's parked keys have drained. Zero when every due entry of the
	// webhook that a scan met is remembered.
	overflow time.Time
	// ready records that the webhook is in the dispatcher's ready list,
	// starving that it is in its starving list.
	ready, starving bool
}

// dispatcher owns all scheduling state; only its own goroutine touches it.
//
// A scan reads due entries from the floor on, in due order, and places
// each with its webhook: loaded into the webhook's queue while it has room,
// or else parked, its key alone remembered, so that later scans start past
// it and a webhook's backlog is read once, not once per scan. As the queue
// drains, parked entries are loaded again by key. seen holds every delivery
// loaded, parked, in flight or awaiting its commit, so that no scan takes
// one twice. Workers are handed entries webhook by webhook in turn, each
// webhook and each partner up to its in-flight cap (Config.PerWebhook,
// Config.PerPartner).
type dispatcher struct {
	p     *Pool
	idle  []*actor.PID
	seen  map[string]struct{}
	hooks map[string]*hookState
	// ready lists the webhooks with loaded entries; next is where the
	// next round of handing out entries starts, so that each gets its turn.
	ready []*hookState
	next  int
	// starving lists webhooks with parked entries and room in their queue,
	// left unloaded while Config.ScanBatch entries were loaded: they are
	// refilled first as loaded entries leave.
	starving       []*hookState
	inflightPartnr map[string]int
	// queued counts loaded entries (at most Config.ScanBatch), parked the
	// parked keys (at most maxParked).
	queued, parked int
	// floor is where a scan other than a full one starts reading: below it
	// the outbox holds only entries the dispatcher knows (seen, or past an
	// overflowing webhook's overflow) and the tombstones of delivered ones,
	// which a scan from the start would walk every time. Zero means from the
	// start.
	floor time.Time
	// retryFloor is where a scan for retries coming due starts: the end of
	// the last scan, or the due time of a retry committed since that lies
	// before it. Retries are written only by the committer, which reports
	// each batch's earliest, so these scans need no margin.
	retryFloor time.Time
	// wakePending records a wake-up whose scan was put off (see scanGap):
	// the next scan starts at the floor, not the retry floor.
	wakePending bool
	// lastScan is when the last scan ran (see scanGap), on the real clock.
	lastScan time.Time
	// timer is the pending wake-up of scanIn, due at timerAt; timerGen
	// tells its message from a replaced timer's.
	timer    *time.Timer
	timerAt  time.Time
	timerGen uint64
	self     *actor.PID
}

func newDispatcher(p *Pool) *dispatcher {
	return &dispatcher{
		p:              p,
		seen:           make(map[string]struct{}),
		hooks:          make(map[string]*hookState),
		inflightPartnr: make(map[string]int),
	}
}

// maxParked bounds the parked keys of all webhooks, maxParkedPerHook those
// of one, so that a webhook whose receiver is down cannot take the room of
// every other. A parked key costs about 100 bytes.
func (d *dispatcher) maxParked() int        { return d.p.cfg.ScanBatch * parkFactor }
func (d *dispatcher) maxParkedPerHook() int { return d.maxParked() / 4 }

func (d *dispatcher) Receive(ctx actor.Context) {
	d.receive(ctx)
	// The dispatcher alone writes these; a scrape reads the last.
	d.p.stats.Busy.Store(int64(d.p.cfg.PoolSize - len(d.idle)))
	d.p.stats.Queued.Store(int64(d.queued))
	d.p.stats.Parked.Store(int64(d.parked))
}

func (d *dispatcher) receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		d.self = ctx.Self()
		committer := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return &committer{p: d.p} }))
		props := actor.PropsFromProducer(func() actor.Actor { return &worker{p: d.p, committer: committer} })
		for range d.p.cfg.PoolSize {
			d.idle = append(d.idle, ctx.Spawn(props))
		}
	case *actor.Stopping:
		if d.timer != nil {
			d.timer.Stop()
		}
	case scanMsg:
		if m.full {
			d.scan(true)
			d.pump(ctx)
			return
		}
		d.wakePending = true
		d.scanPaced(ctx)
	case timerMsg:
		if m.gen != d.timerGen {
			return
		}
		d.timerAt = time.Time{}
		d.scanPaced(ctx)
	case *arrivedMsg:
		for _, e := range m.entries {
			if _, ok := d.seen[e.DeliveryID]; !ok {
				d.place(e)
			}
		}
		d.pump(ctx)
	case *doneMsg:
		e := m.entry
		decr(d.inflightPartnr, e.PartnerID)
		d.idle = append(d.idle, m.worker)
		h := d.hooks[e.WebhookID]
		if h != nil {
			h.inflight--
		}
		if m.settled {
			delete(d.seen, e.DeliveryID)
		}
		d.pump(ctx)
		if h != nil {
			d.dropIfIdle(h)
		}
	case *settledMsg:
		for _, e := range m.entries {
			delete(d.seen, e.DeliveryID)
		}
		if !m.nextRetry.IsZero() {
			if m.nextRetry.Before(d.retryFloor) {
				d.retryFloor = m.nextRetry
			}
			d.scanIn(m.nextRetry.Sub(d.p.cfg.Now()))
		}
	}
}

// scanPaced scans now, or, within scanGap of the last scan, when scanGap
// has passed. A paced wake-up stays pending (Pool.woken), so further ones
// cost nothing until its scan runs.
func (d *dispatcher) scanPaced(ctx actor.Context) {
	if wait := scanGap - time.Since(d.lastScan); wait > 0 {
		d.scanIn(wait)
		return
	}
	d.scan(false)
	d.pump(ctx)
}

func decr(m map[string]int, k string) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}

// scanIn makes sure a scan runs within wait at the latest: a retry coming
// due, or a paced wake-up. An earlier pending wake-up covers it. The timer
// runs on the real clock, whatever Config.Now says.
func (d *dispatcher) scanIn(wait time.Duration) {
	at := time.Now().Add(max(0, wait))
	if !d.timerAt.IsZero() && !at.Before(d.timerAt) {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timerGen++
	d.timerAt = at
	gen, root, self := d.timerGen, d.p.root, d.self
	d.timer = time.AfterFunc(max(0, wait), func() { root.Send(self, timerMsg{gen: gen}) })
}

// hook returns the state of webhook id, making it if needed.
func (d *dispatcher) hook(id, partner string) *hookState {
	h := d.hooks[id]
	if h == nil {
		h = &hookState{id: id, partner: partner}
		d.hooks[id] = h
	}
	return h
}

// dropIfIdle forgets a webhook with nothing owed in memory.
func (d *dispatcher) dropIfIdle(h *hookState) {
	if h.inflight == 0 && len(h.queue) == 0 && len(h.parked) == 0 && h.overflow.IsZero() && !h.ready && !h.starving {
		delete(d.hooks, h.id)
	}
}

// walk reads due entries from `from` to now and places each the
// dispatcher has not seen with its webhook. An entry of a webhook already
// known whose queue cannot take it is placed by its key alone (parked, or
// left as the webhook's overflow) without decoding it; others are decoded
// and placed (see place), at most the scan's bound of them: walk returns
// the due time of the entry it stopped after at that bound (zero when it
// read to now), and false when the store failed.
func (d *dispatcher) walk(from, now time.Time) (stopAt time.Time, ok bool) {
	examined, limit := 0, d.p.cfg.ScanBatch*scanExamineFactor
	skip := func(due time.Time, id, webhookID []byte) bool {
		if _, ok := d.seen[string(id)]; ok {
			return true
		}
		h := d.hooks[string(webhookID)]
		switch {
		case h == nil:
			return false
		case !h.overflow.IsZero():
			return true
		case d.loadable(h):
			return false
		}
		d.park(h, due, string(id))
		return true
	}
	err := d.p.store.DueDeliveries(d.p.ctx, from, now, skip, func(e *hook.OutboxEntry) bool {
		examined++
		d.place(e)
		if examined >= limit {
			stopAt = e.Due
			return false
		}
		return true
	})
	if err != nil {
		if !d.p.isShutdown(err) {
			d.p.stats.ScanFailures.Add(1)
			d.p.cfg.Logger.Error("webhook outbox scan failed", slog.Any("err", err))
		}
		return time.Time{}, false
	}
	return stopAt, true
}

// loadable reports whether an entry of h a scan meets may go straight
// into its queue: nothing of h is parked before it, and there is room.
func (d *dispatcher) loadable(h *hookState) bool {
	return len(h.parked) == 0 && len(h.queue) < d.p.cfg.QueuePerWebhook && d.queued < d.p.cfg.ScanBatch
}

// place takes an entry a scan decoded: loaded into its webhook's queue
// when loadable, else parked. An overflowing webhook's entries are left
// alone.
func (d *dispatcher) place(e *hook.OutboxEntry) {
	h := d.hook(e.WebhookID, e.PartnerID)
	switch {
	case !h.overflow.IsZero():
	case d.loadable(h):
		d.seen[e.DeliveryID] = struct{}{}
		d.enqueue(h, e)
	default:
		d.park(h, e.Due, e.DeliveryID)
	}
}

// park remembers the key of an entry of h left in the outbox, in due
// order behind h's queue, when the parking bounds allow; otherwise h
// overflows from this entry on.
func (d *dispatcher) park(h *hookState, due time.Time, id string) {
	if len(h.parked) >= d.maxParkedPerHook() || d.parked >= d.maxParked() {
		h.overflow = due
		return
	}
	d.seen[id] = struct{}{}
	h.parked = append(h.parked, parkedKey{Due: due, DeliveryID: id})
	d.parked++
	if len(h.queue) < d.p.cfg.QueuePerWebhook {
		d.starve(h)
	}
}

// starve lists a webhook whose queue has room while entries of its wait
// parked because Config.ScanBatch entries are loaded.
func (d *dispatcher) starve(h *hookState) {
	if !h.starving {
		h.starving = true
		d.starving = append(d.starving, h)
	}
}

// feed refills starving webhooks, oldest first, while loaded entries are
// fewer than Config.ScanBatch.
func (d *dispatcher) feed() {
	for len(d.starving) > 0 && d.queued < d.p.cfg.ScanBatch {
		h := d.starving[0]
		d.starving[0] = nil
		d.starving = d.starving[1:]
		h.starving = false
		d.refill(h)
		d.dropIfIdle(h)
	}
	if len(d.starving) == 0 {
		d.starving = nil
	}
}

func (d *dispatcher) enqueue(h *hookState, e *hook.OutboxEntry) {
	h.queue = append(h.queue, e)
	d.queued++
	if !h.ready {
		h.ready = true
		d.ready = append(d.ready, h)
	}
}

// scan tops the webhooks' queues up from the outbox with entries due now,
// earliest first, parking what they cannot hold. A full scan starts at the
// front of the outbox; one for a wake-up at the floor the previous one
// left (or the retry floor, if lower); one for retries coming due at the
// retry floor. It then makes sure a scan runs when the next retry comes
// due, and a full scan lets overflowing webhooks with room catch up.
func (d *dispatcher) scan(full bool) {
	d.p.woken.Store(false)
	now := d.p.cfg.Now()
	d.lastScan = time.Now()
	wake := d.wakePending || full
	d.wakePending = false
	if !d.p.enter() {
		return
	}
	defer d.p.leave()
	from := d.retryFloor
	switch {
	case full:
		from = time.Time{}
	case wake && d.floor.Before(from):
		from = d.floor
	}
	stopAt, ok := d.walk(from, now)
	if !ok {
		d.floor, d.retryFloor = time.Time{}, time.Time{}
		return
	}
	// What this scan read up to: now, or where it stopped at its bound
	// (the rest is read by the next one).
	upTo := now.Add(time.Nanosecond)
	if !stopAt.IsZero() {
		upTo = stopAt
		d.p.Wake()
	}
	if !from.After(d.floor) {
		d.floor = now.Add(-floorMargin)
		if upTo.Before(d.floor) {
			d.floor = upTo
		}
	}
	if !from.After(d.retryFloor) {
		d.retryFloor = upTo
	}
	if next, ok, err := d.p.store.NextDue(d.p.ctx, now); err == nil && ok {
		d.scanIn(next.Sub(now))
	}
	if full {
		for _, h := range d.hooks {
			d.catchUp(h)
		}
	}
}

// catchUp reads the entries an overflowing webhook left in the outbox,
// from its overflow on, once it has room to park half its bound again.
// The walk places them as any scan does, until the webhook overflows again.
func (d *dispatcher) catchUp(h *hookState) {
	if h.overflow.IsZero() || len(h.parked) > d.maxParkedPerHook()/2 || d.parked > d.maxParked()/2 {
		return
	}
	from := h.overflow
	h.overflow = time.Time{}
	stopAt, ok := d.walk(from, d.p.cfg.Now())
	switch {
	case !ok:
		if h.overflow.IsZero() {
			h.overflow = from
		}
	case !stopAt.IsZero() && h.overflow.IsZero():
		h.overflow = stopAt
	}
}

// refill loads a webhook's parked entries into its queue, once it is half
// empty, as many as it has room for, reading them again by key in one
// pass, and lists it as starving when only Config.ScanBatch stops it. An
// entry no longer in the outbox is forgotten. When the store fails, all
// the webhook's parked keys are forgotten and the floors reset: the next
// scan finds their entries again.
func (d *dispatcher) refill(h *hookState) {
	if len(h.parked) == 0 || len(h.queue) > d.p.cfg.QueuePerWebhook/2 {
		return
	}
	n := min(len(h.parked), d.p.cfg.QueuePerWebhook-len(h.queue), d.p.cfg.ScanBatch-d.queued)
	if n <= 0 {
		d.starve(h)
		return
	}
	if !d.p.enter() {
		return
	}
	defer d.p.leave()
	keys := h.parked[:n]
	// reached counts the keys the store answered for (in order): on a
	// failure, only the others are forgotten, since those it answered are
	// queued or were forgotten already.
	reached := 0
	err := d.p.store.OutboxEntries(d.p.ctx, keys, func(i int, e *hook.OutboxEntry) {
		reached = i + 1
		if e == nil {
			delete(d.seen, keys[i].DeliveryID)
			return
		}
		d.enqueue(h, e)
	})
	if err != nil {
		for _, k := range keys[reached:] {
			delete(d.seen, k.DeliveryID)
		}
	}
	clear(keys)
	h.parked = h.parked[n:]
	d.parked -= n
	if err != nil {
		if !d.p.isShutdown(err) {
			d.p.stats.ScanFailures.Add(1)
			d.p.cfg.Logger.Error("webhook outbox read failed", slog.String("webhook", h.id), slog.Any("err", err))
		}
		for _, k := range h.parked {
			delete(d.seen, k.DeliveryID)
		}
		d.parked -= len(h.parked)
		h.parked = nil
		d.floor, d.retryFloor = time.Time{}, time.Time{}
		return
	}
	if len(h.parked) == 0 {
		h.parked = nil
	} else if len(h.queue) < d.p.cfg.QueuePerWebhook {
		d.starve(h)
	}
	d.catchUp(h)
}

// pump hands loaded entries to idle workers, one webhook after the other,
// passing over webhooks and partners at their in-flight cap: those wait
// without holding up anyone else. Each webhook's queue is refilled from its
// parked keys as it drains.
func (d *dispatcher) pump(ctx actor.Context) {
	for len(d.idle) > 0 && len(d.ready) > 0 {
		gave := false
		for i := 0; i < len(d.ready) && len(d.idle) > 0; i++ {
			h := d.ready[(d.next+i)%len(d.ready)]
			if len(h.queue) == 0 || h.inflight >= d.p.cfg.PerWebhook || d.inflightPartnr[h.partner] >= d.p.cfg.PerPartner {
				continue
			}
			e := h.queue[0]
			h.queue[0] = nil
			h.queue = h.queue[1:]
			d.queued--
			w := d.idle[len(d.idle)-1]
			d.idle = d.idle[:len(d.idle)-1]
			h.inflight++
			d.inflightPartnr[h.partner]++
			ctx.Send(w, &job{entry: e})
			d.refill(h)
			gave = true
		}
		d.pruneReady()
		d.feed()
		if !gave {
			break
		}
	}
	d.feed()
}

// pruneReady drops the webhooks with an empty queue from the ready list
// and moves the start of the next round one webhook on.
func (d *dispatcher) pruneReady() {
	kept := d.ready[:0]
	for _, h := range d.ready {
		if len(h.queue) > 0 {
			kept = append(kept, h)
			continue
		}
		h.ready = false
		h.queue = nil
		d.dropIfIdle(h)
	}
	clear(d.ready[len(kept):])
	d.ready = kept
	if len(d.ready) > 0 {
		d.next = (d.next + 1) % len(d.ready)
	} else {
		d.next = 0
	}
}
