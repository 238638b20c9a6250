// Package partnergrain makes a partner's limits exact across the nodes of a
// cluster: the partner's grain (kind "partner", one per partner id) owns
// its rate buckets, and every node admits the partner's requests from
// blocks of admissions the grain grants it, so that the quote path pays a
// round trip per block, not per request.
//
// The grain. On activation it bumps the partner's epoch in the store
// (partner_epochs) and loads the grants of the last two windows
// (partner_grants): the store's fence makes every grant an earlier
// activation was told it made visible to that read, and refuses any grant
// an earlier activation tries after the bump. Its one method, acquire
// {bucket, limit, want, requester, requestId, return}, decides a block by
// routing/domain/partnerquota (min(want, max(1, remaining/(2×requesters))),
// requesters being the nodes that asked in this window, and at least the
// members of the topology), persists it in one statement that checks the
// epoch (a stale activation's grant writes nothing: it answers
// cluster.ErrStale, its activation stops, and the call is retried on the
// current one), and answers the window (how long until it resets, as the
// grain's clock measures it), what it granted, the block's lease, what
// remains ungranted, the epoch and, when it granted nothing, when it may
// grant again (the first lease of another node's block to end, or the
// reset). A requestId already answered, in this window or the one before,
// by this activation or an earlier one, is answered its first grant again
// in its own window (which may have ended: the node then spends none of
// it), never a second one: calls are retried, and the store answers a
// grant already stored under its request id with that first grant. An
// acquire wanting nothing is how a node learns the epoch (its lease) and
// gives a block's rest back; the activation checks its epoch is still
// current first (reading it, or writing the give-back under it), so that a
// stale activation neither hands its epoch out nor takes anything back.
// What is given back is written with the grants (a row's Returned) before
// it is granted again in the window, so that an activation that replaces
// this one counts the window's grants less what came back: before, a node
// whose blocks' leases kept ending (traffic in bursts) left the next
// activation a window spent on paper, refusing the partner until the
// reset.
//
// The node. Limiter keeps per (partner, bucket) the current block and
// admits locally while its lease lasts (2 s), with one acquire in flight
// per key (the other requests of the key wait for it) and, once the grain
// grants nothing, the refusal kept until the grain said it may grant
// again. A node asks for as much as the limit each time: the grain's rule,
// not the node's guess of its own traffic, sizes the block. A node's
// window ends when the grain's does, and its block's lease when the
// grain's, measured from when the node sent the acquire (so never later
// than the grain's). What a node holds unspent when the lease ends goes
// back to the grain (Run, every 250 ms, or with the node's next acquire),
// and so does a block decided under a limit other than the one the node
// now reads (the operator changed it): a node whose traffic stops holds
// nothing for long, and under a load beyond the limit on every node at
// least 0.99 L is admitted, never more than L. A grain that cannot be
// reached refuses nothing and admits nothing: the request fails (the edge
// answers INTERNAL_ERROR) rather than escaping the limit. The limit is the
// partner's as the node reads it: in a cluster the store tells every node
// of a partner's change (OnPartnerChange), and each drops its cached copy.
//
// The ledger. FencedAppender is the ledger actor's store in a cluster: it
// sends each batch with the epoch the node's lease carries for each
// partner (learned from its last acquire, without a round trip per quote);
// the store writes the rows of partners whose epoch is still that one, in
// the same transaction as the check, and names the others; their rows are
// sent again once the node's lease of them is refreshed (an acquire wanting
// nothing, asked again while no node answers for the grain). Rows are never
// dropped for a stale epoch: they are quotes already answered, or waiting
// for their row. A quote's key keeps a row from being written twice.
//
// Clocks: windows are measured by the grain's node's clock; a new
// activation on another node continues a window from the start the
// earlier one persisted, so the nodes' clocks should agree (NTP) to well
// within a second.
package partnergrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/routing/domain/partnerquota"
)

// KindName is the grain kind of partners.
const KindName = "partner"

// MethodAcquire is the grain's one method.
const MethodAcquire = "acquire"

// DefaultBlockLease is how long a node may spend a block: a block a node
// stopped spending comes back to the window within about that long.
const DefaultBlockLease = 2 * time.Second

// returnGrace is how long after a block's lease the grain waits for what
// is left of it to come back before counting it spent: the node notices
// the lease's end within its release interval and sends the rest.
const returnGrace = time.Second

