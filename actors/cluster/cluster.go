// Package cluster runs Swapgate nodes as members of one protoactor-go
// cluster, so that any node answers any request while what must be exact
// across nodes has one owner: a grain, placed by the cluster's identity
// lookup on one member and reached from every other.
//
// What this package relies on in protoactor-go's cluster module (pinned by
// go.mod to the version the rest of the service runs, 2024-08-22), and what
// it does about the module's known issues (it calls itself alpha):
//
//   - Membership comes from a provider: the automanaged provider (a fixed
//     list of nodes, each polling the others' health endpoint every
//     RefreshTTL; a node that stops answering leaves the topology within
//     about two refreshes) or the etcd provider (leases kept alive every
//     few seconds). An etcd member that loses its connection may not
//     rejoin (upstream issue 1133), and here is what happens, as
//     cmd/swapgate's TestClusterEtcd holds down: while the link is down
//     for less than the lease (KeepAliveTTL 3 s) nothing changes. Down for
//     longer, the lease lapses and etcd deletes the member's key; the
//     others drop it, and the module's member list blocks its member id
//     (the actor system's id) for good, in every member that saw it leave.
//     The member itself sees the deletion of its own key too and drops
//     itself from its own topology. When the link returns, its keep-alive
//     loop takes a new lease and writes the same key again: the others
//     ignore it (blocked id), and it ignores it as well (the provider skips
//     its own key's writes), so it serves HTTP but is no member, owns no
//     grain and sees the others without itself, until the process is
//     restarted (a new process is a new member id, which joins as any
//     new member). The member list's blocking is the module's, whatever
//     the provider, so an automanaged member that missed its health polls
//     long enough to be dropped is kept out the same way (read from the
//     code; no test cuts a health port). Node.InTopology reports it, and
//     the service's /readyz then answers 503 so that a balancer stops
//     sending the node requests; the remedy is a restart.
//   - Placement is this package's, not the module's disthash identity
//     lookup: disthash replaces its rendezvous table on each topology event
//     without a lock while lookups read it (a data race the race detector
//     reports), and activates grains through futures. Here every node runs
//     one host actor ("swapgate-grains"); a call goes to the host of the
//     member that Owner names for the grain's kind and identity (rendezvous
//     hashing over the members in the topology, as disthash does), which
//     activates the grain as its child on first use and stops the children
//     it no longer owns when the topology changes. A host asked for a grain
//     it does not own (the caller saw another topology) answers "stale" and
//     the caller retries. Work that is not a grain (tracked swaps, open
//     orders) uses Owner too, so it lives where a grain of its key would.
//   - Single activation is not guaranteed while the topology changes: two
//     members may briefly each hold an activation of one grain. Every grain
//     fences its writes itself (a partner grain by an epoch kept in the
//     store, a chain grain by its operation log's sequence), and a handler
//     that finds itself stale returns ErrStale: its activation stops and
//     the call is retried on whichever activation the lookup finds next.
//   - Grain calls are retried (by Call, after a per-try timeout, on a new
//     lookup), so every request a Handler serves must be idempotent: the
//     same request twice has the effect of once and the same answer.
//   - The module's gossip is put off (see Start): its state messages race
//     with the remote's serializer, and membership needs only the provider.
//   - The module's futures race under the race detector when an answer
//     arrives after its timeout (upstream issues 1139 and 1145): Call uses
//     none; a request carries a correlation id and is answered by Send to a
//     reply actor that hands the answer to the waiting caller's channel.
//
// Messages between nodes are protobuf wrapperspb.BytesValue values carrying
// this package's own frames (frame.go), so that no generated code is needed
// and every grain defines its requests in plain Go.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ErrStale is what a Handler returns when it finds that another activation
// of its grain has taken over (its fence moved): its activation stops and
// Call retries the request on the grain's current activation.
var ErrStale = errors.New("cluster: stale grain activation")

// Handler is one activation of a grain. Receive is called for one request
// at a time, in arrival order, on the grain's actor; it must be idempotent
// (see the package comment) and should not block for long, since the grain
// answers nothing else meanwhile. Stop is called once when the activation
// ends.
type Handler interface {
	Receive(ctx context.Context, method string, body []byte) ([]byte, error)
	Stop()
}

