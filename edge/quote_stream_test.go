package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/internal/sse"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// deadlineQuotes is the QuoteService the stream needs: its deadline. The
// stream never calls the rest (the embedded nil interface would panic).
type deadlineQuotes struct {
	QuoteService
	deadline time.Duration
}

func (q deadlineQuotes) Deadline() time.Duration { return q.deadline }

// fakeStreamer races nothing: stream plays the engine.
type fakeStreamer struct {
	stream func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error)
}

func (f fakeStreamer) Stream(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
	return f.stream(ctx, req, p, onRoute)
}

// stamp does what the quoter does to a request before it races: its time
// and quote id.
func stamp(req *quote.Request) {
	req.Now = time.Now()
	req.ID = quote.NewID(req.Now)
}

// issue makes the quote the quoter would return for best.
func issue(req *quote.Request, best *quote.Route) *quote.Issued {
	return &quote.Issued{ID: req.ID, Request: req, Route: best, Provider: best.Provider, FeeBps: req.FeeBps,
		ExpiresAt: req.Now.Add(quote.TTL)}
}

func streamRoute(tool string, out int64) *quote.Route {
	return &quote.Route{Provider: "aggregator", Tool: tool, ToolName: tool, StepType: "cross",
		FromAmount: big.NewInt(1_000_000_000), ToAmount: big.NewInt(out), ToAmountMin: big.NewInt(out * 995 / 1000),
		FromAmountUSD: 1000, ToAmountUSD: float64(out) / 1e6, ExecutionDuration: 60}
}

// streamServer serves the edge with s on a loopback port, returning its
// base URL.
func streamServer(t *testing.T, cfg Config, st QuoteStreamer, logs io.Writer) (*Server, string) {
	t.Helper()
	reg, cat := testCatalog(t)
	if logs == nil {
		logs = io.Discard
	}
	s, err := New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Quotes: deadlineQuotes{deadline: 30 * time.Second}, QuoteStream: st,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, "http://" + ln.Addr().String()
}

// streamQuery is a valid quote, USDC from Arbitrum to Base.
func streamQuery(extra ...string) string {
	v := url.Values{}
	kv := append([]string{"fromChain", "42161", "toChain", "8453",
		"fromToken", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "toToken", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"fromAmount", "1000000000", "fromAddress", "0x8ba1f109551bD432803012645Ac136ddd64DBA72"}, extra...)
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "/v1/quote/stream?" + v.Encode()
}

// doneData is the done event's data.
type doneData struct {
	Routes int
	Meta   struct {
		RequestID string
		Timestamp int64
		RateLimit *struct{ Limit, Remaining int }
	}
}

// TestQuoteStreamEvents: a streamed quote answers 200 text/event-stream
// with its request id, uncached; each route the engine passes is a route
// event with exactly the Shape A /v1/routes lists, the quote it returns is
// the best event with exactly /v1/quote's data, and done closes the stream
// with the count of routes and the envelope's meta (the same request id,
// the heavy bucket's count).
func TestQuoteStreamEvents(t *testing.T) {
	var seen *quote.Request
	routes := []*quote.Route{streamRoute("sbx-canal", 990_000_000), streamRoute("sbx-wormway", 995_000_000)}
	var is *quote.Issued
	s, base := streamServer(t, DefaultConfig(), fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
		stamp(req)
		seen = req
		for _, rt := range routes {
			onRoute(rt)
		}
		is = issue(req, routes[1])
		return is, nil
	}}, nil)
	resp, err := http.Get(base + streamQuery())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	id := resp.Header.Get("X-Request-Id")
	if len(id) != 36 {
		t.Fatalf("X-Request-Id %q", id)
	}
	events, err := sse.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range events {
		names = append(names, ev.Name)
	}
	if strings.Join(names, ",") != "route,route,best,done" {
		t.Fatalf("events %v", names)
	}
	expires := seen.Now.Add(quote.TTL).Unix()
	for i, rt := range routes {
		if want := string(quote.AppendShapeA(nil, s.livePrices, seen, rt, expires)); events[i].Data != want {
			t.Errorf("route %d:\n got %s\nwant %s", i, events[i].Data, want)
		}
	}
	want, err := quote.AppendResponse(nil, s.livePrices, seen, is)
	if err != nil {
		t.Fatal(err)
	}
	if events[2].Data != string(want) {
		t.Errorf("best:\n got %s\nwant %s", events[2].Data, want)
	}
	var done doneData
	if err := json.Unmarshal([]byte(events[3].Data), &done); err != nil {
		t.Fatal(err)
	}
	if done.Routes != 2 || done.Meta.RequestID != id || done.Meta.RateLimit == nil ||
		done.Meta.RateLimit.Limit != 30 || done.Meta.RateLimit.Remaining != 29 {
		t.Fatalf("done %+v", done)
	}
}

