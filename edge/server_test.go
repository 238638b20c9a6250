package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/persistence"
	"github.com/swapgate/swapgate/routing/account"
	"github.com/swapgate/swapgate/routing/gas"
	"github.com/swapgate/swapgate/routing/prices"
	"github.com/swapgate/swapgate/routing/registry"
	"github.com/swapgate/swapgate/routing/tools"
)

type fixedRefData struct{}

func (fixedRefData) Prices(uint64) (prices.Snapshot, bool) {
	return prices.Snapshot{}, false
}
func (fixedRefData) Gas(uint64) (gas.Record, bool) { return gas.Record{}, false }
func (fixedRefData) GasVersion(uint64) uint64      { return 0 }

type noPartners struct{}

func (noPartners) PartnerByKeyDigest(context.Context, [32]byte) (*account.Partner, error) {
	return nil, persistence.ErrNotFound
}

func newTestServer(t *testing.T, cfg Config, logs io.Writer) *Server {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
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