// Kind is a kind of grain: its name and how an activation starts. Activate
// runs on the grain's actor when the lookup places the identity on this
// node; an error ends the activation, and the call that caused it is
// retried.
type Kind struct {
	Name     string
	Activate func(ctx context.Context, identity string) (Handler, error)
}

// Config is a node's cluster settings.
type Config struct {
	// Name is the cluster's name; members of other clusters are ignored.
	Name string
	// Bind is host:port of this node's cluster endpoint (gRPC). With the
	// automanaged provider the node's health endpoint listens on the next
	// port (AutoManagedPort).
	Bind string
	// Peers are the cluster addresses (host:port, as each node's Bind) of
	// every node of an automanaged cluster; this node's own may be listed.
	Peers []string
	// Etcd are the etcd endpoints of an etcd-provided cluster.
	Etcd  []string
	Kinds []Kind
	// RefreshTTL paces the automanaged provider's health polls (default 1 s).
	RefreshTTL time.Duration
	// TryTimeout bounds one attempt of a grain call (default 2 s); Call
	// retries until its context ends.
	TryTimeout time.Duration
	Logger     *slog.Logger
}

// AutoManagedPort is the port of an automanaged node's health endpoint:
// the port after its cluster port, so that one address names a node.
func AutoManagedPort(clusterPort int) int { return clusterPort + 1 }

// Node is this process's membership of the cluster.
type Node struct {
	cfg   Config
	sys   *actor.ActorSystem
	c     *pcluster.Cluster
	self  string
	log   *slog.Logger
	reply *actor.PID
	host  *actor.PID
	kinds map[string]Kind

	nextCorr atomic.Uint64
	pending  sync.Map // uint64 → chan frame

	mu       sync.Mutex
	members  []string // sorted addresses of the members now in the topology
	watchers map[int]chan struct{}
	nextW    int

	hosted  sync.Map // kind name → *atomic.Int64
	stopped atomic.Bool
}

