package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/sse"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// streamPath is a quote path made a streamed quote's.
func streamPath(quotePath string) string {
	return strings.Replace(quotePath, "/v1/quote?", "/v1/quote/stream?", 1)
}

// sseStream is a streamed quote being read, as an SSE client reads it:
// event by event, as they arrive; everything read is kept, to hold the
// whole stream to the document at its end.
type sseStream struct {
	ts     *testServer
	req    *http.Request
	resp   *http.Response
	raw    bytes.Buffer
	events *sse.Reader
	seen   []sse.Event
}

// openStream makes the request and returns the stream once its head came
// (a refusal, answered in the envelope, is read whole and checked).
func (ts *testServer) openStream(path string, opts ...reqOpt) (*sseStream, *envelope) {
	ts.t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		ts.check(req, resp.StatusCode, resp.Header, raw)
		env := &envelope{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
		if err := json.Unmarshal(raw, env); err != nil {
			ts.t.Fatalf("GET %s: %d is not the envelope: %v\n%s", path, resp.StatusCode, err, raw)
		}
		return nil, env
	}
	s := &sseStream{ts: ts, req: req, resp: resp}
	s.events = sse.NewReader(io.TeeReader(resp.Body, &s.raw))
	return s, nil
}

// next reads the next event; io.EOF at the end of the stream.
func (s *sseStream) next() (sse.Event, error) {
	ev, err := s.events.Next()
	if err == nil {
		s.seen = append(s.seen, ev)
	}
	return ev, err
}

// finish reads the stream to its end, holds all of it to the document and
// returns every event.
func (s *sseStream) finish() []sse.Event {
	s.ts.t.Helper()
	defer s.resp.Body.Close()
	for {
		_, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.ts.t.Fatalf("reading the stream: %v\nread: %s", err, s.raw.String())
		}
	}
	s.ts.check(s.req, s.resp.StatusCode, s.resp.Header, s.raw.Bytes())
	return s.seen
}

// leave closes the connection in the middle of the stream.
func (s *sseStream) leave() { _ = s.resp.Body.Close() }

// wantEventOrder checks a whole stream's order: routes, then best or
// error, then done last, exactly once each; it returns the routes, the
// closing event (best or error) and done's data.
func wantEventOrder(t *testing.T, events []sse.Event) (routes []sse.Event, outcome sse.Event, done streamDone) {
	t.Helper()
	var names []string
	for _, ev := range events {
		names = append(names, ev.Name)
	}
	n := len(events)
	if n < 2 || events[n-1].Name != "done" || (events[n-2].Name != "best" && events[n-2].Name != "error") {
		t.Fatalf("events %v: want route…, best or error, done", names)
	}
	for _, ev := range events[:n-2] {
		if ev.Name != "route" {
			t.Fatalf("events %v: only routes come before the outcome", names)
		}
	}
	if err := json.Unmarshal([]byte(events[n-1].Data), &done); err != nil {
		t.Fatalf("done %s: %v", events[n-1].Data, err)
	}
	if done.Routes != n-2 {
		t.Fatalf("done says %d routes, the stream sent %d", done.Routes, n-2)
	}
	return events[:n-2], events[n-2], done
}

// streamDone is the done event's data.
type streamDone struct {
	Routes int
	Meta   struct {
		RequestID string
		RateLimit *struct{ Limit, Remaining int }
	}
}

// streamedRoute is what the tests read of a route event.
type streamedRoute struct {
	ID, Tool string
	Estimate struct{ ToAmount string }
	Tags     []string
}

