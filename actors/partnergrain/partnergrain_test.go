package partnergrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/partnerquota"
	"github.com/swapgate/swapgate/store"
)

// memStore is the shared store's fence in memory: an epoch per partner,
// grants written only under the current one, once per request id.
type memStore struct {
	mu     sync.Mutex
	epochs map[string]int64
	grants map[string][]partnerquota.Grant
}

func newMemStore() *memStore {
	return &memStore{epochs: map[string]int64{}, grants: map[string][]partnerquota.Grant{}}
}

func (m *memStore) BumpPartnerEpoch(_ context.Context, p string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.epochs[p]++
	return m.epochs[p], nil
}

func (m *memStore) PartnerEpoch(_ context.Context, p string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epochs[p], nil
}

func (m *memStore) PartnerGrants(_ context.Context, p string, since time.Time) ([]partnerquota.Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []partnerquota.Grant
	for _, g := range m.grants[p] {
		if g.WindowStart.After(since) {
			out = append(out, g)
		}
	}
	return out, nil
}

func (m *memStore) SweepPartnerGrants(_ context.Context, p string, before time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grants[p] = slices.DeleteFunc(m.grants[p], func(g partnerquota.Grant) bool { return !g.WindowStart.After(before) })
	return nil
}

func (m *memStore) RecordPartnerGrant(_ context.Context, p string, epoch int64, g partnerquota.Grant) (partnerquota.Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.epochs[p] != epoch {
		return partnerquota.Grant{}, partnerquota.ErrStaleEpoch
	}
	for _, old := range m.grants[p] {
		if old.RequestID == g.RequestID {
			return old, nil
		}
	}
	m.grants[p] = append(m.grants[p], g)
	return g, nil
}

func (m *memStore) granted(p string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, g := range m.grants[p] {
		n += g.Granted - g.Returned
	}
	return n
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// localCluster stands in for cluster.Node: one activation per partner, run
// one request at a time; an activation answering ErrStale is dropped and
// the call retried on a new one, as Call does.
type localCluster struct {
	kind  cluster.Kind
	mu    sync.Mutex
	grain map[string]cluster.Handler
	calls atomic.Int64
	// gate, when set, holds every call until it is closed.
	gate chan struct{}
}

func (c *localCluster) Call(ctx context.Context, kind, identity, method string, body []byte) ([]byte, error) {
	c.calls.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for range 3 {
		h := c.grain[identity]
		if h == nil {
			var err error
			if h, err = c.kind.Activate(ctx, identity); err != nil {
				return nil, err
			}
			c.grain[identity] = h
		}
		out, err := h.Receive(ctx, method, body)
		if errors.Is(err, cluster.ErrStale) {
			h.Stop()
			delete(c.grain, identity)
			continue
		}
		return out, err
	}
	return nil, errors.New("stale three times")
}

func newLocal(cfg GrainConfig) *localCluster {
	return &localCluster{kind: Kind(cfg), grain: map[string]cluster.Handler{}}
}

func acquireBody(t *testing.T, r AcquireRequest) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGrainGrantsAndRepeats(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	g, err := activate(ctx, GrainConfig{Store: st, Peers: func() int { return 3 }, Now: clk.Now, Metrics: NewMetrics(), StoreTimeout: time.Second}, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		req     AcquireRequest
		advance time.Duration
		want    AcquireAnswer
		stored  int // what the store holds granted after the step
	}{
		{"a lease refresh before any window", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 0, Requester: "n1", RequestID: "r0"}, 0,
			AcquireAnswer{Granted: 0, Remaining: 300, Epoch: 1}, 0},
		{"first block, shared among the three members", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 300, Requester: "n1", RequestID: "r1"}, 0,
			AcquireAnswer{Granted: 50, ResetIn: int64(partnerquota.Window), Remaining: 250, Epoch: 1, Lease: int64(DefaultBlockLease)}, 50},
		{"the same request again: the same grant, none more", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 300, Requester: "n1", RequestID: "r1"}, time.Second,
			AcquireAnswer{Granted: 50, ResetIn: int64(partnerquota.Window - time.Second), Remaining: 250, Epoch: 1, Lease: int64(DefaultBlockLease)}, 50},
		{"another node, a smaller block", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 300, Requester: "n2", RequestID: "r2"}, 0,
			AcquireAnswer{Granted: 41, ResetIn: int64(partnerquota.Window - time.Second), Remaining: 209, Epoch: 1, Lease: int64(DefaultBlockLease)}, 91},
		{"a small want", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 5, Requester: "n3", RequestID: "r3"}, 0,
			AcquireAnswer{Granted: 5, ResetIn: int64(partnerquota.Window - time.Second), Remaining: 204, Epoch: 1, Lease: int64(DefaultBlockLease)}, 96},
		{"the read bucket is its own", AcquireRequest{Bucket: "read", Limit: 60, Want: 60, Requester: "n1", RequestID: "r4"}, 0,
			AcquireAnswer{Granted: 10, ResetIn: int64(partnerquota.Window), Remaining: 50, Epoch: 1, Lease: int64(DefaultBlockLease)}, 106},
		{"a new window once the old ended", AcquireRequest{Bucket: "heavy", Limit: 300, Want: 300, Requester: "n1", RequestID: "r5"}, partnerquota.Window,
			AcquireAnswer{Granted: 50, ResetIn: int64(partnerquota.Window), Remaining: 250, Epoch: 1, Lease: int64(DefaultBlockLease)}, 156},
	}
	for _, tt := range tests {
		clk.Advance(tt.advance)
		got := receive(t, g, tt.req)
		got.WindowStart = 0
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		// Every grant persisted, once; the window before the current one is
		// kept (a request retried across its end is answered from it).
		if n := st.granted("ptn_a"); n != tt.stored {
			t.Errorf("%s: the store holds %d granted, want %d", tt.name, n, tt.stored)
		}
	}
	if _, err := g.Receive(ctx, "release", nil); err == nil {
		t.Error("an unknown method was served")
	}
	if _, err := g.Receive(ctx, MethodAcquire, acquireBody(t, AcquireRequest{Bucket: "heavy", Limit: -1, RequestID: "x"})); err == nil {
		t.Error("a negative limit was served")
	}
}