// Start joins the cluster on sys, which must have spawned no actor yet
// (remoting changes the system's address). It returns once this node sees
// itself in the topology, or ctx ends.
func Start(ctx context.Context, sys *actor.ActorSystem, cfg Config) (_ *Node, err error) {
	if cfg.Name == "" {
		return nil, errors.New("cluster: no cluster name")
	}
	bindHost, portS, err := net.SplitHostPort(cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("cluster: bind address %q: %w", cfg.Bind, err)
	}
	port, err := strconv.Atoi(portS)
	if err != nil || port <= 0 || port >= 65535 {
		return nil, fmt.Errorf("cluster: bind address %q: want a port below 65535", cfg.Bind)
	}
	if (len(cfg.Peers) == 0) == (len(cfg.Etcd) == 0) {
		return nil, errors.New("cluster: want either peers (automanaged) or etcd endpoints")
	}
	if cfg.RefreshTTL <= 0 {
		cfg.RefreshTTL = time.Second
	}
	if cfg.TryTimeout <= 0 {
		cfg.TryTimeout = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := &Node{cfg: cfg, sys: sys, log: cfg.Logger, watchers: map[int]chan struct{}{}}

	var provider pcluster.ClusterProvider
	if len(cfg.Peers) > 0 {
		hosts := make([]string, 0, len(cfg.Peers)+1)
		for _, p := range append([]string{cfg.Bind}, cfg.Peers...) {
			ph, pp, err := net.SplitHostPort(p)
			if err != nil {
				return nil, fmt.Errorf("cluster: peer %q: %w", p, err)
			}
			pn, err := strconv.Atoi(pp)
			if err != nil {
				return nil, fmt.Errorf("cluster: peer %q: bad port", p)
			}
			h := net.JoinHostPort(ph, strconv.Itoa(AutoManagedPort(pn)))
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		provider = automanaged.NewWithConfig(cfg.RefreshTTL, AutoManagedPort(port), hosts...)
	} else {
		p, err := etcd.NewWithConfig("/swapgate/"+cfg.Name, clientv3.Config{Endpoints: cfg.Etcd, DialTimeout: 5 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("cluster: etcd provider: %w", err)
		}
		provider = p
	}

	n.kinds = map[string]Kind{}
	kinds := make([]*pcluster.Kind, 0, len(cfg.Kinds))
	for _, k := range cfg.Kinds {
		n.kinds[k.Name] = k
		n.hosted.Store(k.Name, new(atomic.Int64))
		// Registered so that each member advertises its kinds; placement
		// is the host actor's (see the package comment).
		kinds = append(kinds, pcluster.NewKind(k.Name, actor.PropsFromFunc(func(actor.Context) {})))
	}
	remoteCfg := remote.Configure(bindHost, port)
	ccfg := pcluster.Configure(cfg.Name, provider, disthash.New(), remoteCfg,
		pcluster.WithKinds(kinds...), pcluster.WithRequestTimeout(cfg.TryTimeout))
	// The module's gossip (heartbeats for its block list, a topology
	// consensus) changes its state messages while the remote's serializer
	// reads them for a peer (a data race the race detector reports in every
	// node). Membership here comes from the provider alone and nothing reads
	// the consensus, so gossip is put off for good: its loop ticks never.
	ccfg.GossipInterval = gossipNever
	n.c = pcluster.New(sys, ccfg)

	sub := sys.EventStream.Subscribe(func(evt any) {
		if t, ok := evt.(*pcluster.ClusterTopology); ok {
			n.setMembers(t.Members)
		}
	})
	defer func() {
		if err != nil {
			sys.EventStream.Unsubscribe(sub)
		}
	}()
	// StartMember panics where the provider cannot start (etcd unreachable,
	// the health port taken): a start-up error, not a crash.
	if err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("cluster: start member: %v", r)
			}
		}()
		n.c.StartMember()
		return nil
	}(); err != nil {
		return nil, err
	}
	n.self = sys.Address()
	n.reply, err = sys.Root.SpawnNamed(actor.PropsFromFunc(n.receiveReply), "swapgate-replies")
	if err != nil {
		return nil, fmt.Errorf("cluster: spawn reply actor: %w", err)
	}
	n.host, err = sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor {
		return &host{node: n, children: map[string]*actor.PID{}}
	}), hostName)
	if err != nil {
		return nil, fmt.Errorf("cluster: spawn grain host: %w", err)
	}
	watch, _ := n.Watch()
	go func() {
		for range watch {
			sys.Root.Send(n.host, topologyChanged{})
		}
	}()
	for !n.hasSelf() {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: waiting to see this node in the topology: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	n.log.Info("cluster member", slog.String("cluster", cfg.Name), slog.String("self", n.self), slog.Any("members", n.Members()))
	return n, nil
}

// Name is the cluster's name.
func (n *Node) Name() string { return n.cfg.Name }

// Self is this node's cluster address.
func (n *Node) Self() string { return n.self }

// Members are the addresses of the members now in the topology, sorted.
func (n *Node) Members() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.members)
}

// InTopology reports whether this node is in its own view of the
// topology: false once its provider dropped it (an etcd lease that lapsed,
// health polls missed), after which the module never takes it back (see
// the package comment) and only a restart makes it a member again.
func (n *Node) InTopology() bool { return n.hasSelf() }

func (n *Node) hasSelf() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Contains(n.members, n.self)
}

func (n *Node) setMembers(ms []*pcluster.Member) {
	addrs := make([]string, 0, len(ms))
	for _, m := range ms {
		addrs = append(addrs, m.Address())
	}
	slices.Sort(addrs)
	n.mu.Lock()
	changed := !slices.Equal(addrs, n.members)
	n.members = addrs
	ws := make([]chan struct{}, 0, len(n.watchers))
	for _, w := range n.watchers {
		ws = append(ws, w)
	}
	n.mu.Unlock()
	if !changed {
		return
	}
	for _, w := range ws {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Watch returns a channel that receives (coalesced) after each change of
// the topology, and its cancel function.
func (n *Node) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	id := n.nextW
	n.nextW++
	n.watchers[id] = ch
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		delete(n.watchers, id)
		n.mu.Unlock()
	}
}

// Owner is the member that owns key: the rendezvous hash the identity
// lookup places grains with (see score; the highest score wins), over the
// members now in the topology. Every member that sees the same topology
// names the same owner.
func (n *Node) Owner(key string) string {
	return Owner(n.Members(), key)
}