// TestQuoteStreamEndToEnd streams a partner's quote from the real server:
// the answer is an event stream held to the document event by event (each
// route a /v1/routes item, best /v1/quote's data, done last with the
// envelope's meta and the partner's heavy bucket), at least one route comes
// before the best, every route carries the best's quote id and the best's
// tool is one of them; the quote is then the partner's like any other:
// in its transactions, its fee pending in its earnings, executable by id.
func TestQuoteStreamEndToEnd(t *testing.T) {
	ts := startServer(t, nil)
	_, key := ts.createPartner("Streamer", "--swap-fee-bps", "25")
	if env := ts.putWallet(key, "evm", wallet); env.Status != 200 {
		t.Fatalf("fee wallet: %d %s", env.Status, env.Raw)
	}
	s, refused := ts.openStream(streamPath(arbToBase()), withKey(key))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	first, err := s.next()
	if err != nil || first.Name != "route" {
		t.Fatalf("first event %+v: %v", first, err)
	}
	routes, outcome, done := wantEventOrder(t, s.finish())
	if outcome.Name != "best" {
		t.Fatalf("the stream ended with %s: %s", outcome.Name, outcome.Data)
	}
	var best shapeA
	if err := json.Unmarshal([]byte(outcome.Data), &best); err != nil {
		t.Fatal(err)
	}
	if best.FeeBps != 25 || best.Provider != "aggregator" || !strings.HasPrefix(best.Quote.ID, "qt_") {
		t.Fatalf("best %+v", best)
	}
	tools := map[string]bool{}
	for _, ev := range routes {
		var r streamedRoute
		if err := json.Unmarshal([]byte(ev.Data), &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != best.Quote.ID || len(r.Tags) != 0 {
			t.Fatalf("route %s: id %s (best %s), tags %v", r.Tool, r.ID, best.Quote.ID, r.Tags)
		}
		tools[r.Tool] = true
	}
	if !tools[best.Quote.Tool] {
		t.Fatalf("the best's tool %s is not among the routes streamed %v", best.Quote.Tool, tools)
	}
	if done.Meta.RequestID != s.resp.Header.Get("X-Request-Id") || done.Meta.RateLimit == nil ||
		done.Meta.RateLimit.Limit != 2000 || done.Meta.RateLimit.Remaining != 1999 {
		t.Fatalf("done %+v (X-Request-Id %s)", done, s.resp.Header.Get("X-Request-Id"))
	}

	// The partner's quote like any other: a fee-bearing quote is answered
	// only once its row is on disk, so it is there at once.
	var txs struct {
		Transactions []struct{ ID, Kind, Status, FeeUsd string }
	}
	ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
	if len(txs.Transactions) != 1 || txs.Transactions[0].ID != best.Quote.ID || txs.Transactions[0].Kind != "quote" ||
		txs.Transactions[0].Status != "QUOTED" || txs.Transactions[0].FeeUsd == "0" {
		t.Fatalf("transactions %+v, streamed quote %s", txs, best.Quote.ID)
	}
	var earn struct {
		Pending []struct {
			Ecosystem string
			RowCount  int
		}
	}
	ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &earn)
	if len(earn.Pending) != 1 || earn.Pending[0].Ecosystem != "evm" || earn.Pending[0].RowCount != 1 {
		t.Fatalf("earnings %+v", earn)
	}
	var ex struct{ Kind string }
	ts.post("/v1/execute", map[string]string{"quoteId": best.Quote.ID}, withKey(key)).decode(t, &ex)
	if ex.Kind != "transaction" {
		t.Fatalf("execute the streamed quote: %+v", ex)
	}
}

// TestQuoteStreamRefusalsAndErrorEvent: what is refused before the race
// is the JSON envelope with its status (an invalid parameter, a refused
// key, the rate limit), and what the engine decides once the stream
// started is an error event with the envelope's error object, then done:
// no route for an amount too low (with each tool's reason), and a partner
// with a fee but no fee wallet.
func TestQuoteStreamRefusalsAndErrorEvent(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin = 3 })
	_, refused := ts.openStream(streamPath(arbToBase("fromAmount", "1.5")))
	refused.wantError(t, 400, "INVALID_PARAMS", "fromAmount")
	_, refused = ts.openStream(streamPath(arbToBase()), withKey("pk_live_notakey"))
	refused.wantError(t, 401, "UNAUTHORIZED", "")

	s, refused := ts.openStream(streamPath(arbToBase("fromAmount", "10")))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	routes, outcome, done := wantEventOrder(t, s.finish())
	if len(routes) != 0 || outcome.Name != "error" || done.Routes != 0 {
		t.Fatalf("%d routes, %s", len(routes), outcome.Name)
	}
	var e struct {
		Code    string
		Details map[string]any
	}
	if err := json.Unmarshal([]byte(outcome.Data), &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != "NO_ROUTE_FOUND" || e.Details["fromChain"] != float64(42161) || !strings.Contains(outcome.Data, "AMOUNT_TOO_LOW") {
		t.Fatalf("error event %s", outcome.Data)
	}
	_, refused = ts.openStream(streamPath(arbToBase()))
	refused.wantError(t, 429, "RATE_LIMIT", "")

	_, key := ts.createPartner("Walletless", "--swap-fee-bps", "25")
	s, refused = ts.openStream(streamPath(arbToBase()), withKey(key))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	_, outcome, _ = wantEventOrder(t, s.finish())
	if outcome.Name != "error" || !strings.Contains(outcome.Data, `"code":"PARTNER_WALLET_NOT_REGISTERED"`) {
		t.Fatalf("outcome %s %s", outcome.Name, outcome.Data)
	}
}

// hangingServer is a server whose sbx-arcbridge leg hangs until its race
// ends, under a deadline far longer than any test waits: a race that ends
// early was cancelled.
func hangingServer(t *testing.T) *testServer {
	t.Helper()
	return startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin = 1000
		c.Quote.Deadline = time.Minute
		c.Quote.SandboxTools = map[string]sandbox.ToolConfig{"sbx-arcbridge": {Hang: true}}
	})
}

// metric reads one series from /metrics; 0 when absent.
func (ts *testServer) metric(series string) float64 {
	ts.t.Helper()
	return ts.metricSum(series + " ")
}

// metricSum adds up the series of /metrics whose line starts with prefix.
func (ts *testServer) metricSum(prefix string) float64 {
	ts.t.Helper()
	sum := 0.0
	sc := bufio.NewScanner(bytes.NewReader(ts.get("/metrics").Raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			ts.t.Fatalf("%s: %v", line, err)
		}
		sum += f
	}
	return sum
}

const hungLegs = `swapgate_quote_leg_seconds_count{provider="aggregator",tool="sbx-arcbridge"}`