// A second activation (another node took the grain) bumps the epoch: the
// first one's next grant and lease refresh answer ErrStale; the second
// continues the window from the persisted grants, and remembers their
// request ids.
func TestGrainStaleActivation(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	m := NewMetrics()
	cfg := GrainConfig{Store: st, Peers: func() int { return 1 }, Now: clk.Now, Metrics: m, StoreTimeout: time.Second}
	old, err := activate(ctx, cfg, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Receive(ctx, MethodAcquire, acquireBody(t, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n1", RequestID: "r1"})); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	fresh, err := activate(ctx, cfg, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{10, 0} {
		if _, err := old.Receive(ctx, MethodAcquire, acquireBody(t, AcquireRequest{Bucket: "heavy", Limit: 100, Want: want, Requester: "n1", RequestID: fmt.Sprint("s", want)})); !errors.Is(err, cluster.ErrStale) {
			t.Fatalf("stale activation's acquire of %d: %v, want ErrStale", want, err)
		}
	}
	if m.stale.Load() != 2 {
		t.Errorf("stale activations counted %d", m.stale.Load())
	}
	out, err := fresh.Receive(ctx, MethodAcquire, acquireBody(t, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n1", RequestID: "r1"}))
	if err != nil {
		t.Fatal(err)
	}
	var a AcquireAnswer
	_ = json.Unmarshal(out, &a)
	if a.Granted != 50 || a.Remaining != 50 || a.Epoch != 2 || a.ResetIn != int64(50*time.Second) {
		t.Fatalf("the old request id on the new activation: %+v", a)
	}
	out, err = fresh.Receive(ctx, MethodAcquire, acquireBody(t, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n2", RequestID: "r2"}))
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(out, &a)
	if a.Granted != 12 || a.Remaining != 38 {
		t.Fatalf("the window continued: %+v", a)
	}
}

// Three nodes' limiters spend one partner's window concurrently, each
// with far more traffic than the limit: exactly the limit is admitted,
// with a small number of acquires, and once refused no node asks again
// until the window resets.
func TestLimitersAcrossNodesAdmitTheLimit(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	m := NewMetrics()
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 3 }, Now: clk.Now, Metrics: m})
	const limit = 300
	var admitted atomic.Int64
	var wg sync.WaitGroup
	var limiters []*Limiter
	for n := range 3 {
		l := NewLimiter(LimiterConfig{Caller: lc, Self: fmt.Sprint("node", n), Now: clk.Now, Metrics: m})
		limiters = append(limiters, l)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 60 {
					a, err := l.Admit(ctx, "ptn_a", "heavy", limit, clk.Now())
					if err != nil {
						t.Error(err)
						return
					}
					if a.Allowed {
						admitted.Add(1)
					}
					if a.Limit != limit || !a.Reset.Equal(clk.Now().Add(partnerquota.Window)) {
						t.Errorf("admission %+v", a)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if admitted.Load() != limit || st.granted("ptn_a") != limit {
		t.Fatalf("admitted %d, granted %d; want %d", admitted.Load(), st.granted("ptn_a"), limit)
	}
	calls := lc.calls.Load()
	if calls > 60 {
		t.Errorf("%d acquires for %d admissions", calls, limit)
	}
	t.Logf("%d acquires, %d admitted locally", calls, m.localAdmits.Load())
	// Refused, cached: no acquire until the reset.
	for _, l := range limiters {
		if a, err := l.Admit(ctx, "ptn_a", "heavy", limit, clk.Now()); err != nil || a.Allowed {
			t.Fatalf("after the window was spent: %+v, %v", a, err)
		}
	}
	if lc.calls.Load() != calls {
		t.Errorf("a cached refusal asked the grain")
	}
	clk.Advance(partnerquota.Window)
	// The next window: a block of 50, one spent; 49 left in it and 250
	// not granted yet.
	if a, err := limiters[0].Admit(ctx, "ptn_a", "heavy", limit, clk.Now()); err != nil || !a.Allowed || a.Remaining != 49+250 {
		t.Fatalf("the next window: %+v, %v", a, err)
	}
	// A raised limit is not refused by what the old one decided.
	for range 300 {
		if _, err := limiters[1].Admit(ctx, "ptn_b", "read", 1, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := limiters[1].Admit(ctx, "ptn_b", "read", 5, clk.Now()); err != nil || !a.Allowed {
		t.Fatalf("after raising the limit: %+v, %v", a, err)
	}
}

// One acquire is in flight per key: the other requests wait for it and
// then spend its block; a failed acquire fails the requests waiting.
func TestLimiterOneAcquireInFlight(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 1 }, Now: clk.Now})
	lc.gate = make(chan struct{})
	l := NewLimiter(LimiterConfig{Caller: lc, Self: "n", Now: clk.Now})
	var wg sync.WaitGroup
	var allowed atomic.Int64
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := l.Admit(ctx, "ptn_a", "heavy", 1000, clk.Now())
			if err != nil {
				t.Error(err)
			}
			if a.Allowed {
				allowed.Add(1)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(lc.gate)
	wg.Wait()
	if lc.calls.Load() != 1 || allowed.Load() != 20 {
		t.Fatalf("%d acquires, %d admitted; want 1 and 20", lc.calls.Load(), allowed.Load())
	}

	// An unreachable grain: the request fails, it is neither admitted nor
	// refused.
	dead := NewLimiter(LimiterConfig{Caller: unreachable{}, Self: "n", Timeout: 50 * time.Millisecond})
	if a, err := dead.Admit(ctx, "ptn_a", "heavy", 10, time.Now()); err == nil || a.Allowed {
		t.Fatalf("unreachable grain: %+v, %v", a, err)
	}
}

type unreachable struct{}

func (unreachable) Call(ctx context.Context, _, _, _ string, _ []byte) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// fencedStore refuses a partner's rows while the epoch given is not the
// store's, as RecordQuotesFenced does.
type fencedStore struct {
	st      *memStore
	written map[string]bool
	calls   int
}

func (f *fencedStore) RecordQuotesFenced(ctx context.Context, recs []store.EncodedQuote, epochs map[string]int64, _ store.Durability) ([]bool, []string, error) {
	f.calls++
	w := make([]bool, len(recs))
	var stale []string
	for i, r := range recs {
		a := r.Activity()
		cur, _ := f.st.PartnerEpoch(ctx, a.PartnerID)
		if cur != epochs[a.PartnerID] {
			if !slices.Contains(stale, a.PartnerID) {
				stale = append(stale, a.PartnerID)
			}
			continue
		}
		if !f.written[a.ID] {
			f.written[a.ID] = true
			w[i] = true
		}
	}
	return w, stale, nil
}

// The ledger's batch carries the lease's epochs; after the grain moved,
// the moved partner's rows are refused, the lease refreshed and the rows
// sent again, once.
func TestFencedAppenderRefreshesStaleLeases(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	m := NewMetrics()
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 1 }})
	l := NewLimiter(LimiterConfig{Caller: lc, Self: "n", Metrics: m})
	fs := &fencedStore{st: st, written: map[string]bool{}}
	app := &FencedAppender{Store: fs, Leases: l, Metrics: m}
	rec := func(p, id string) store.EncodedQuote {
		e, err := store.EncodeQuote(&account.Activity{PartnerID: p, ID: id, Kind: account.ActivityQuote,
			Status: account.ActivityQuoted, CreatedAt: time.Unix(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// No lease yet: the appender gets one.
	w, err := app.RecordQuotes(ctx, []store.EncodedQuote{rec("ptn_a", "q1"), rec("ptn_b", "q2")}, store.Synced)
	if err != nil || !slices.Equal(w, []bool{true, true}) || fs.calls != 1 {
		t.Fatalf("first batch: %v, %v after %d calls", w, err, fs.calls)
	}
	// ptn_a's grain moves (a new activation elsewhere bumps its epoch).
	if _, err := st.BumpPartnerEpoch(ctx, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	fs.calls = 0
	w, err = app.RecordQuotes(ctx, []store.EncodedQuote{rec("ptn_a", "q3"), rec("ptn_b", "q4"), rec("ptn_a", "q1")}, store.Synced)
	if err != nil || !slices.Equal(w, []bool{true, true, false}) || fs.calls != 2 {
		t.Fatalf("batch after the move: %v, %v after %d calls", w, err, fs.calls)
	}
	if m.ledgerStale.Load() != 1 {
		t.Errorf("stale batches counted %d", m.ledgerStale.Load())
	}
	// A store that never takes the rows: the batch fails, bounded.
	never := &FencedAppender{Store: staleAlways{}, Leases: l, Attempts: 3}
	if _, err := never.RecordQuotes(ctx, []store.EncodedQuote{rec("ptn_a", "q5")}, store.Synced); err == nil {
		t.Fatal("a batch fenced out every time succeeded")
	}
}

type staleAlways struct{}

func (staleAlways) RecordQuotesFenced(_ context.Context, recs []store.EncodedQuote, _ map[string]int64, _ store.Durability) ([]bool, []string, error) {
	return make([]bool, len(recs)), []string{recs[0].Activity().PartnerID}, nil
}

// Peek shows the window without counting: nothing before the first
// request, then what the grain granted (spent or not) and what is left,
// this node's block included.
func TestLimiterPeek(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 2 }, Now: clk.Now})
	l := NewLimiter(LimiterConfig{Caller: lc, Self: "n", Now: clk.Now})
	tests := []struct {
		name            string
		admit           int
		remaining, used int
	}{
		{"no window yet", 0, 100, 0},
		{"one admitted from a block of 25", 1, 99, 1},
		{"the block spent, another granted", 30, 69, 31},
	}
	for _, tt := range tests {
		for range tt.admit {
			if a, err := l.Admit(ctx, "ptn_a", "heavy", 100, clk.Now()); err != nil || !a.Allowed {
				t.Fatalf("%s: admit %+v, %v", tt.name, a, err)
			}
		}
		a, used, err := l.Peek(ctx, "ptn_a", "heavy", 100, clk.Now())
		if err != nil || a.Remaining != tt.remaining || used != tt.used || !a.Reset.Equal(clk.Now().Add(partnerquota.Window)) {
			t.Errorf("%s: peek %+v, used %d, %v; want remaining %d, used %d", tt.name, a, used, err, tt.remaining, tt.used)
		}
	}
	if n := st.granted("ptn_a"); n != 25+18 {
		t.Errorf("peeking granted something: %d granted", n)
	}
}
