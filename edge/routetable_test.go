package edge

import (
	"io"
	"slices"
	"testing"
)

// TestRoutesListTheRouter checks that Routes lists what the router matches,
// with the wrapping of each route registered through Handle, and the
// metrics endpoint, registered around Handle, with no bucket.
func TestRoutesListTheRouter(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	routes := s.Routes()
	find := func(method, path string) Route {
		t.Helper()
		i := slices.IndexFunc(routes, func(r Route) bool { return r.Method == method && r.Path == path })
		if i < 0 {
			t.Fatalf("Routes lacks %s %s: %+v", method, path, routes)
		}
		return routes[i]
	}
	if r := find("GET", "/v1/ping"); r.Bucket != "read" || !r.AnonymousFree || r.PartnerOnly || r.Idempotent {
		t.Fatalf("ping: %+v", r)
	}
	if r := find("GET", "/v1/partner/me"); !r.PartnerOnly || r.Bucket != "read" {
		t.Fatalf("partner/me: %+v", r)
	}
	if r := find("GET", "/metrics"); r.Bucket != "" || r.PartnerOnly {
		t.Fatalf("metrics: %+v", r)
	}
	if r := find("GET", "/healthz"); r.Bucket != "none" {
		t.Fatalf("healthz: %+v", r)
	}
	if !slices.IsSortedFunc(routes, func(a, b Route) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		if a.Method < b.Method {
			return -1
		}
		return 1
	}) {
		t.Fatalf("Routes is not sorted by path and method: %+v", routes)
	}
}
