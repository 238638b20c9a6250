package suite

import (
	"context"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// sandboxNode serves the sandbox chains' JSON-RPC node at /rpc/42161 on
// loopback, as a sandbox Swapgate does.
func sandboxNode(t *testing.T) (*sandboxchain.Service, string) {
	t.Helper()
	ctx := context.Background()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	st, err := app.OpenStore(ctx, app.StoreConfig{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	chains, _, err := sandboxchain.Start(ctx, reg, st.ChainLog, sandboxchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chains.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rpc/42161" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(chains.JSONRPC(r.Context(), txChainID, body))
	}))
	t.Cleanup(srv.Close)
	return chains, srv.URL + "/rpc/42161"
}

// TestTxThroughputConfirmsTheBatch runs the scenario's batch at a tiny
// size against a sandbox chain's node over loopback HTTP: every intent is
// confirmed and mined once from the fresh account, and the summary the
// table reads carries the rate and the time to inclusion.
func TestTxThroughputConfirmsTheBatch(t *testing.T) {
	chains, url := sandboxNode(t)
	ctx := context.Background()
	var account common.Address
	l := txLoad{rpcURL: url, intents: 12, poll: 5 * time.Millisecond, dataDir: t.TempDir() + "/txm", timeout: 30 * time.Second,
		fund: func(ctx context.Context, a common.Address) error {
			account = a
			_, err := chains.Faucet(ctx, txChainID, a, common.Address{}, big.NewInt(1e18))
			return err
		}}
	sum, f, err := runTx(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if f.Intents != 12 || f.Confirmed != 12 || f.Failed != 0 || f.Bumps != 0 {
		t.Fatalf("figure %+v, want 12 intents confirmed, none failed or bumped", f)
	}
	if f.PerSec <= 0 || f.InclusionP50Us <= 0 || f.InclusionP50Us > f.InclusionP99Us {
		t.Fatalf("figure %+v: want a rate and 0 < p50 <= p99", f)
	}
	if sum.Scenario != "tx-throughput" || sum.Requests != 12 || sum.Errors != 0 || sum.RPS != f.PerSec ||
		sum.Latency.P50 != f.InclusionP50Us || sum.Latency.P99 != f.InclusionP99Us || sum.Latency.Max < sum.Latency.P99 {
		t.Fatalf("summary %+v does not carry the figure %+v", sum, f)
	}
	// The account sent exactly one transaction per intent: nonces 0..11.
	var nonce uint64
	if err := chains.View(ctx, txChainID, func(c *simchain.Chain) { nonce = c.Nonce(account) }); err != nil {
		t.Fatal(err)
	}
	if nonce != 12 {
		t.Fatalf("the account's nonce is %d after 12 intents", nonce)
	}
}

// TestTxThroughputFailsWithoutFunds: a run whose account cannot be funded
// fails naming the funding, rather than waiting for intents that cannot be
// paid for.
func TestTxThroughputFailsWithoutFunds(t *testing.T) {
	_, url := sandboxNode(t)
	l := txLoad{rpcURL: url, intents: 1, dataDir: t.TempDir() + "/txm", timeout: time.Second,
		fund: func(context.Context, common.Address) error { return io.ErrUnexpectedEOF }}
	if _, _, err := runTx(context.Background(), l); err == nil || !strings.Contains(err.Error(), "funding the account") {
		t.Fatalf("err %v, want the funding's", err)
	}
}

func TestQuantileNearestRank(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}, {0, 1}} {
		if got := quantile(s, c.q); got != c.want {
			t.Errorf("quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("empty: want 0")
	}
}