// AcquireRequest asks a partner's grain for a block of admissions of one
// bucket. RequestID is the same for every retry of one acquire. Return is
// what the requester gives back of its previous block (its lease ended,
// or the limit changed), unspent and never to be spent, and ReturnWindow
// the start of the window that block was of (the grain's clock, as its
// answer carried it): admissions of another window are not taken back.
type AcquireRequest struct {
	Bucket       string `json:"bucket"`
	Limit        int    `json:"limit"`
	Want         int    `json:"want"`
	Requester    string `json:"requester"`
	RequestID    string `json:"requestId"`
	Return       int    `json:"return,omitempty"`
	ReturnWindow int64  `json:"returnWindowNs,omitempty"`
}

// AcquireAnswer is the grain's answer: the block granted, the window
// (WindowStart in the grain's clock, ResetIn the time left in it as the
// grain measured it; both zero when no window runs, and ResetIn not
// positive when the answer is the first answer of a retried request in a
// window that ended), the admissions the window has not granted yet, the
// grain's epoch, how long the block may be spent (Lease) and, when nothing
// was granted, how long until the grain may grant again (RetryIn: the
// lease of another node's block ending, or the window's reset).
type AcquireAnswer struct {
	Granted     int   `json:"granted"`
	WindowStart int64 `json:"windowStartNs"`
	ResetIn     int64 `json:"resetInNs"`
	Remaining   int   `json:"remaining"`
	Epoch       int64 `json:"epoch"`
	Lease       int64 `json:"leaseNs"`
	RetryIn     int64 `json:"retryInNs"`
}

// Store is what a partner's grain keeps in the shared store: its epoch
// and its grants, every grant fenced by the epoch (a stale one is
// partnerquota.ErrStaleEpoch). RecordPartnerGrant returns the grant as
// stored: the one given, or the first one stored under its request id.
type Store interface {
	BumpPartnerEpoch(ctx context.Context, partnerID string) (int64, error)
	PartnerEpoch(ctx context.Context, partnerID string) (int64, error)
	PartnerGrants(ctx context.Context, partnerID string, since time.Time) ([]partnerquota.Grant, error)
	SweepPartnerGrants(ctx context.Context, partnerID string, before time.Time) error
	RecordPartnerGrant(ctx context.Context, partnerID string, epoch int64, g partnerquota.Grant) (partnerquota.Grant, error)
}

// GrainConfig is what every partner grain of a node shares.
type GrainConfig struct {
	Store Store
	// Peers is how many members the topology has now: the least number of
	// requesters a block is shared among, so that the first node to ask
	// in a window does not take half of it.
	Peers func() int
	// Now is the clock; nil means time.Now.
	Now     func() time.Time
	Metrics *Metrics
	// StoreTimeout bounds each store call (default 5 s).
	StoreTimeout time.Duration
	// BlockLease is how long a node may spend a block (default
	// DefaultBlockLease).
	BlockLease time.Duration
}

// Kind is the partner grain kind, for cluster.Config.Kinds.
func Kind(cfg GrainConfig) cluster.Kind {
	cfg = cfg.withDefaults()
	return cluster.Kind{Name: KindName, Activate: func(ctx context.Context, identity string) (cluster.Handler, error) {
		return activate(ctx, cfg, identity)
	}}
}

func (cfg GrainConfig) withDefaults() GrainConfig {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Peers == nil {
		cfg.Peers = func() int { return 1 }
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = 5 * time.Second
	}
	if cfg.BlockLease <= 0 {
		cfg.BlockLease = DefaultBlockLease
	}
	return cfg
}

// kept is how far back the grain remembers grants (and the store keeps
// them): the current window and the one before, so that a request retried
// across a window's end is answered what it was first answered.
const kept = 2 * partnerquota.Window

// grain is one activation of a partner's grain.
type grain struct {
	cfg     GrainConfig
	partner string
	epoch   int64
	buckets map[string]*bucketState
	// answers is the first answer of every request id of the windows kept,
	// whatever its bucket and window.
	answers map[string]firstAnswer
}

// firstAnswer is what a request id was granted, and in which window.
type firstAnswer struct {
	bucket  string
	start   time.Time
	granted int
}

// bucketState is one bucket's current window: its state, the nodes that
// asked in it, and the lease's end (the grain's clock) of each node's
// latest block, until it is spent, given back or counted spent.
type bucketState struct {
	state      partnerquota.State
	requesters map[string]bool
	held       map[string]time.Time
}

func newBucket(s partnerquota.State) *bucketState {
	return &bucketState{state: s, requesters: map[string]bool{}, held: map[string]time.Time{}}
}

