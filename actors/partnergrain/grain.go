// Package partnergrain makes a partner's limits exact across the nodes of a
// cluster: the partner's grain (kind "partner", one per partner id) owns
// its rate buckets, and every node admits the partner's requests from
// blocks of admissions the grain grants it, so that the quote path pays a
// round trip per block, not per request.
//
// The grain. On activation it bumps the partner's epoch in the store
// (partner_epochs) and loads the grants of the windows still running
// (partner_grants): the store's fence makes every grant an earlier
// activation was told it made visible to that read, and refuses any grant
// an earlier activation tries after the bump. Its one method, acquire
// {bucket, limit, want, requester, requestId}, decides a block by
// routing/domain/partnerquota (min(want, max(1, remaining/(2×requesters))),
// requesters being the nodes that asked in this window, and at least the
// members of the topology), persists it in one statement that checks the
// epoch (a stale activation's grant writes nothing: it answers
// cluster.ErrStale, its activation stops, and the call is retried on the
// current one), and answers the window (how long until it resets, as the
// grain's clock measures it), what it granted, what remains ungranted and
// the epoch. A requestId already answered in the window is answered the
// same grant again without a second one (calls are retried). An acquire
// wanting nothing writes nothing: it is how a node learns the epoch (its
// lease), and the activation checks its epoch is still current first, so
// that a stale activation does not hand its epoch out.
//
// The node. Limiter keeps per (partner, bucket) the current block and
// admits locally while it lasts, with one acquire in flight per key (the
// other requests of the key wait for it) and, once the grain grants
// nothing, the refusal kept until the window's reset. A node asks for as
// much as the limit each time: the grain's rule, not the node's guess of
// its own traffic, sizes the block. A node's window ends
// when the grain's does, measured from when the node sent the acquire (so
// never later than the grain's). What a node holds unspent when its
// traffic stops is lost to the window (the grain counted it granted): the
// blocks' shrinking keeps that small, and under a load beyond the limit on
// every node at least 0.99 L is admitted, never more than L. A grain that
// cannot be reached refuses nothing and admits nothing: the request fails
// (the edge answers INTERNAL_ERROR) rather than escaping the limit.
//
// The ledger. FencedAppender is the ledger actor's store in a cluster: it
// sends each batch with the epoch the node's lease carries for each
// partner (learned from its last acquire, without a round trip per quote);
// the store writes the rows of partners whose epoch is still that one, in
// the same transaction as the check, and names the others; their rows are
// sent again once the node's lease of them is refreshed (an acquire wanting
// nothing). A quote's key keeps a row from being written twice.
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

// AcquireRequest asks a partner's grain for a block of admissions of one
// bucket. RequestID is the same for every retry of one acquire.
type AcquireRequest struct {
	Bucket    string `json:"bucket"`
	Limit     int    `json:"limit"`
	Want      int    `json:"want"`
	Requester string `json:"requester"`
	RequestID string `json:"requestId"`
}

// AcquireAnswer is the grain's answer: the block granted, the window
// (WindowStart in the grain's clock, ResetIn the time left in it as the
// grain measured it; both zero when no window runs), the admissions the
// window has not granted yet, and the grain's epoch.
type AcquireAnswer struct {
	Granted     int   `json:"granted"`
	WindowStart int64 `json:"windowStartNs"`
	ResetIn     int64 `json:"resetInNs"`
	Remaining   int   `json:"remaining"`
	Epoch       int64 `json:"epoch"`
}

// Store is what a partner's grain keeps in the shared store: its epoch
// and its grants, every grant fenced by the epoch (a stale one is
// partnerquota.ErrStaleEpoch).
type Store interface {
	BumpPartnerEpoch(ctx context.Context, partnerID string) (int64, error)
	PartnerEpoch(ctx context.Context, partnerID string) (int64, error)
	PartnerGrants(ctx context.Context, partnerID string, since time.Time) ([]partnerquota.Grant, error)
	SweepPartnerGrants(ctx context.Context, partnerID string, before time.Time) error
	RecordPartnerGrant(ctx context.Context, partnerID string, epoch int64, g partnerquota.Grant) error
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
}

// Kind is the partner grain kind, for cluster.Config.Kinds.
func Kind(cfg GrainConfig) cluster.Kind {
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
	return cluster.Kind{Name: KindName, Activate: func(ctx context.Context, identity string) (cluster.Handler, error) {
		return activate(ctx, cfg, identity)
	}}
}

// grain is one activation of a partner's grain.
type grain struct {
	cfg     GrainConfig
	partner string
	epoch   int64
	buckets map[string]*bucketState
}

// bucketState is one bucket's current window: its state, the nodes that
// asked in it and the grant each request id got.
type bucketState struct {
	state      partnerquota.State
	requesters map[string]bool
	answered   map[string]int
}