// waitHungLegCancelled waits until the hanging leg of n races has
// answered, which it does only when its race ends: before the minute's
// deadline, that is when the race was cancelled. It fails after 30 s.
func (ts *testServer) waitHungLegCancelled(n float64) {
	ts.t.Helper()
	began := time.Now()
	for ts.metric(hungLegs) < n {
		if time.Since(began) > 30*time.Second {
			ts.t.Fatalf("the hanging leg still runs 30 s after its client left: the race was not cancelled (%s = %v)", hungLegs, ts.metric(hungLegs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.t.Logf("the hanging leg answered %v after the client left", time.Since(began))
}

// TestQuoteStreamClientGoneCancelsRace: a client that disconnects in the
// middle of a streamed quote cancels its race: the leg that hangs until
// its race ends answers long before the deadline, and no quote is won
// (nothing issued, nothing recorded). A client that stays gets its quote at
// the deadline, with the hanging leg timed out.
func TestQuoteStreamClientGoneCancelsRace(t *testing.T) {
	ts := hangingServer(t)
	s, refused := ts.openStream(streamPath(arbToBase()))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	if ev, err := s.next(); err != nil || ev.Name != "route" {
		t.Fatalf("first event %+v: %v", ev, err)
	}
	if got := ts.metric(hungLegs); got != 0 {
		t.Fatalf("the hanging leg answered before the client left: %v", got)
	}
	s.leave()
	ts.waitHungLegCancelled(1)
	if wins := ts.metricSum("swapgate_quote_wins_total{"); wins != 0 {
		t.Fatalf("a race whose client left won %v quotes", wins)
	}
	if got := ts.metric(`swapgate_http_requests_total{code="200",route="quote-stream"}`); got != 1 {
		t.Fatalf("quote-stream requests counted: %v", got)
	}
}

// TestReadmeStreamedQuote runs the README's streamed quote as written, with
// bash and curl -N against a fresh server: what curl prints is the event
// stream the README shows (routes, best, done last), held to the document.
func TestReadmeStreamedQuote(t *testing.T) {
	needTools(t)
	script := readmeBlock(t, "### Streamed quotes")
	if !strings.HasPrefix(script, "curl -N '127.0.0.1:8080/v1/quote/stream?") || strings.Count(script, "\n") != 0 {
		t.Fatalf("the README's streamed quote is not one curl -N of /v1/quote/stream: %q", script)
	}
	ts := startServer(t, nil)
	addr := strings.TrimPrefix(ts.base, "http://")
	script = strings.ReplaceAll(script, "127.0.0.1:8080", addr)
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	events, err := sse.ReadAll(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		t.Fatalf("curl printed no event stream: %v\n%s", err, stdout.String())
	}
	routes, outcome, done := wantEventOrder(t, events)
	if len(routes) == 0 || outcome.Name != "best" || done.Meta.RateLimit == nil || done.Meta.RateLimit.Limit != 30 {
		t.Fatalf("%d routes, %s %s, done %+v", len(routes), outcome.Name, outcome.Data, done)
	}
	u := strings.Trim(strings.TrimPrefix(script, "curl -N "), "'")
	req, err := http.NewRequest(http.MethodGet, "http://"+u, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts.check(req, 200, http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {done.Meta.RequestID},
		"Cache-Control": {"no-cache"}}, stdout.Bytes())
}

// TestQuoteStreamStrategy: the stream takes the quote's timing parameters
// as /v1/quote parses them: with a leg that hangs under a minute's
// deadline, expectedResults=1 ends the race at its first route (one route
// event, then best, whose timing says why), maxWaitMs=300 ends it at
// 300 ms with the routes that came, and a bad value is refused before the
// stream like any parameter.
func TestQuoteStreamStrategy(t *testing.T) {
	ts := hangingServer(t)
	type timing struct {
		Timing struct {
			Strategy string
			TotalMs  float64
		}
	}
	for _, c := range []struct {
		params   []string
		strategy string
		routes   func(int) bool
	}{
		{[]string{"expectedResults", "1"}, "expected_results", func(n int) bool { return n == 1 }},
		{[]string{"maxWaitMs", "300"}, "max_wait", func(n int) bool { return n >= 1 }},
	} {
		s, refused := ts.openStream(streamPath(arbToBase(c.params...)))
		if refused != nil {
			t.Fatalf("%v refused: %s", c.params, refused.Raw)
		}
		routes, outcome, _ := wantEventOrder(t, s.finish())
		var best timing
		if err := json.Unmarshal([]byte(outcome.Data), &best); err != nil || outcome.Name != "best" {
			t.Fatalf("%v: %s %s: %v", c.params, outcome.Name, outcome.Data, err)
		}
		if !c.routes(len(routes)) || best.Timing.Strategy != c.strategy || best.Timing.TotalMs >= 30_000 {
			t.Fatalf("%v: %d routes, timing %+v", c.params, len(routes), best.Timing)
		}
	}
	_, refused := ts.openStream(streamPath(arbToBase("maxWaitMs", "0")))
	refused.wantError(t, 400, "INVALID_PARAMS", "maxWaitMs")
}