func activate(ctx context.Context, cfg GrainConfig, partner string) (*grain, error) {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.StoreTimeout)
	defer cancel()
	epoch, err := cfg.Store.BumpPartnerEpoch(ctx, partner)
	if err != nil {
		return nil, fmt.Errorf("partnergrain: activate %s: %w", partner, err)
	}
	// Read after the bump: no grant of an earlier epoch commits after it.
	since := cfg.Now().Add(-kept)
	grants, err := cfg.Store.PartnerGrants(ctx, partner, since)
	if err != nil {
		return nil, fmt.Errorf("partnergrain: activate %s: %w", partner, err)
	}
	// Rows older than the windows kept are of no use to anyone; a failed
	// sweep leaves them to the next.
	_ = cfg.Store.SweepPartnerGrants(ctx, partner, since)
	g := &grain{cfg: cfg, partner: partner, epoch: epoch, buckets: map[string]*bucketState{}, answers: map[string]firstAnswer{}}
	g.load(grants)
	cfg.Metrics.activations.Add(1)
	return g, nil
}

// load rebuilds each bucket's window from the persisted grants: the latest
// window of each bucket, what it granted less what came back, and who
// asked; and every request id's first answer.
func (g *grain) load(grants []partnerquota.Grant) {
	for _, gr := range grants {
		g.answers[gr.RequestID] = firstAnswer{bucket: gr.Bucket, start: gr.WindowStart, granted: gr.Granted}
		b := g.buckets[gr.Bucket]
		switch {
		case b == nil || gr.WindowStart.After(b.state.Start):
			b = newBucket(partnerquota.State{Start: gr.WindowStart})
			g.buckets[gr.Bucket] = b
		case gr.WindowStart.Before(b.state.Start):
			continue
		}
		b.state.Granted += gr.Granted - gr.Returned
		b.requesters[gr.Requester] = true
	}
}

// Receive serves acquire.
func (g *grain) Receive(ctx context.Context, method string, body []byte) ([]byte, error) {
	if method != MethodAcquire {
		return nil, fmt.Errorf("partnergrain: unknown method %q", method)
	}
	var req AcquireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("partnergrain: acquire: %w", err)
	}
	if req.Bucket == "" || req.RequestID == "" || req.Limit < 0 || req.Want < 0 || req.Return < 0 {
		return nil, fmt.Errorf("partnergrain: acquire: want a bucket, a request id and no negative limit, want or return, got %+v", req)
	}
	g.cfg.Metrics.served.Add(1)
	ans, err := g.acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ans)
}

func (g *grain) acquire(ctx context.Context, req AcquireRequest) (AcquireAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.StoreTimeout)
	defer cancel()
	now := g.cfg.Now()
	b := g.buckets[req.Bucket]
	if b == nil {
		b = newBucket(partnerquota.State{})
		g.buckets[req.Bucket] = b
	}
	if fa, ok := g.answers[req.RequestID]; ok {
		return g.first(b, now, req.Limit, fa), nil
	}
	// What the requester gives back of its previous block counts only in
	// the window that block was of, and never more than it granted.
	back := 0
	if req.Return > 0 && b.state.Current(now) && req.ReturnWindow == b.state.Start.UnixNano() {
		back = min(req.Return, b.state.Granted)
	}
	if req.Want == 0 {
		// A lease refresh or a block given back: the epoch handed out must
		// be current, and a stale activation takes nothing back. What comes
		// back is written (under the epoch, which checks it) before it is
		// counted free, so that a later activation counts it free too.
		if back > 0 {
			_, first, err := g.record(ctx, partnerquota.Grant{Bucket: req.Bucket, RequestID: req.RequestID, Requester: req.Requester,
				WindowStart: b.state.Start, Returned: back})
			if err != nil {
				return AcquireAnswer{}, err
			}
			if first {
				b.state.Granted -= back
			}
		} else {
			epoch, err := g.cfg.Store.PartnerEpoch(ctx, g.partner)
			if err != nil {
				return AcquireAnswer{}, fmt.Errorf("partnergrain: %s: read epoch: %w", g.partner, err)
			}
			if epoch != g.epoch {
				g.cfg.Metrics.stale.Add(1)
				return AcquireAnswer{}, cluster.ErrStale
			}
		}
		if req.Return > 0 {
			delete(b.held, req.Requester)
			g.answers[req.RequestID] = firstAnswer{bucket: req.Bucket, start: b.state.Start}
		}
		return g.answer(b, now, req.Limit, 0), nil
	}
	requesters := len(b.requesters)
	if !b.requesters[req.Requester] {
		requesters++
	}
	if !b.state.Current(now) {
		requesters = 1
	}
	from := b.state
	from.Granted -= back
	next, granted := partnerquota.Acquire(from, now, req.Limit, req.Want, max(requesters, g.cfg.Peers()))
	nb := b
	if !next.Start.Equal(b.state.Start) {
		nb = newBucket(next)
	}
	if granted > 0 || back > 0 {
		stored, first, err := g.record(ctx, partnerquota.Grant{Bucket: req.Bucket,
			RequestID: req.RequestID, Requester: req.Requester, WindowStart: next.Start, Granted: granted, Returned: back})
		if err != nil {
			return AcquireAnswer{}, err
		}
		if !first {
			// The request was answered before, by this activation or an
			// earlier one: its first answer stands, and nothing changes.
			fa := firstAnswer{bucket: stored.Bucket, start: stored.WindowStart, granted: stored.Granted}
			g.answers[req.RequestID] = fa
			return g.first(b, now, req.Limit, fa), nil
		}
		g.cfg.Metrics.blocks.Add(1)
		g.cfg.Metrics.admissions.Add(int64(granted))
		if nb != b {
			// A new window: the rows older than the windows kept go (at
			// most one sweep per bucket and window; a failed one is
			// retried at the next).
			_ = g.cfg.Store.SweepPartnerGrants(ctx, g.partner, now.Add(-kept))
			g.forget(now)
		}
	}
	nb.state = next
	nb.requesters[req.Requester] = true
	// The requester asks again only once its previous block is spent or
	// given back: its lease, if any, ends here.
	delete(nb.held, req.Requester)
	if granted > 0 {
		nb.held[req.Requester] = now.Add(g.cfg.BlockLease)
	}
	g.answers[req.RequestID] = firstAnswer{bucket: req.Bucket, start: next.Start, granted: granted}
	g.buckets[req.Bucket] = nb
	return g.answer(nb, now, req.Limit, granted), nil
}

