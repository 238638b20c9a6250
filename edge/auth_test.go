package edge

import (
	"context"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// TestAuthCacheIsBounded: a fill past the bound drops the cache, so the
// next lookup of a key cached before reads the store again.
func TestAuthCacheIsBounded(t *testing.T) {
	a := &authenticator{finder: anyPartner{}, max: 2}
	keys := make([]string, 3)
	for i := range keys {
		k, _, err := account.NewAPIKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	auth := func(k string) {
		t.Helper()
		if _, err := a.Authenticate(context.Background(), []byte(k)); err != nil {
			t.Fatalf("authenticate: %v", err)
		}
	}
	auth(keys[0])
	auth(keys[1])
	auth(keys[0]) // cached: a hit
	if h, m := a.hits.Load(), a.misses.Load(); h != 1 || m != 2 {
		t.Fatalf("within the bound: %d hits, %d misses; want 1 and 2", h, m)
	}
	auth(keys[2]) // the third partner cached passes the bound: all dropped
	if n := a.size.Load(); n != 0 {
		t.Fatalf("%d entries counted after the cache was dropped", n)
	}
	auth(keys[0])
	if h, m := a.hits.Load(), a.misses.Load(); h != 1 || m != 4 {
		t.Fatalf("after the bound: %d hits, %d misses; want 1 and 4", h, m)
	}
}
