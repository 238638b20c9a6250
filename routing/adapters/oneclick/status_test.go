package oneclick

import (
	"context"
	"encoding/json"
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
	dep := "0x76b4c56085ED136a8744D52bE956396624a730E8"
	tests := []struct {
		fixture string
		status  int
		want    swap.Observation
		code    string
	}{
		{"status_success.json", 200, swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SubstatusMessage: "intents status SUCCESS",
			Receiving: swap.Leg{TxHash: "te6cckEBAQEAIAAAOwAAAAAAAAA", ChainID: 900000002, Amount: "86412345678", Token: "native"}}, ""},
		{"status_processing.json", 200, swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction,
			SubstatusMessage: "intents status PROCESSING"}, ""},
		{"status_refunded.json", 200, swap.Observation{Status: swap.StatusDone, Substatus: swap.Refunded,
			SubstatusMessage: "refunded: deposit received after the deadline"}, ""},
		{"status_known.json", 200, swap.Observation{Status: swap.StatusNotFound}, ""},
		{"error_400.json", 404, swap.Observation{Status: swap.StatusNotFound}, ""},
		{"status_unknown.json", 200, swap.Observation{}, apierr.UpstreamError},
		{"error_500.json", 500, swap.Observation{}, apierr.UpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv, rec := replay(t, tt.status, tt.fixture)
			c, _ := newClient(t, srv.URL, 2*time.Second)
			got, err := c.SwapStatus(context.Background(), &swap.Swap{ToChain: 900000002, ToToken: "native", DepositAddress: dep, DepositMemo: "m1"})
			if tt.code != "" {
				if ae, ok := err.(*apierr.Error); !ok || ae.Code != tt.code {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v %v\nwant %+v", got, err, tt.want)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if rec.path != "/v0/status" || rec.method != "GET" {
				t.Fatalf("request %s %s", rec.method, rec.path)
			}
		})
	}
}

func TestSubmitDeposit(t *testing.T) {
	srv, rec := replay(t, 200, "deposit_submit.json")
	c, _ := newClient(t, srv.URL, 2*time.Second)
	if err := c.SubmitDeposit(context.Background(), "0xabc", "0xdep", "m1"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.method != "POST" || rec.path != "/v0/deposit/submit" || rec.body["txHash"] != "0xabc" || rec.body["depositAddress"] != "0xdep" || rec.body["memo"] != "m1" {
		t.Fatalf("request %s %s %v", rec.method, rec.path, rec.body)
	}
	srv, _ = replay(t, 500, "error_500.json")
	c, _ = newClient(t, srv.URL, 2*time.Second)
	if err := c.SubmitDeposit(context.Background(), "0xabc", "0xdep", ""); err == nil {
		t.Fatal("a failed submit reported success")
	}
}

// TestSwapStatusRefusesInvalidDelivery: a SUCCESS answer whose delivery
// transaction id or amount is not one is refused, UPSTREAM_ERROR naming it.
func TestSwapStatusRefusesInvalidDelivery(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "status_success.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		change      func(details map[string]any)
	}{
		{"a script for the hash", "destinationChainTxHashes.hash", func(d map[string]any) {
			d["destinationChainTxHashes"] = []any{map[string]any{"hash": "javascript:alert(1)"}}
		}},
		{"amountOut 10^80", "swapDetails.amountOut", func(d map[string]any) { d["amountOut"] = "1" + strings.Repeat("0", 80) }},
		{"amountOut negative", "swapDetails.amountOut", func(d map[string]any) { d["amountOut"] = "-1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			tc.change(body["swapDetails"].(map[string]any))
			b, _ := json.Marshal(body)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(b) }))
			t.Cleanup(srv.Close)
			c, _ := newClient(t, srv.URL, 2*time.Second)
			got, err := c.SwapStatus(context.Background(), &swap.Swap{ToChain: 900000002, ToToken: "native",
				DepositAddress: "0x76b4c56085ED136a8744D52bE956396624a730E8"})
			ae, ok := err.(*apierr.Error)
			if !ok || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, tc.field) {
				t.Fatalf("observation %+v, err %v; want UPSTREAM_ERROR naming %s", got, err, tc.field)
			}
		})
	}
}