// Owns reports whether this node owns key now.
func (n *Node) Owns(key string) bool { return n.Owner(key) == n.self }

// Owner is the rendezvous choice of key among members (see Node.Owner);
// "" when there are none.
func Owner(members []string, key string) string {
	var best string
	var bestScore uint64
	for _, m := range members {
		if s := score(key, m); best == "" || s > bestScore {
			best, bestScore = m, s
		}
	}
	return best
}

// score is member's rendezvous weight for key: FNV-1a (64 bits) over the key,
// a zero byte and the member's address, then MurmurHash3's 64-bit finalizer.
// FNV-1a alone is not mixed enough for this: members' addresses usually
// differ only in their last character (127.0.0.1:7101, :7103, :7105), and its
// last multiply leaves that difference in a few bits, so that comparing
// scores favoured one member for half of all keys. The finalizer spreads
// every input bit over the whole word. The function is fixed: every node of
// a cluster must compute the same owner, so a change here needs the whole
// cluster restarted together (mixed nodes only disagree, and retry on
// "stale", until then).
func score(key, member string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(member))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Hosted is the number of activations of each kind this node holds now.
func (n *Node) Hosted() map[string]int64 {
	out := map[string]int64{}
	n.hosted.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// Stop leaves the cluster gracefully: the provider deregisters this node,
// so the others move its grains without waiting for its health to fail.
// It shuts the actor system down with it.
//
// The module's graceful shutdown also stops the remote's endpoint manager,
// which clears its connections while an endpoint writer whose peer is
// stopping too (two nodes stopped at once) may be reading them: a data
// race upstream, the race detector's exit status at the end of a clean
// stop. So the provider is shut down gracefully here, and the rest of the
// module (the actor system, the gRPC server) without that step; the
// process is leaving, and its peers' connections close with its server.
func (n *Node) Stop() {
	if n.stopped.Swap(true) {
		return
	}
	if err := n.c.Config.ClusterProvider.Shutdown(true); err != nil {
		n.log.Warn("cluster: provider shutdown", slog.Any("error", err))
	}
	n.c.Shutdown(false)
}

// RemoteError is an error a grain's handler returned, carried back to the
// caller as its text.
type RemoteError struct{ Msg string }

func (e *RemoteError) Error() string { return e.Msg }

// Call sends method and body to the grain kind/identity and returns its
// answer. An attempt that goes unanswered for Config.TryTimeout, or that
// reaches a stale activation, is retried on a fresh lookup until ctx ends;
// a handler's own error is returned as a *RemoteError, not retried.
func (n *Node) Call(ctx context.Context, kind, identity, method string, body []byte) ([]byte, error) {
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			wait := time.Duration(min(attempt, 10)) * 50 * time.Millisecond
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("cluster: %s/%s %s: %w (last: %v)", kind, identity, method, ctx.Err(), last)
			case <-time.After(wait):
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cluster: %s/%s %s: %w (last: %v)", kind, identity, method, err, last)
		}
		owner := n.Owner(kind + "/" + identity)
		if owner == "" {
			last = errors.New("no member in the topology")
			continue
		}
		pid := actor.NewPID(owner, hostName)
		corr := n.nextCorr.Add(1)
		ch := make(chan frame, 1)
		n.pending.Store(corr, ch)
		n.sys.Root.RequestWithCustomSender(pid, &wrapperspb.BytesValue{Value: encodeRequest(corr, kind, identity, method, body)}, n.reply)
		t := time.NewTimer(n.cfg.TryTimeout)
		var f frame
		var ok bool
		select {
		case f = <-ch:
			ok = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		n.pending.Delete(corr)
		if !ok {
			last = fmt.Errorf("no answer from %s within %s", pid.Address, n.cfg.TryTimeout)
			continue
		}
		switch f.status {
		case statusOK:
			return f.body, nil
		case statusStale:
			last = ErrStale
			continue
		default:
			return nil, &RemoteError{Msg: string(f.body)}
		}
	}
}

