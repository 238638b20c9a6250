package relay

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// TestChainsFromRelay: the chains Relay serves are the registry's EVM
// chains among GET /chains that Relay has not disabled; once loaded they
// decide Serves and the one tool's chains.
func TestChainsFromRelay(t *testing.T) {
	srv, rec := serve(t, http.StatusOK, "chains.json", nil)
	c, reg := newClient(t, srv.URL, Config{})

	// Before loading, every EVM chain of the registry is taken as served.
	if !c.Serves(137, 8453) || c.Serves(1151111081099710, 8453) {
		t.Error("before loading: want every registry EVM chain and no other")
	}
	var evm int
	for _, ch := range reg.Chains() {
		if ch.ChainType == registry.EVM {
			evm++
		}
	}
	if tl := c.Tools(); len(tl) != 1 || len(tl[0].SupportedChains) != evm {
		t.Errorf("tools before loading: %+v", tl)
	}

	if err := c.LoadChains(context.Background()); err != nil {
		t.Fatal(err)
	}
	if method, uri, _, _, _ := rec.get(); method != http.MethodGet || uri != "/chains" {
		t.Errorf("asked %s %s", method, uri)
	}
	got, err := c.Chains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 10, 8453, 42161}; !slices.Equal(got, want) {
		t.Errorf("Chains = %v, want %v (137 disabled, 7777777 not in the registry, Solana not EVM)", got, want)
	}
	for _, tc := range []struct {
		from, to uint64
		want     bool
	}{
		{42161, 8453, true}, {8453, 8453, true}, {1, 10, true},
		{137, 8453, false}, {8453, 137, false}, {7777777, 8453, false}, {56, 1, false},
	} {
		if got := c.Serves(tc.from, tc.to); got != tc.want {
			t.Errorf("Serves(%d, %d) = %v", tc.from, tc.to, got)
		}
	}
	tl := c.Tools()
	if len(tl) != 1 {
		t.Fatalf("tools %+v", tl)
	}
	tool := tl[0]
	if tool.Key != Tool || tool.Name != ToolName || tool.Type != tools.TypeBridge || tool.Provider != registry.ProviderAggregator ||
		!slices.Equal(tool.SupportedChains, []uint64{1, 10, 8453, 42161}) {
		t.Errorf("tool %+v", tool)
	}
}

// TestChainsRefusesBadAnswer: an answer that is not Relay's chain list is
// an UPSTREAM_ERROR, and the chains already loaded stay.
func TestChainsRefusesBadAnswer(t *testing.T) {
	srv, _ := serve(t, http.StatusOK, "status_success.json", nil)
	c, _ := newClient(t, srv.URL, Config{})
	if err := c.LoadChains(context.Background()); err == nil {
		t.Fatal("an answer without chains loaded")
	}
	if !c.Serves(137, 8453) {
		t.Error("a failed load changed the chains")
	}
}
