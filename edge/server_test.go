package edge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/store"
)

type fixedRefData struct{}

func (fixedRefData) Prices(uint64) (prices.Snapshot, bool) {
	return prices.Snapshot{}, false
}
func (fixedRefData) Gas(uint64) (gas.Record, bool) { return gas.Record{}, false }
func (fixedRefData) GasVersion(uint64) uint64      { return 0 }

type noPartners struct{}

func (noPartners) PartnerByKeyDigest(context.Context, [32]byte) (*account.Partner, error) {
	return nil, store.ErrNotFound
}

// testCatalog loads the embedded registry and its tool catalog.
func testCatalog(t *testing.T) (*registry.Registry, *tools.Catalog) {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, cat
}

func newTestServer(t *testing.T, cfg Config, logs io.Writer) *Server {
	t.Helper()
	reg, cat := testCatalog(t)
	s, err := New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(s *Server, method, uri string, peer string, hdr map[string]string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer)), nil)
	s.Handler()(ctx)
	return ctx
}

func TestPanicBecomesEnvelope500(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, DefaultConfig(), &logs)
	s.Handle("GET", "/v1/boom", route{name: "boom"}, func(*Request) error { panic("kaboom") })
	ctx := serve(s, "GET", "/v1/boom", "127.0.0.1:5000", nil)
	var env struct {
		Data  any
		Error struct{ Code string }
		Meta  struct{ RequestID string }
	}
	if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
		t.Fatalf("%v: %s", err, ctx.Response.Body())
	}
	if ctx.Response.StatusCode() != 500 || env.Error.Code != "INTERNAL_ERROR" || env.Data != nil {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if !bytes.Contains(logs.Bytes(), []byte(env.Meta.RequestID)) || !bytes.Contains(logs.Bytes(), []byte("kaboom")) {
		t.Fatalf("panic log lacks request id %s: %s", env.Meta.RequestID, logs.String())
	}
}