// TestQuoteStreamRefusesBeforeStreaming: what the edge refuses before the
// race (an invalid or repeated parameter, a rate limit) is the JSON
// envelope with its status, as on /v1/quote, and the engine is not asked.
func TestQuoteStreamRefusesBeforeStreaming(t *testing.T) {
	asked := 0
	cfg := DefaultConfig()
	cfg.AnonHeavyPerMin = 3
	_, base := streamServer(t, cfg, fakeStreamer{func(context.Context, *quote.Request, *account.Partner, func(*quote.Route)) (*quote.Issued, error) {
		asked++
		return nil, errors.New("not asked")
	}}, nil)
	for _, c := range []struct {
		path          string
		status        int
		code, param   string
		wantRateLimit bool
	}{
		{streamQuery("fromAmount", "1.5"), 400, "INVALID_PARAMS", "fromAmount", true},
		{streamQuery() + "&toChain=8453", 400, "INVALID_PARAMS", "toChain", true},
		{streamQuery("order", "BEST"), 400, "INVALID_PARAMS", "order", true},
		{streamQuery(), 429, "RATE_LIMIT", "", true},
	} {
		resp, err := http.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env struct {
			Data  any
			Error struct {
				Code    string
				Details map[string]any
			}
			Meta struct{ RateLimit *struct{ Limit int } }
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("%s: not the envelope: %v\n%s", c.path, err, body)
		}
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || env.Data != nil ||
			env.Error.Code != c.code || (c.param != "" && env.Error.Details["param"] != c.param) || (env.Meta.RateLimit != nil) != c.wantRateLimit {
			t.Errorf("%s: %d %s %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if asked != 0 {
		t.Fatalf("the engine was asked %d times", asked)
	}
}

// TestQuoteStreamErrorEvent: an error the engine returns once the stream
// started is an error event carrying the envelope's error object (code,
// message, details), then done; routes already sent stay sent.
func TestQuoteStreamErrorEvent(t *testing.T) {
	_, base := streamServer(t, DefaultConfig(), fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
		stamp(req)
		return nil, apierr.New(apierr.NoRouteFound, "no route found").With("reasons", []string{"AMOUNT_TOO_LOW"})
	}}, nil)
	resp, err := http.Get(base + streamQuery())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := sse.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(events) != 2 || events[0].Name != "error" || events[1].Name != "done" {
		t.Fatalf("%d %+v", resp.StatusCode, events)
	}
	if want := `{"code":"NO_ROUTE_FOUND","message":"no route found","details":{"reasons":["AMOUNT_TOO_LOW"]}}`; events[0].Data != want {
		t.Fatalf("error event %s, want %s", events[0].Data, want)
	}
	var done doneData
	if err := json.Unmarshal([]byte(events[1].Data), &done); err != nil || done.Routes != 0 || done.Meta.RequestID != resp.Header.Get("X-Request-Id") {
		t.Fatalf("done %s: %v", events[1].Data, err)
	}
}

// TestQuoteStreamClientGoneCancelsRace: a client that goes away cancels
// the race at once, whether it left after a route event or before any
// event was written (the stream watches the connection; it does not wait
// for a write to fail), and the stream's cause says why.
func TestQuoteStreamClientGoneCancelsRace(t *testing.T) {
	for _, routesFirst := range []int{1, 0} {
		t.Run(fmt.Sprintf("after %d routes", routesFirst), func(t *testing.T) {
			ended := make(chan error, 1)
			_, base := streamServer(t, DefaultConfig(), fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
				stamp(req)
				for range routesFirst {
					onRoute(streamRoute("sbx-canal", 990_000_000))
				}
				select {
				case <-ctx.Done():
					ended <- context.Cause(ctx)
					return nil, ctx.Err()
				case <-time.After(20 * time.Second):
					ended <- errors.New("the race was not cancelled within 20 s")
					return nil, apierr.New(apierr.UpstreamTimeout, "timeout")
				}
			}}, nil)
			resp, err := http.Get(base + streamQuery())
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if routesFirst > 0 {
				ev, err := sse.NewReader(resp.Body).Next()
				if err != nil || ev.Name != "route" {
					t.Fatalf("first event %+v: %v", ev, err)
				}
			}
			left := time.Now()
			resp.Body.Close() // the body unread: net/http closes the connection
			if cause := <-ended; !errors.Is(cause, errClientGone) {
				t.Fatalf("the race ended with %v, not the client going away", cause)
			}
			t.Logf("cancelled %v after the client left", time.Since(left))
		})
	}
}

