package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

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

// silentNode is a JSON-RPC "node" that accepts connections and never
// answers: the read of anything through it can only end by its deadline.
func silentNode(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read or answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestBalancesNodeThatNeverAnswers: a node that accepts the connection and
// never answers costs GET /v1/balances --rpc-timeout, not the client's
// patience: 504 UPSTREAM_TIMEOUT naming the chain, well before any client
// would give up.
func TestBalancesNodeThatNeverAnswers(t *testing.T) {
	live := liveWithAggregator(t)
	ts := startServer(t, func(c *app.Config) {
		live(c)
		c.EVMRPC = map[uint64]string{42161: silentNode(t)}
		c.RPCTimeout = 300 * time.Millisecond
	})
	req, err := http.NewRequest(http.MethodGet, ts.base+"/v1/balances?address="+wallet+"&chains=42161", nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/balances with a silent node: %v after %s", err, time.Since(start).Round(time.Millisecond))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ts.check(req, resp.StatusCode, resp.Header, raw)
	env := &envelope{Status: resp.StatusCode, Raw: raw}
	if err := json.Unmarshal(raw, env); err != nil {
		t.Fatalf("not the envelope: %v\n%s", err, raw)
	}
	env.wantError(t, http.StatusGatewayTimeout, "UPSTREAM_TIMEOUT", "")
	if id, _ := env.Error.Details["chainId"].(float64); id != 42161 {
		t.Errorf("details %v do not name chainId 42161", env.Error.Details)
	}
}