func TestClientIP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	s := newTestServer(t, cfg, io.Discard)
	cases := []struct {
		peer, xff, want string
	}{
		{"203.0.113.9:1", "", "203.0.113.9"},
		{"203.0.113.9:1", "1.2.3.4", "203.0.113.9"},    // untrusted peer: header ignored
		{"10.1.2.3:1", "1.2.3.4", "1.2.3.4"},           // trusted proxy
		{"10.1.2.3:1", "1.2.3.4, 10.9.9.9", "1.2.3.4"}, // chain of trusted proxies
		{"10.1.2.3:1", "5.6.7.8, 1.2.3.4", "1.2.3.4"},  // right-most untrusted entry wins
		{"10.1.2.3:1", "garbage", "10.1.2.3"},          // unparsable: the peer
		{"[::ffff:10.1.2.3]:1", "198.51.100.1", "198.51.100.1"},
	}
	for _, c := range cases {
		var req fasthttp.Request
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(c.peer)), nil)
		if got := s.clientIP(ctx).String(); got != c.want {
			t.Errorf("peer %s xff %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

// TestRepeatedQueryParameter: a query parameter given twice is refused
// naming it, whatever the endpoint, before the handler reads either value.
func TestRepeatedQueryParameter(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	called := false
	s.Handle("GET", "/v1/echo", route{name: "echo"}, func(r *Request) error {
		called = true
		writeRaw(r, statusOK, []byte(`{}`))
		return nil
	})
	many := "/v1/echo?"
	for i := range 20 {
		many += "p" + string(rune('a'+i)) + "=1&"
	}
	for uri, param := range map[string]string{
		"/v1/echo?a=1&b=2&a=1": "a",
		"/v1/echo?a=1&a=2":     "a",
		"/v1/echo?a&a":         "a",
		"/v1/echo?x=1&b=1&b=":  "b",
		many + "pc=2":          "pc",
		"/v1/echo?%61=1&a=2":   "a",
		"/v1/echo?a=1&b=2&c=3": "",
		"/v1/echo?a=1&A=2":     "",
		many + "zz=1":          "",
		"/v1/echo":             "",
	} {
		called = false
		ctx := serve(s, "GET", uri, "127.0.0.1:5000", nil)
		var env struct {
			Error *struct {
				Code    string
				Details map[string]any
			}
		}
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if param == "" {
			if ctx.Response.StatusCode() != 200 || !called {
				t.Errorf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
			}
			continue
		}
		if ctx.Response.StatusCode() != 400 || env.Error == nil || env.Error.Code != "INVALID_PARAMS" ||
			env.Error.Details["param"] != param || env.Error.Details["reason"] != "repeated" || called {
			t.Errorf("%s: %d %s, want INVALID_PARAMS naming %s", uri, ctx.Response.StatusCode(), ctx.Response.Body(), param)
		}
	}
}

// TestOversizedHead: a URL or a header that takes the request head past
// MaxHeaderSize is answered in the envelope, INVALID_PARAMS naming
// "headers"; a head just within it is served.
func TestOversizedHead(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	send := func(target, header string) (int, []byte) {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\nConnection: close\r\n\r\n", target, header)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	long := strings.Repeat("a", MaxHeaderSize)
	for name, req := range map[string][2]string{"header": {"/v1/ping", long}, "URL": {"/v1/ping?pad=" + long, "x"}} {
		status, body := send(req[0], req[1])
		var env struct {
			Data  any
			Error struct {
				Code    string
				Details map[string]any
			}
		}
		if err := json.Unmarshal(body, &env); err != nil || status != 400 || env.Error.Code != "INVALID_PARAMS" ||
			env.Error.Details["param"] != "headers" || env.Error.Details["limit"] != float64(MaxHeaderSize) {
			t.Errorf("%s over the limit: %d %s", name, status, body)
		}
	}
	if status, body := send("/v1/ping", strings.Repeat("a", MaxHeaderSize/2)); status != 200 {
		t.Errorf("a head within the limit: %d %s", status, body)
	}
}

// TestPathVariantsAreNotFound: a path that names a route only once a
// trailing slash is dropped, its case changed or it is cleaned is answered
// NOT_FOUND in the envelope, never redirected.
func TestPathVariantsAreNotFound(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	for _, p := range []string{"/v1/ping/", "/V1/PING", "/v1//ping", "/v1/chains/../ping", "/v1/./ping"} {
		var req fasthttp.Request
		req.Header.SetMethod("GET")
		req.Header.SetRequestURI(p)
		req.URI().DisablePathNormalizing = true
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:5000")), nil)
		s.Handler()(ctx)
		var env struct{ Error struct{ Code string } }
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil || ctx.Response.StatusCode() != 404 || env.Error.Code != "NOT_FOUND" {
			t.Errorf("%s: %d %q", p, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}

// TestRepeatedHeaders: two X-API-Key headers are refused as unauthorized
// (neither key is taken), and two Content-Type headers, in either order,
// as INVALID_BODY: fasthttp keeps only the last of them.
func TestRepeatedHeaders(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	s.Handle("POST", "/v1/echo", route{name: "echo"}, func(r *Request) error {
		var v struct{ A string }
		if err := decodeBody(r, &v); err != nil {
			return err
		}
		writeRaw(r, statusOK, []byte(`{}`))
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	send := func(raw string) (int, string) {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(conn, raw)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	body := `{"A":"x"}`
	post := func(headers string) string {
		return "POST /v1/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
	}
	for name, c := range map[string]struct {
		raw    string
		status int
		code   string
	}{
		"one Content-Type":              {post("Content-Type: application/json\r\n"), 200, ""},
		"Content-Type twice":            {post("Content-Type: application/json\r\nContent-Type: text/plain\r\n"), 400, "INVALID_BODY"},
		"Content-Type twice, JSON last": {post("content-type: text/plain\r\nContent-Type: application/json\r\n"), 400, "INVALID_BODY"},
		"X-API-Key twice":               {"GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-API-Key: a\r\nX-API-Key: b\r\n\r\n", 401, "UNAUTHORIZED"},
		"no X-API-Key":                  {"GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, ""},
	} {
		status, got := send(c.raw)
		if status != c.status || (c.code != "" && !strings.Contains(got, `"code":"`+c.code+`"`)) {
			t.Errorf("%s: %d %s, want %d %s", name, status, got, c.status, c.code)
		}
	}
}
