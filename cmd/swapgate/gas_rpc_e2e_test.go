package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/standin/evmrpc"
)

// TestGasRecordWithheldAfterNodeOutage: in live mode a chain's gas comes
// from its node (--gas-rpc); once the node stops answering for longer than
// --gas-max-age, GET /v1/gas-prices has no record for the chain (502
// RPC_FAILURE naming chainId) instead of the last figures forever, and a
// request naming several chains fails with it rather than leaving the
// chain out.
func TestGasRecordWithheldAfterNodeOutage(t *testing.T) {
	_, node, err := evmrpc.Start(evmrpc.Config{Chains: []uint64{42161, 8453}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	live := liveWithAggregator(t)
	ts := startServer(t, func(c *app.Config) {
		live(c)
		c.GasRPC = map[uint64]string{42161: evmrpc.URL(node.URL, 42161), 8453: evmrpc.URL(node.URL, 8453)}
		c.GasInterval, c.GasMaxAge = 100*time.Millisecond, time.Second
		c.RPCTimeout = 300 * time.Millisecond
	})
	var rec struct {
		ChainID uint64 `json:"chainId"`
		Speed   struct {
			Standard struct{ GasPrice string }
		}
	}
	ts.get("/v1/gas-prices?chainId=42161").decode(t, &rec)
	if rec.ChainID != 42161 || rec.Speed.Standard.GasPrice == "" {
		t.Fatalf("gas record from the node: %+v", rec)
	}

	node.Close() // the node goes down: every read fails from now on
	deadline := time.Now().Add(15 * time.Second)
	for {
		e := ts.get("/v1/gas-prices?chainId=42161")
		if e.Status == http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatalf("the node has been down for 15 s (--gas-max-age 1s) and its last record is still served: %s", e.Raw)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		e.wantError(t, http.StatusBadGateway, "RPC_FAILURE", "")
		if id, _ := e.Error.Details["chainId"].(float64); id != 42161 {
			t.Errorf("details %v do not name chainId 42161", e.Error.Details)
		}
		break
	}
	ts.get("/v1/gas-prices?chainId=8453,42161").wantError(t, http.StatusBadGateway, "RPC_FAILURE", "")
}