// record writes gr (a grant, a give-back or both) under the activation's
// epoch. It returns the row the store keeps under gr's request id, and
// whether that row is gr: false for a retried request, whose first row
// stands (what it granted and took back is counted already).
func (g *grain) record(ctx context.Context, gr partnerquota.Grant) (stored partnerquota.Grant, first bool, err error) {
	stored, err = g.cfg.Store.RecordPartnerGrant(ctx, g.partner, g.epoch, gr)
	switch {
	case errors.Is(err, partnerquota.ErrStaleEpoch):
		g.cfg.Metrics.stale.Add(1)
		return stored, false, cluster.ErrStale
	case err != nil:
		return stored, false, fmt.Errorf("partnergrain: %s: record grant: %w", g.partner, err)
	}
	first = stored.WindowStart.Equal(gr.WindowStart) && stored.Granted == gr.Granted && stored.Returned == gr.Returned
	return stored, first, nil
}

// forget drops the first answers of windows older than those kept.
func (g *grain) forget(now time.Time) {
	for id, fa := range g.answers {
		if !fa.start.After(now.Add(-kept)) {
			delete(g.answers, id)
		}
	}
}

// first answers a request id already answered: the same grant, in its own
// window (which may have ended: then ResetIn is not positive and the node
// does not spend it).
func (g *grain) first(b *bucketState, now time.Time, limit int, fa firstAnswer) AcquireAnswer {
	if fa.granted == 0 || (fa.start.Equal(b.state.Start) && b.state.Current(now)) {
		return g.answer(b, now, limit, fa.granted)
	}
	return AcquireAnswer{Granted: fa.granted, WindowStart: fa.start.UnixNano(), ResetIn: int64(fa.start.Add(partnerquota.Window).Sub(now)),
		Epoch: g.epoch, Lease: int64(g.cfg.BlockLease)}
}

func (g *grain) answer(b *bucketState, now time.Time, limit, granted int) AcquireAnswer {
	a := AcquireAnswer{Granted: granted, Epoch: g.epoch, Remaining: limit}
	if granted > 0 {
		a.Lease = int64(g.cfg.BlockLease)
	}
	if b.state.Current(now) {
		a.WindowStart = b.state.Start.UnixNano()
		a.ResetIn = int64(b.state.Reset().Sub(now))
		a.Remaining = b.state.Remaining(limit)
		if granted == 0 {
			a.RetryIn = g.retryIn(b, now)
		}
	}
	return a
}

// retryIn is how long until the window may grant again once it has
// nothing left: when the first lease of a block still held ends (with the
// grace its rest takes to come back), or else the window's reset. Leases
// ended longer ago are counted spent.
func (g *grain) retryIn(b *bucketState, now time.Time) int64 {
	next := b.state.Reset()
	for who, until := range b.held {
		back := until.Add(returnGrace)
		if !back.After(now) {
			delete(b.held, who)
			continue
		}
		if back.Before(next) {
			next = back
		}
	}
	return int64(next.Sub(now))
}

// Stop ends the activation; everything it decided is in the store.
func (g *grain) Stop() {}
