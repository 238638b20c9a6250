package admin

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// get fetches url with the given Authorization header (none when empty)
// and returns the status and body.
func get(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestPprofOnAdminListenerOnly: the admin listener serves Go's profiles
// with its token and refuses them without it (or with another), and the
// public edge does not serve them at all.
func TestPprofOnAdminListenerOnly(t *testing.T) {
	store, dir := openStore(t)
	s, err := New(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterPprof(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopServer(t, s)
	base := "http://" + s.Addr()
	tests := []struct {
		path, auth string
		status     int
		body       string // a part the answer must contain
	}{
		{"/debug/pprof/", "Bearer " + s.Token(), http.StatusOK, "goroutine"},
		{"/debug/pprof/heap?debug=1", "Bearer " + s.Token(), http.StatusOK, "heap profile"},
		{"/debug/pprof/goroutine?debug=1", "Bearer " + s.Token(), http.StatusOK, "goroutine profile"},
		{"/debug/pprof/cmdline", "Bearer " + s.Token(), http.StatusOK, "admin.test"},
		{"/debug/pprof/", "", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"/debug/pprof/heap?debug=1", "", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"/debug/pprof/", "Bearer " + strings.Repeat("0", 64), http.StatusUnauthorized, "UNAUTHORIZED"},
		{"/debug/pprof/", s.Token(), http.StatusUnauthorized, "UNAUTHORIZED"},
	}
	for _, tt := range tests {
		status, body := get(t, base+tt.path, tt.auth)
		if status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("admin GET %s (auth %q): %d %.200s; want %d containing %q", tt.path, tt.auth, status, body, tt.status, tt.body)
		}
	}

	pub := startPublicEdge(t)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		status, body := get(t, pub+path, "")
		if status != http.StatusNotFound || !strings.Contains(body, "NOT_FOUND") {
			t.Errorf("public GET %s: %d %.200s; want 404 NOT_FOUND", path, status, body)
		}
		status, _ = get(t, pub+path, "Bearer "+s.Token())
		if status != http.StatusNotFound {
			t.Errorf("public GET %s with the admin token: %d; want 404", path, status)
		}
	}
}

// startPublicEdge serves the public edge, built as the service builds it,
// on a loopback port and returns its base URL.
func startPublicEdge(t *testing.T) string {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	e, err := edge.New(edge.DefaultConfig(), edge.Deps{Registry: reg, Tools: cat, RefData: noRefData{}, Partners: noPartners{}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("edge shutdown: %v", err)
		}
		<-served
	})
	return "http://" + ln.Addr().String()
}

type noRefData struct{}

func (noRefData) Prices(uint64) (prices.Snapshot, bool) { return prices.Snapshot{}, false }
func (noRefData) Gas(uint64) (gas.Record, bool)         { return gas.Record{}, false }
func (noRefData) GasVersion(uint64) uint64              { return 0 }

type noPartners struct{}

func (noPartners) PartnerByKeyDigest(context.Context, [32]byte) (*account.Partner, error) {
	return nil, account.ErrNotFound
}
