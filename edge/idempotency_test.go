package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

var _ IdempotencyStore = (*pebblestore.Store)(nil)

// memAnswers is an IdempotencyStore in memory, whose writes can be made to
// fail.
type memAnswers struct {
	mu     sync.Mutex
	m      map[idempotency.Key]*idempotency.Record
	writes int
	fail   error
}

func (a *memAnswers) IdempotentAnswer(_ context.Context, k idempotency.Key) (*idempotency.Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.m[k]; ok {
		return r, nil
	}
	return nil, account.ErrNotFound
}

func (a *memAnswers) RememberAnswer(_ context.Context, k idempotency.Key, rec *idempotency.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		return a.fail
	}
	if a.m == nil {
		a.m = make(map[idempotency.Key]*idempotency.Record)
	}
	c := *rec
	c.Body = bytes.Clone(rec.Body)
	a.m[k] = &c
	a.writes++
	return nil
}

// onePartner knows one API key.
type onePartner struct {
	key string
	p   *account.Partner
}

func (o onePartner) PartnerByKeyDigest(_ context.Context, d [32]byte) (*account.Partner, error) {
	if d == account.KeyDigest(o.key) {
		return o.p, nil
	}
	return nil, account.ErrNotFound
}

const testPartnerKey = "pk_live_0123456789abcdefghijABCDEFGHIJ01"

