package edge

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
)

// memClaims is the store's claims in memory, shared by the "nodes" of a
// test: one owner per key until released.
type memClaims struct {
	mu     sync.Mutex
	owners map[idempotency.Key]string
	fail   error
}

// nodeClaims is one node's view of memClaims.
type nodeClaims struct {
	c    *memClaims
	node string
}

func (n nodeClaims) ClaimIdempotencyKey(_ context.Context, k idempotency.Key, ttl time.Duration) (bool, error) {
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	if n.c.fail != nil {
		return false, n.c.fail
	}
	if ttl <= 0 {
		return false, errors.New("no ttl")
	}
	if o, ok := n.c.owners[k]; ok && o != n.node {
		return false, nil
	}
	n.c.owners[k] = n.node
	return true, nil
}

func (n nodeClaims) ReleaseIdempotencyKey(_ context.Context, k idempotency.Key) error {
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	if n.c.owners[k] == n.node {
		delete(n.c.owners, k)
	}
	return nil
}

// fakePartnerLimiter admits a partner's requests from a shared count, or
// fails.
type fakePartnerLimiter struct {
	mu    sync.Mutex
	count map[RateKey]int
	fail  error
}

func (f *fakePartnerLimiter) AllowPartner(_ context.Context, key RateKey, limit int, now time.Time) (RateResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return RateResult{}, f.fail
	}
	res := RateResult{Bucket: key.Bucket, Limit: limit, Reset: now.Add(Window).Unix()}
	if f.count[key] >= limit {
		return res, nil
	}
	f.count[key]++
	res.Allowed, res.Remaining = true, limit-f.count[key]
	return res, nil
}

func (f *fakePartnerLimiter) PeekPartner(_ context.Context, key RateKey, limit int, now time.Time) (RateResult, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return RateResult{}, 0, f.fail
	}
	n := f.count[key]
	return RateResult{Bucket: key.Bucket, Limit: limit, Remaining: limit - n, Reset: now.Add(Window).Unix(), Allowed: n < limit}, n, nil
}

// clusterNode is one edge of a test cluster: its own server (flights,
// limiter) over the answers, claims and partner limiter the nodes share.
type clusterNode struct {
	s       *Server
	actions *atomic.Int64
	gate    chan struct{}
	entered chan struct{}
}

func newClusterNode(t *testing.T, name string, answers *memAnswers, claims *memClaims, pl PartnerLimiter, actions *atomic.Int64) *clusterNode {
	t.Helper()
	reg, cat := testCatalog(t)
	partners := onePartner{key: testPartnerKey, p: &account.Partner{ID: "ptn_a", Limits: account.Limits{HeavyPerMin: 3, ReadPerMin: 1000}}}
	n := &clusterNode{actions: actions, entered: make(chan struct{}, 16)}
	deps := Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: partners, Idempotency: answers,
		PartnerLimiter: pl, Logger: slog.New(slog.DiscardHandler)}
	if claims != nil {
		deps.IdempotencyClaims = nodeClaims{c: claims, node: name}
	}
	var err error
	if n.s, err = New(DefaultConfig(), deps); err != nil {
		t.Fatal(err)
	}
	n.s.Handle("POST", "/v1/make", route{bucket: BucketHeavy, name: "make", idempotent: true}, func(r *Request) error {
		select {
		case n.entered <- struct{}{}:
		default:
		}
		if n.gate != nil {
			<-n.gate
		}
		writeJSON(r, fasthttp.StatusCreated, map[string]int64{"n": n.actions.Add(1)})
		return nil
	})
	return n
}

func (n *clusterNode) do(peer, apiKey, idemKey string) answer {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("/v1/make")
	req.Header.SetContentType("application/json")
	if apiKey != "" {
		req.Header.Set("X-API-Key", apiKey)
	}
	if idemKey != "" {
		req.Header.Set(idempotency.Header, idemKey)
	}
	req.SetBodyString(`{"a":1}`)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer)), nil)
	n.s.Handler()(ctx)
	a := answer{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body()),
		replayed: string(ctx.Response.Header.Peek("Idempotent-Replayed")) == "true"}
	if i := strings.Index(a.body, `"code":"`); i >= 0 {
		a.code = strings.SplitN(a.body[i+8:], `"`, 2)[0]
	}
	return a
}

