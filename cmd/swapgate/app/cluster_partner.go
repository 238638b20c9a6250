package app

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/actors/partnergrain"
	"github.com/swapgate/swapgate/edge"
)

// In a cluster, what must be exact across the nodes of one partner has its
// grain (actors/partnergrain): its rate buckets, counted from blocks the
// grain grants each node; its ledger appends, fenced by the epoch the
// grain's activation bumps; and, through the shared store, its
// Idempotency-Key claims. A single node runs none of this: the edge counts
// in memory and the ledger commits to the store, as before.

// partnerStore is what the partner grains and their fences need of the
// store: the PostgreSQL store, the only one a cluster runs on.
type partnerStore interface {
	partnergrain.Store
	partnergrain.FencedStore
	edge.IdempotencyClaims
}

// partnerWatcher is a store that hears of partner changes made by any
// process sharing it (the PostgreSQL store).
type partnerWatcher interface {
	OnPartnerChange(fn func(partnerID string))
}

// clusterPartners wires the partner grains of this node.
type clusterPartners struct {
	store   partnerStore
	metrics *partnergrain.Metrics
	// node is set once the node joined; grains may activate before (a
	// peer's call), and count one member until then.
	node    atomic.Pointer[cluster.Node]
	limiter *partnergrain.Limiter
	// stopRelease ends the limiter's giving back of blocks whose lease
	// ended; released is closed once it has.
	stopRelease context.CancelFunc
	released    chan struct{}
}

// partnerKind is the partner grain kind this node hosts.
func (a *App) partnerKind() (cluster.Kind, error) {
	ps, ok := a.stores.Backend().(partnerStore)
	if !ok {
		return cluster.Kind{}, errors.New("app: a cluster's store must keep partner epochs and idempotency claims (the PostgreSQL store)")
	}
	a.partners = &clusterPartners{store: ps, metrics: partnergrain.NewMetrics()}
	return partnergrain.Kind(partnergrain.GrainConfig{Store: ps, Peers: a.partners.peers, Metrics: a.partners.metrics}), nil
}

// peers is the number of members the topology has now.
func (p *clusterPartners) peers() int {
	if n := p.node.Load(); n != nil {
		return max(1, len(n.Members()))
	}
	return 1
}

// start begins limiting through node's partner grains and returns the
// ledger's store: appends fenced by the epochs of the limiter's leases.
func (p *clusterPartners) start(node *cluster.Node) ledger.Appender {
	p.node.Store(node)
	p.limiter = partnergrain.NewLimiter(partnergrain.LimiterConfig{Caller: node, Self: node.Self(), Metrics: p.metrics})
	ctx, cancel := context.WithCancel(context.Background())
	p.stopRelease, p.released = cancel, make(chan struct{})
	go func() {
		defer close(p.released)
		p.limiter.Run(ctx)
	}()
	return &partnergrain.FencedAppender{Store: p.store, Leases: p.limiter, Metrics: p.metrics}
}

// stop ends the limiter's background releases (before the node leaves).
func (p *clusterPartners) stop() {
	if p == nil || p.stopRelease == nil {
		return
	}
	p.stopRelease()
	<-p.released
}

// edgeDeps gives the edge the cluster's partner limiter and idempotency
// claims, and registers the partner grains' metrics; nothing for a single
// node.
func (p *clusterPartners) edgeDeps(deps *edge.Deps) error {
	if p == nil {
		return nil
	}
	deps.PartnerLimiter = partnerLimits{p.limiter}
	deps.IdempotencyClaims = p.store
	if err := deps.Metrics.Register(p.metrics.Collector()); err != nil {
		return fmt.Errorf("app: register partner grain metrics: %w", err)
	}
	return nil
}

// partnerLimits is the edge's PartnerLimiter over the node's limiter.
type partnerLimits struct{ l *partnergrain.Limiter }

func (pl partnerLimits) AllowPartner(ctx context.Context, key edge.RateKey, limit int, now time.Time) (edge.RateResult, error) {
	a, err := pl.l.Admit(ctx, key.Partner, key.Bucket.String(), limit, now)
	if err != nil {
		return edge.RateResult{}, err
	}
	return edge.RateResult{Bucket: key.Bucket, Limit: a.Limit, Remaining: a.Remaining, Reset: a.Reset.Unix(), Allowed: a.Allowed}, nil
}

func (pl partnerLimits) PeekPartner(ctx context.Context, key edge.RateKey, limit int, now time.Time) (edge.RateResult, int, error) {
	a, used, err := pl.l.Peek(ctx, key.Partner, key.Bucket.String(), limit, now)
	if err != nil {
		return edge.RateResult{}, 0, err
	}
	return edge.RateResult{Bucket: key.Bucket, Limit: a.Limit, Remaining: a.Remaining, Reset: a.Reset.Unix(), Allowed: a.Allowed}, used, nil
}