// idemServer is an edge with two idempotent test routes: POST /v1/make,
// whose handler counts its actions and answers 201 {"n":count}, or 400 when
// the body is "bad", and POST /v1/other, which does the same. gate, when
// not nil, holds every action until it is closed; entered reports each
// action as it starts.
type idemServer struct {
	s       *Server
	store   *memAnswers
	actions atomic.Int64
	gate    chan struct{}
	entered chan struct{}
	clock   atomic.Pointer[time.Time]
	logs    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func newIdemServer(t *testing.T, cfg Config) *idemServer {
	t.Helper()
	reg, cat := testCatalog(t)
	is := &idemServer{store: &memAnswers{}, entered: make(chan struct{}, 64), logs: &syncBuffer{}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	is.clock.Store(&now)
	partners := onePartner{key: testPartnerKey, p: &account.Partner{ID: "ptn_a", Limits: account.Limits{HeavyPerMin: 1000, ReadPerMin: 1000}}}
	var err error
	is.s, err = New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: partners,
		Idempotency: is.store, Logger: slog.New(slog.NewJSONHandler(is.logs, nil)), Now: func() time.Time { return *is.clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	h := func(r *Request) error {
		is.entered <- struct{}{}
		if is.gate != nil {
			<-is.gate
		}
		if string(r.Ctx.PostBody()) == "bad" {
			return apierr.Param("body", "bad body")
		}
		writeJSON(r, fasthttp.StatusCreated, map[string]int64{"n": is.actions.Add(1)})
		return nil
	}
	is.s.Handle("POST", "/v1/make", route{bucket: BucketRead, name: "make", idempotent: true}, h)
	is.s.Handle("POST", "/v1/other", route{bucket: BucketRead, name: "other", idempotent: true}, h)
	is.s.Handle("POST", "/v1/plain", route{bucket: BucketRead, name: "plain"}, h)
	return is
}

func (is *idemServer) advance(d time.Duration) {
	now := is.clock.Load().Add(d)
	is.clock.Store(&now)
}

// answer is what a client saw.
type answer struct {
	status   int
	body     string
	id       string // X-Request-Id
	replayed bool
	code     string
	reason   any
	param    any
}

type call struct {
	path string
	body string
	peer string
	hdr  [][2]string
}

func (is *idemServer) do(c call) answer {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(c.path)
	req.Header.SetContentType("application/json")
	for _, kv := range c.hdr {
		req.Header.Add(kv[0], kv[1])
	}
	req.SetBodyString(c.body)
	peer := c.peer
	if peer == "" {
		peer = "198.51.100.1:4000"
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer)), nil)
	is.s.Handler()(ctx)
	a := answer{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body()),
		id: string(ctx.Response.Header.Peek("X-Request-Id")), replayed: string(ctx.Response.Header.Peek("Idempotent-Replayed")) == "true"}
	var env struct {
		Error *struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(ctx.Response.Body(), &env); err == nil && env.Error != nil {
		a.code, a.reason, a.param = env.Error.Code, env.Error.Details["reason"], env.Error.Details["param"]
	}
	return a
}

func key(k string) [2]string { return [2]string{idempotency.Header, k} }

// TestIdempotentRoutes walks one server through a sequence of calls; each
// step says what the client must see and how many actions happened so far.
func TestIdempotentRoutes(t *testing.T) {
	is := newIdemServer(t, DefaultConfig())
	first := map[string]answer{} // by step name, for replays
	steps := []struct {
		name    string
		call    call
		advance time.Duration
		status  int
		code    string
		reason  string
		replay  string // the step whose answer comes back byte for byte
		actions int64
	}{
		{name: "no header acts", call: call{path: "/v1/make", body: `{"a":1}`}, status: 201, actions: 1},
		{name: "no header acts again", call: call{path: "/v1/make", body: `{"a":1}`}, status: 201, actions: 2},
		{name: "key acts", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 201, actions: 3},
		{name: "same key and body replays", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 201, replay: "key acts", actions: 3},
		{name: "same key, other body", call: call{path: "/v1/make", body: `{"a":2}`, hdr: [][2]string{key("k1")}}, status: 400, code: apierr.InvalidParams, reason: "conflict", actions: 3},
		{name: "same key and body, a query string", call: call{path: "/v1/make?x=1", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 400, code: apierr.InvalidParams, reason: "conflict", actions: 3},
		{name: "same key and body, other path", call: call{path: "/v1/other", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 400, code: apierr.InvalidParams, reason: "conflict", actions: 3},
		{name: "same key from another client IP is another key", call: call{path: "/v1/make", body: `{"a":2}`, peer: "198.51.100.2:4000", hdr: [][2]string{key("k1")}}, status: 201, actions: 4},
		{name: "same key with a partner key is the partner's", call: call{path: "/v1/make", body: `{"a":2}`, hdr: [][2]string{key("k1"), {"X-API-Key", testPartnerKey}}}, status: 201, actions: 5},
		{name: "the partner's key replays from another IP", call: call{path: "/v1/make", body: `{"a":2}`, peer: "203.0.113.9:1", hdr: [][2]string{key("k1"), {"X-API-Key", testPartnerKey}}}, status: 201, replay: "same key with a partner key is the partner's", actions: 5},
		{name: "a refusal is not remembered", call: call{path: "/v1/make", body: "bad", hdr: [][2]string{key("k2")}}, status: 400, code: apierr.InvalidParams, actions: 5},
		{name: "so the key acts with a corrected body", call: call{path: "/v1/make", body: `{"a":3}`, hdr: [][2]string{key("k2")}}, status: 201, actions: 6},
		{name: "a route that is not idempotent ignores the header", call: call{path: "/v1/plain", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 201, actions: 7},
		{name: "empty key", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("")}}, status: 400, code: apierr.InvalidParams, reason: "malformed", actions: 7},
		{name: "key with a space", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("a b")}}, status: 400, code: apierr.InvalidParams, reason: "malformed", actions: 7},
		{name: "key too long", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key(strings.Repeat("k", 256))}}, status: 400, code: apierr.InvalidParams, reason: "malformed", actions: 7},
		{name: "key given twice", call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k3"), key("k4")}}, status: 400, code: apierr.InvalidParams, reason: "malformed", actions: 7},
		{name: "still remembered just before a day", advance: idempotency.Lifetime - time.Second, call: call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k1")}}, status: 201, replay: "key acts", actions: 7},
		{name: "after a day the key is free", advance: time.Second, call: call{path: "/v1/make", body: `{"a":9}`, hdr: [][2]string{key("k1")}}, status: 201, actions: 8},
	}
	for _, st := range steps {
		is.advance(st.advance)
		got := is.do(st.call)
		if got.status != st.status || got.code != st.code {
			t.Fatalf("%s: %d %s, want %d %s: %s", st.name, got.status, got.code, st.status, st.code, got.body)
		}
		if st.reason != "" && (got.reason != st.reason || got.param != idempotency.Header) {
			t.Fatalf("%s: details param %v reason %v, want %s %s", st.name, got.param, got.reason, idempotency.Header, st.reason)
		}
		if n := is.actions.Load(); n != st.actions {
			t.Fatalf("%s: %d actions, want %d", st.name, n, st.actions)
		}
		if got.replayed != (st.replay != "") {
			t.Fatalf("%s: Idempotent-Replayed %v", st.name, got.replayed)
		}
		if st.replay != "" {
			orig := first[st.replay]
			if got.body != orig.body || got.status != orig.status {
				t.Fatalf("%s: replay %d %s, want %d %s", st.name, got.status, got.body, orig.status, orig.body)
			}
			if got.id != orig.id || !strings.Contains(got.body, `"requestId":"`+got.id+`"`) {
				t.Fatalf("%s: the replay's X-Request-Id %q is not the acting request's %q, as in its meta", st.name, got.id, orig.id)
			}
		}
		first[st.name] = got
	}
}