// receiveReply hands an answer to the caller waiting on its correlation
// id; one nobody waits for any more (its attempt timed out) is dropped.
func (n *Node) receiveReply(ctx actor.Context) {
	m, ok := ctx.Message().(*wrapperspb.BytesValue)
	if !ok {
		return
	}
	f, err := decodeReply(m.Value)
	if err != nil {
		n.log.Warn("cluster: undecodable reply", slog.Any("error", err))
		return
	}
	if ch, ok := n.pending.LoadAndDelete(f.corr); ok {
		ch.(chan frame) <- f
	}
}

// gossipNever is a gossip interval no process outlives (about 146 years).
const gossipNever = time.Duration(1 << 62)

// hostName is the name of every node's grain host actor.
const hostName = "swapgate-grains"

// topologyChanged tells the host to stop the grains it no longer owns.
type topologyChanged struct{}

// host is a node's grain host: it activates the grains this node owns as
// its children on their first request, forwards each request to its grain
// (the caller's reply address kept as the sender), and stops the grains it
// no longer owns when the topology changes.
type host struct {
	node     *Node
	children map[string]*actor.PID // kind/identity → grain
}

func (h *host) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *wrapperspb.BytesValue:
		r, err := decodeRequest(m.Value)
		if err != nil {
			h.node.log.Warn("cluster: undecodable request", slog.Any("error", err))
			return
		}
		key := r.kind + "/" + r.identity
		kind, known := h.node.kinds[r.kind]
		if !known || !h.node.Owns(key) {
			// Another topology seen by the caller, or a kind this node
			// does not host: the caller asks again.
			ctx.Respond(&wrapperspb.BytesValue{Value: encodeReply(r.corr, statusStale, nil)})
			return
		}
		pid, ok := h.children[key]
		if !ok {
			count, _ := h.node.hosted.Load(r.kind)
			pid = ctx.Spawn(actor.PropsFromProducer(func() actor.Actor {
				return &grain{node: h.node, kind: kind, identity: r.identity, count: count.(*atomic.Int64)}
			}))
			h.children[key] = pid
			ctx.Watch(pid)
		}
		ctx.Forward(pid)
	case topologyChanged:
		for key, pid := range h.children {
			if !h.node.Owns(key) {
				ctx.Stop(pid)
				delete(h.children, key)
			}
		}
	case *actor.Terminated:
		for key, pid := range h.children {
			if pid.Equal(m.Who) {
				delete(h.children, key)
			}
		}
	}
}

// grain is the actor of one activation: it starts the kind's Handler when
// it starts and runs each request through it.
type grain struct {
	node     *Node
	kind     Kind
	identity string
	count    *atomic.Int64
	h        Handler
}

func (g *grain) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		h, err := g.kind.Activate(context.Background(), g.identity)
		if err != nil {
			g.node.log.Warn("cluster: grain activation failed", slog.String("kind", g.kind.Name),
				slog.String("identity", g.identity), slog.Any("error", err))
			ctx.Stop(ctx.Self())
			return
		}
		g.h = h
		g.count.Add(1)
	case *wrapperspb.BytesValue:
		r, err := decodeRequest(m.Value)
		if err != nil {
			return
		}
		if g.h == nil {
			// Activation failed: the caller retries on a new activation.
			ctx.Respond(&wrapperspb.BytesValue{Value: encodeReply(r.corr, statusStale, nil)})
			return
		}
		out, err := g.h.Receive(context.Background(), r.method, r.body)
		switch {
		case errors.Is(err, ErrStale):
			ctx.Respond(&wrapperspb.BytesValue{Value: encodeReply(r.corr, statusStale, nil)})
			g.node.log.Warn("cluster: stale grain activation stops", slog.String("kind", g.kind.Name), slog.String("identity", g.identity))
			ctx.Stop(ctx.Self())
		case err != nil:
			ctx.Respond(&wrapperspb.BytesValue{Value: encodeReply(r.corr, statusError, []byte(err.Error()))})
		default:
			ctx.Respond(&wrapperspb.BytesValue{Value: encodeReply(r.corr, statusOK, out)})
		}
	case *actor.Stopped:
		if g.h != nil {
			g.h.Stop()
			g.h = nil
			g.count.Add(-1)
		}
	}
}

// HostPort splits a cluster address for display and checks.
func HostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(strings.TrimSpace(addr))
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, err
	}
	return h, port, nil
}