func newBucket(s partnerquota.State) *bucketState {
	return &bucketState{state: s, requesters: map[string]bool{}, answered: map[string]int{}}
}

func activate(ctx context.Context, cfg GrainConfig, partner string) (*grain, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StoreTimeout)
	defer cancel()
	epoch, err := cfg.Store.BumpPartnerEpoch(ctx, partner)
	if err != nil {
		return nil, fmt.Errorf("partnergrain: activate %s: %w", partner, err)
	}
	// Read after the bump: no grant of an earlier epoch commits after it.
	since := cfg.Now().Add(-partnerquota.Window)
	grants, err := cfg.Store.PartnerGrants(ctx, partner, since)
	if err != nil {
		return nil, fmt.Errorf("partnergrain: activate %s: %w", partner, err)
	}
	// Ended windows' rows are of no use to anyone; a failed sweep leaves
	// them to the next.
	_ = cfg.Store.SweepPartnerGrants(ctx, partner, since)
	g := &grain{cfg: cfg, partner: partner, epoch: epoch, buckets: map[string]*bucketState{}}
	g.load(grants)
	cfg.Metrics.activations.Add(1)
	return g, nil
}

// load rebuilds each bucket's window from the persisted grants: the latest
// window of each bucket, what it granted, who asked and under which
// request ids.
func (g *grain) load(grants []partnerquota.Grant) {
	for _, gr := range grants {
		b := g.buckets[gr.Bucket]
		switch {
		case b == nil || gr.WindowStart.After(b.state.Start):
			b = newBucket(partnerquota.State{Start: gr.WindowStart})
			g.buckets[gr.Bucket] = b
		case gr.WindowStart.Before(b.state.Start):
			continue
		}
		b.state.Granted += gr.Granted
		b.requesters[gr.Requester] = true
		b.answered[gr.RequestID] = gr.Granted
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
	if req.Bucket == "" || req.RequestID == "" || req.Limit < 0 || req.Want < 0 {
		return nil, fmt.Errorf("partnergrain: acquire: want a bucket, a request id and no negative limit or want, got %+v", req)
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
	if granted, ok := b.answered[req.RequestID]; ok && b.state.Current(now) {
		return g.answer(b, now, req.Limit, granted), nil
	}
	if req.Want == 0 {
		// A lease refresh: the epoch handed out must be current.
		epoch, err := g.cfg.Store.PartnerEpoch(ctx, g.partner)
		if err != nil {
			return AcquireAnswer{}, fmt.Errorf("partnergrain: %s: read epoch: %w", g.partner, err)
		}
		if epoch != g.epoch {
			g.cfg.Metrics.stale.Add(1)
			return AcquireAnswer{}, cluster.ErrStale
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
	next, granted := partnerquota.Acquire(b.state, now, req.Limit, req.Want, max(requesters, g.cfg.Peers()))
	nb := b
	if !next.Start.Equal(b.state.Start) {
		nb = newBucket(next)
	}
	if granted > 0 {
		err := g.cfg.Store.RecordPartnerGrant(ctx, g.partner, g.epoch, partnerquota.Grant{Bucket: req.Bucket,
			RequestID: req.RequestID, Requester: req.Requester, WindowStart: next.Start, Granted: granted})
		switch {
		case errors.Is(err, partnerquota.ErrStaleEpoch):
			g.cfg.Metrics.stale.Add(1)
			return AcquireAnswer{}, cluster.ErrStale
		case err != nil:
			return AcquireAnswer{}, fmt.Errorf("partnergrain: %s: record grant: %w", g.partner, err)
		}
		g.cfg.Metrics.blocks.Add(1)
		g.cfg.Metrics.admissions.Add(int64(granted))
		if nb != b {
			// A new window: the rows of those that ended go (at most one
			// sweep per bucket and window; a failed one is retried at the
			// next).
			_ = g.cfg.Store.SweepPartnerGrants(ctx, g.partner, now.Add(-partnerquota.Window))
		}
	}
	nb.state = next
	nb.requesters[req.Requester] = true
	nb.answered[req.RequestID] = granted
	g.buckets[req.Bucket] = nb
	return g.answer(nb, now, req.Limit, granted), nil
}

func (g *grain) answer(b *bucketState, now time.Time, limit, granted int) AcquireAnswer {
	a := AcquireAnswer{Granted: granted, Epoch: g.epoch, Remaining: limit}
	if b.state.Current(now) {
		a.WindowStart = b.state.Start.UnixNano()
		a.ResetIn = int64(b.state.Reset().Sub(now))
		a.Remaining = b.state.Remaining(limit)
	}
	return a
}

// Stop ends the activation; everything it decided is in the store.
func (g *grain) Stop() {}