// TestIdempotentConcurrent sends requests with one key while the first one
// is still acting: those with its body wait and replay its answer, one with
// another body waits and then conflicts; nothing acts twice.
func TestIdempotentConcurrent(t *testing.T) {
	is := newIdemServer(t, DefaultConfig())
	is.gate = make(chan struct{})
	hdr := [][2]string{key("same")}
	results := make(chan answer, 10)
	go func() { results <- is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: hdr}) }()
	<-is.entered
	for range 8 {
		go func() { results <- is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: hdr}) }()
	}
	go func() { results <- is.do(call{path: "/v1/make", body: `{"a":2}`, hdr: hdr}) }()
	select {
	case a := <-results:
		t.Fatalf("a request did not wait for the one acting: %d %s", a.status, a.body)
	case <-is.entered:
		t.Fatal("a second request acted while the first was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(is.gate)
	var ok, replays, conflicts int
	var body string
	var replayed []string
	for range 10 {
		a := <-results
		switch {
		case a.status == 201 && !a.replayed:
			ok++
			body = a.body
		case a.status == 201:
			replays++
			replayed = append(replayed, a.body)
		case a.reason == "conflict":
			conflicts++
		default:
			t.Fatalf("unexpected answer %d %s", a.status, a.body)
		}
	}
	if ok != 1 || replays != 8 || conflicts != 1 || is.actions.Load() != 1 || is.store.writes != 1 {
		t.Fatalf("%d acted, %d replayed, %d conflicts, %d actions, %d writes", ok, replays, conflicts, is.actions.Load(), is.store.writes)
	}
	if !strings.HasPrefix(body, `{"data":{"n":1},`) {
		t.Fatalf("acting answer %s", body)
	}
	for _, b := range replayed {
		if b != body {
			t.Fatalf("replay %s, want %s", b, body)
		}
	}
}

// TestIdempotentWaitExpires: a request that waits longer than
// IdempotencyWait for the one acting is refused as in progress, and acts
// on nothing.
func TestIdempotentWaitExpires(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdempotencyWait = 50 * time.Millisecond
	is := newIdemServer(t, cfg)
	is.gate = make(chan struct{})
	done := make(chan answer, 1)
	go func() { done <- is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("slow")}}) }()
	<-is.entered
	got := is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("slow")}})
	if got.status != 400 || got.code != apierr.InvalidParams || got.reason != "in_progress" || got.param != idempotency.Header {
		t.Fatalf("waiting request: %d %s", got.status, got.body)
	}
	close(is.gate)
	if first := <-done; first.status != 201 || is.actions.Load() != 1 {
		t.Fatalf("first request %d %s, %d actions", first.status, first.body, is.actions.Load())
	}
}

// TestIdempotentWaiterActsAfterFailure: when the request acting fails, its
// answer is not remembered and the waiting request acts itself.
func TestIdempotentWaiterActsAfterFailure(t *testing.T) {
	is := newIdemServer(t, DefaultConfig())
	is.gate = make(chan struct{})
	bad := make(chan answer, 1)
	go func() { bad <- is.do(call{path: "/v1/make", body: "bad", hdr: [][2]string{key("k")}}) }()
	<-is.entered
	good := make(chan answer, 1)
	go func() { good <- is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k")}}) }()
	time.Sleep(20 * time.Millisecond)
	close(is.gate)
	if a := <-bad; a.status != 400 {
		t.Fatalf("bad request: %d %s", a.status, a.body)
	}
	if a := <-good; a.status != 201 || a.replayed || is.actions.Load() != 1 {
		t.Fatalf("waiting request: %d %s replayed=%v, %d actions", a.status, a.body, a.replayed, is.actions.Load())
	}
}

// TestIdempotentRecordFailure: when the answer cannot be remembered, the
// action still happened, so its answer is sent and the failure logged.
func TestIdempotentRecordFailure(t *testing.T) {
	is := newIdemServer(t, DefaultConfig())
	is.store.fail = errors.New("disk on fire")
	got := is.do(call{path: "/v1/make", body: `{"a":1}`, hdr: [][2]string{key("k")}})
	if got.status != 201 || !strings.Contains(is.logs.String(), "disk on fire") {
		t.Fatalf("%d %s; logs %s", got.status, got.body, is.logs.String())
	}
}

func TestIdempotentRouteNeedsStore(t *testing.T) {
	reg, cat := testCatalog(t)
	deps := Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{}, Webhooks: &WebhookService{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := New(DefaultConfig(), deps); err == nil || !strings.Contains(err.Error(), "idempotent") {
		t.Fatalf("New without an idempotency store: %v", err)
	}
	deps.Idempotency = &memAnswers{}
	if _, err := New(DefaultConfig(), deps); err != nil {
		t.Fatal(err)
	}
}
