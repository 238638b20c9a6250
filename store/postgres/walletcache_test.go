package postgres

import "testing"

// TestWalletCacheFills walks the cache through the orders of events a
// read can race: a fill is kept only when the cache listens and nothing
// was invalidated between the read's start and its fill.
func TestWalletCacheFills(t *testing.T) {
	k, other := walletKey{"ptn_a", "evm"}, walletKey{"ptn_b", "evm"}
	cases := []struct {
		name string
		// between runs after the lookup and before the fill.
		between func(c *walletCache)
		live    bool
		kept    bool
	}{
		{"quiet", func(*walletCache) {}, true, true},
		{"not listening", func(*walletCache) {}, false, false},
		{"its key changed meanwhile", func(c *walletCache) { c.invalidate(k) }, true, false},
		{"another key changed meanwhile", func(c *walletCache) { c.invalidate(other) }, true, false},
		{"the listener reconnected meanwhile", func(c *walletCache) { c.reset(true) }, true, false},
		{"the listener was lost meanwhile", func(c *walletCache) { c.reset(false) }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c walletCache
			c.reset(tc.live)
			if _, ok, _ := c.lookup(k); ok {
				t.Fatal("an empty cache hit")
			}
			_, _, gen := c.lookup(k)
			tc.between(&c)
			c.fill(k, "0xaa", gen)
			addr, ok, _ := c.lookup(k)
			if ok != tc.kept || (ok && addr != "0xaa") {
				t.Fatalf("after the fill: %q %v, want kept %v", addr, ok, tc.kept)
			}
			if ok {
				c.invalidate(k)
				if _, ok, _ := c.lookup(k); ok {
					t.Fatal("an invalidated entry is still there")
				}
			}
		})
	}
}
