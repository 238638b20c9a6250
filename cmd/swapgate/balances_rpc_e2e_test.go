package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// In live mode, GET /v1/balances reads the chains that have a node over
// JSON-RPC (one batch per chain) and refuses the others naming chains.
func TestBalancesOverRPCInLiveMode(t *testing.T) {
	batches := 0
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqs []struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&reqs); err != nil {
			http.Error(w, "batch expected", http.StatusBadRequest)
			return
		}
		batches++
		out := make([]map[string]any, 0, len(reqs))
		for _, q := range reqs {
			res := "0x2a" // 42 wei of the coin
			if q.Method == "eth_call" {
				res = fmt.Sprintf("0x%064x", 7_000_000) // 7 units of a 6-decimal token
			}
			out = append(out, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": res})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(node.Close)
	live := liveWithAggregator(t)
	ts := startServer(t, func(c *app.Config) {
		live(c)
		c.EVMRPC = map[uint64]string{42161: node.URL}
	})
	var b struct {
		Chains []struct {
			ChainID  uint64
			Balances []struct {
				Token  struct{ Address, Symbol string }
				Amount string
			}
		}
	}
	ts.get("/v1/balances?address="+wallet).decode(t, &b)
	if len(b.Chains) != 1 || b.Chains[0].ChainID != 42161 || len(b.Chains[0].Balances) < 2 ||
		b.Chains[0].Balances[0].Amount != "42" || b.Chains[0].Balances[1].Amount != "7000000" || batches != 1 {
		t.Fatalf("balances %+v after %d batches", b, batches)
	}
	ts.get("/v1/balances?address="+wallet+"&chains=1").wantError(t, 400, "INVALID_PARAMS", "chains")
	ts.get("/v1/sandbox/tx/0x"+fmt.Sprintf("%064x", 1)).wantError(t, 404, "NOT_FOUND", "")
}
