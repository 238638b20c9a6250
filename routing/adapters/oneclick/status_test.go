package oneclick

import (
	"context"
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