// The same Idempotency-Key sent to two nodes at once acts once: the node
// that did not get the claim waits for the other's answer and replays it.
func TestIdempotencyClaimsAcrossNodes(t *testing.T) {
	answers, claims := &memAnswers{}, &memClaims{owners: map[idempotency.Key]string{}}
	var actions atomic.Int64
	a := newClusterNode(t, "a", answers, claims, nil, &actions)
	b := newClusterNode(t, "b", answers, claims, nil, &actions)
	a.gate = make(chan struct{})
	first := make(chan answer, 1)
	go func() { first <- a.do("198.51.100.1:1", testPartnerKey, "k1") }()
	<-a.entered
	second := make(chan answer, 1)
	go func() { second <- b.do("198.51.100.2:1", testPartnerKey, "k1") }()
	select {
	case got := <-second:
		t.Fatalf("the second node answered while the first acted: %d %s", got.status, got.body)
	case <-b.entered:
		t.Fatal("the second node acted too")
	case <-time.After(200 * time.Millisecond):
	}
	close(a.gate)
	x, y := <-first, <-second
	if x.status != 201 || x.replayed || y.status != 201 || !y.replayed || x.body != y.body || actions.Load() != 1 {
		t.Fatalf("acting %d %v %s; other %d %v %s; %d actions", x.status, x.replayed, x.body, y.status, y.replayed, y.body, actions.Load())
	}
	if len(claims.owners) != 0 {
		t.Fatalf("claims left behind: %v", claims.owners)
	}
	// A store that cannot claim: the request fails, it does not act.
	claims.fail = errors.New("database down")
	if got := b.do("198.51.100.2:1", testPartnerKey, "k2"); got.status != 500 || got.code != apierr.Internal || actions.Load() != 1 {
		t.Fatalf("claim failure: %d %s, %d actions", got.status, got.body, actions.Load())
	}
}

// A PartnerLimiter counts partners' requests for every node; anonymous
// requests stay in each node's own limiter; a limiter that cannot count
// fails the request without acting.
func TestPartnerLimiterAcrossNodes(t *testing.T) {
	answers := &memAnswers{}
	pl := &fakePartnerLimiter{count: map[RateKey]int{}}
	var actions atomic.Int64
	a := newClusterNode(t, "a", answers, nil, pl, &actions)
	b := newClusterNode(t, "b", answers, nil, pl, &actions)
	steps := []struct {
		node   *clusterNode
		key    string
		status int
	}{
		{a, testPartnerKey, 201}, {b, testPartnerKey, 201}, {a, testPartnerKey, 201},
		{b, testPartnerKey, 429}, {a, testPartnerKey, 429},
	}
	for i, st := range steps {
		if got := st.node.do("198.51.100.1:1", st.key, ""); got.status != st.status {
			t.Fatalf("step %d: %d %s, want %d", i, got.status, got.body, st.status)
		}
	}
	if n := a.s.limiter.Refusals(BucketHeavy) + b.s.limiter.Refusals(BucketHeavy); n != 2 {
		t.Errorf("refusals counted %d, want 2", n)
	}
	// Anonymous: each node counts the IP on its own (30 heavy per node).
	for _, n := range []*clusterNode{a, b} {
		for i := range 30 {
			if got := n.do("203.0.113.5:1", "", ""); got.status != 201 {
				t.Fatalf("anonymous request %d: %d", i, got.status)
			}
		}
		if got := n.do("203.0.113.5:1", "", ""); got.status != 429 {
			t.Fatalf("anonymous request past the node's limit: %d", got.status)
		}
	}
	before := actions.Load()
	pl.fail = errors.New("grain unreachable")
	if got := a.do("198.51.100.1:1", testPartnerKey, ""); got.status != 500 || got.code != apierr.Internal || actions.Load() != before {
		t.Fatalf("limiter failure: %d %s", got.status, got.body)
	}
}
