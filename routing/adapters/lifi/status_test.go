package lifi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

func TestSwapStatus(t *testing.T) {
	src := "0x9a2f1e4c7b3d5a6e8f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"
	tests := []struct {
		fixture string
		status  int
		want    swap.Observation
		code    string
	}{
		{"status_done.json", 200, swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SubstatusMessage: "The transfer is complete.",
			SendingTimestamp: 1767225612, Receiving: swap.Leg{TxHash: "0x1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a",
				ChainID: 8453, Amount: "998712345", Token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Timestamp: 1767225690}}, ""},
		{"status_pending.json", 200, swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction,
			SubstatusMessage: "The bridge is waiting for additional confirmations.", SendingTimestamp: 1767225612}, ""},
		{"status_failed.json", 200, swap.Observation{Status: swap.StatusFailed, Substatus: swap.SlippageExceeded,
			SubstatusMessage: "The slippage was exceeded.", SendingTimestamp: 1767225612}, ""},
		{"status_not_found.json", 200, swap.Observation{Status: swap.StatusNotFound}, ""},
		{"status_not_found.json", 404, swap.Observation{Status: swap.StatusNotFound}, ""},
		{"status_unknown.json", 200, swap.Observation{}, apierr.UpstreamError},
		{"error_500.json", 500, swap.Observation{}, apierr.UpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv, rec := replay(t, tt.status, tt.fixture, nil)
			c, _ := newClient(t, srv.URL, 2*time.Second)
			got, err := c.SwapStatus(context.Background(), &swap.Swap{FromChain: 42161, ToChain: 8453, Tool: "across",
				Sending: swap.Leg{TxHash: src}})
			if tt.code != "" {
				if ae, ok := err.(*apierr.Error); !ok || ae.Code != tt.code {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v %v\nwant %+v", got, err, tt.want)
			}
			path, q, _ := rec.get()
			if path != "/v1/status" || q.Get("txHash") != src || q.Get("fromChain") != "42161" || q.Get("toChain") != "8453" || q.Get("bridge") != "across" {
				t.Fatalf("request %s %v", path, q)
			}
		})
	}
}

// TestSwapStatusRefusesInvalidReceivingLeg: a DONE answer whose receiving
// leg carries something that is not a transaction id, an amount or an
// address of the destination chain is refused, UPSTREAM_ERROR naming it.
func TestSwapStatusRefusesInvalidReceivingLeg(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "status_done.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		value any
	}{
		{"txHash", "javascript:alert(1)"},
		{"amount", "1" + strings.Repeat("0", 80)},
		{"amount", "-5"},
		{"amount", "lots"},
	} {
		t.Run(tc.field+" "+fmt.Sprint(tc.value), func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			body["receiving"].(map[string]any)[tc.field] = tc.value
			b, _ := json.Marshal(body)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(b) }))
			t.Cleanup(srv.Close)
			c, _ := newClient(t, srv.URL, 2*time.Second)
			got, err := c.SwapStatus(context.Background(), &swap.Swap{FromChain: 42161, ToChain: 8453, Tool: "across",
				Sending: swap.Leg{TxHash: "0x9a2f1e4c7b3d5a6e8f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"}})
			ae, ok := err.(*apierr.Error)
			if !ok || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, "receiving."+tc.field) {
				t.Fatalf("observation %+v, err %v; want UPSTREAM_ERROR naming receiving.%s", got, err, tc.field)
			}
		})
	}
}