// TestQuoteStreamPanicIsErrorEvent: a panic while streaming is an
// INTERNAL_ERROR event then done, and the server keeps serving.
func TestQuoteStreamPanicIsErrorEvent(t *testing.T) {
	var logs syncBuffer
	_, base := streamServer(t, DefaultConfig(), fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
		stamp(req)
		onRoute(streamRoute("sbx-canal", 990_000_000))
		panic("engine bug")
	}}, &logs)
	for range 2 {
		resp, err := http.Get(base + streamQuery())
		if err != nil {
			t.Fatal(err)
		}
		events, err := sse.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(events) != 3 || events[0].Name != "route" || events[1].Name != "error" || events[2].Name != "done" ||
			!strings.Contains(events[1].Data, `"code":"INTERNAL_ERROR"`) {
			t.Fatalf("events %+v: %v", events, err)
		}
	}
	if !strings.Contains(logs.String(), "panic in quote stream") {
		t.Fatalf("the panic was not logged: %s", logs.String())
	}
}

// TestQuoteStreamMetrics: a stream counts as one request of the route
// quote-stream, its latency the whole stream's, not the handler's.
func TestQuoteStreamMetrics(t *testing.T) {
	const hold = 200 * time.Millisecond
	s, base := streamServer(t, DefaultConfig(), fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
		stamp(req)
		rt := streamRoute("sbx-canal", 990_000_000)
		onRoute(rt)
		time.Sleep(hold)
		return issue(req, rt), nil
	}}, nil)
	resp, err := http.Get(base + streamQuery())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sse.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The stream records its metrics as it ends, just after its last event.
	var v map[string]float64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if v = metricstest.Values(t, s.metrics.requests, s.metrics.latency); v[`swapgate_http_requests_total{code="200",route="quote-stream"}`] == 1 {
			break
		}
	}
	if v[`swapgate_http_requests_total{code="200",route="quote-stream"}`] != 1 ||
		v[`swapgate_http_request_duration_seconds_count{route="quote-stream"}`] != 1 ||
		v[`swapgate_http_request_duration_seconds_sum{route="quote-stream"}`] < hold.Seconds() {
		t.Fatalf("metrics %v", v)
	}
}

// TestQuoteStreamsKeepTheirOwnRequest: many streams and other requests at
// once; each stream's events carry its own request id and quote id, though
// the handler chain reuses its pooled Request as soon as the handler
// returns (the race detector watches the rest).
func TestQuoteStreamsKeepTheirOwnRequest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AnonHeavyPerMin, cfg.AnonReadPerMin = 1000, 1000
	_, base := streamServer(t, cfg, fakeStreamer{func(ctx context.Context, req *quote.Request, p *account.Partner, onRoute func(*quote.Route)) (*quote.Issued, error) {
		stamp(req)
		rt := streamRoute("sbx-canal", 990_000_000)
		time.Sleep(20 * time.Millisecond)
		onRoute(rt)
		time.Sleep(20 * time.Millisecond)
		return issue(req, rt), nil
	}}, nil)
	// A connection of its own per request: a pooled client may dial a
	// connection it then leaves unused, which the server's shutdown waits
	// out for its read timeout.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 1 {
				resp, err := client.Get(base + "/v1/ping")
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				return
			}
			resp, err := client.Get(base + streamQuery())
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			events, err := sse.ReadAll(resp.Body)
			if err != nil || len(events) != 3 {
				errs <- fmt.Errorf("events %+v: %v", events, err)
				return
			}
			var route, best struct {
				ID    string
				Quote struct{ ID string }
			}
			var done doneData
			_ = json.Unmarshal([]byte(events[0].Data), &route)
			_ = json.Unmarshal([]byte(events[1].Data), &best)
			_ = json.Unmarshal([]byte(events[2].Data), &done)
			if done.Meta.RequestID != resp.Header.Get("X-Request-Id") || route.ID == "" || route.ID != best.Quote.ID {
				errs <- fmt.Errorf("request %s: route %s, best %s, done %+v", resp.Header.Get("X-Request-Id"), route.ID, best.Quote.ID, done)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
