package relay

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

func relaySwap() *swap.Swap {
	return &swap.Swap{ID: "0xe53021eaa63d100b08338197d26953e2219bcbad828267dd936c549ff643aad7", Provider: "aggregator", Tool: Tool,
		FromChain: 42161, ToChain: 8453, ToToken: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", UpstreamRef: requestUSDC,
		Sending: swap.Leg{TxHash: "0xe53021eaa63d100b08338197d26953e2219bcbad828267dd936c549ff643aad7", ChainID: 42161}}
}

// TestSwapStatusMapsRelayStatuses: each of Relay's statuses, read from
// GET /intents/status/v3 with the swap's request id, is the swap's status
// in the service's vocabulary; success carries the destination
// transaction as the receiving leg.
func TestSwapStatusMapsRelayStatuses(t *testing.T) {
	cases := []struct {
		fixture   string
		status    string
		substatus string
		receiving string
		message   string
	}{
		{"status_waiting.json", swap.StatusPending, swap.WaitSourceConfirmations, "", ""},
		{"status_depositing.json", swap.StatusPending, swap.WaitDestinationTransaction, "", ""},
		{"status_pending.json", swap.StatusPending, swap.WaitDestinationTransaction, "", ""},
		{"status_submitted.json", swap.StatusPending, swap.WaitDestinationTransaction, "", ""},
		{"status_delayed.json", swap.StatusPending, swap.WaitDestinationTransaction, "", "delayed"},
		{"status_success.json", swap.StatusDone, swap.Completed, "0x9da7bc54dfe6229d6980fd62250d472f23dfe0f41a1cdc870c81a08b3445f254", ""},
		{"status_refund.json", swap.StatusDone, swap.Refunded, "", "reverted"},
		{"status_failure.json", swap.StatusFailed, swap.UnknownFailedError, "", "Unsuccessful fill"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			srv, rec := serve(t, http.StatusOK, tc.fixture, nil)
			c, _ := newClient(t, srv.URL, Config{APIKey: "k1"})
			o, err := c.SwapStatus(context.Background(), relaySwap())
			if err != nil {
				t.Fatal(err)
			}
			method, uri, _, header, _ := rec.get()
			if method != http.MethodGet || uri != "/intents/status/v3?requestId="+requestUSDC || header.Get("x-api-key") != "k1" {
				t.Errorf("asked %s %s (key %q)", method, uri, header.Get("x-api-key"))
			}
			if o.Status != tc.status || o.Substatus != tc.substatus || !strings.Contains(o.SubstatusMessage, tc.message) {
				t.Errorf("observation %+v, want %s/%s saying %q", o, tc.status, tc.substatus, tc.message)
			}
			if o.Receiving.TxHash != tc.receiving {
				t.Errorf("receiving %+v, want %q", o.Receiving, tc.receiving)
			}
			if tc.receiving != "" && (o.Receiving.ChainID != 8453 || o.Receiving.Token != "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913") {
				t.Errorf("receiving leg %+v", o.Receiving)
			}
		})
	}
}

// TestSwapStatusFailures: an unknown request is NOT_FOUND (the swap stays
// as it is); a swap without a request id is not asked about; a status
// Relay does not document, or a destination hash that is no transaction
// id, is refused as UPSTREAM_ERROR.
func TestSwapStatusFailures(t *testing.T) {
	t.Run("unknown request", func(t *testing.T) {
		srv, _ := serve(t, http.StatusNotFound, "error_500.json", nil)
		c, _ := newClient(t, srv.URL, Config{})
		o, err := c.SwapStatus(context.Background(), relaySwap())
		if err != nil || o.Status != swap.StatusNotFound {
			t.Fatalf("%+v, %v", o, err)
		}
	})
	t.Run("no request id", func(t *testing.T) {
		srv, rec := serve(t, http.StatusOK, "status_success.json", nil)
		c, _ := newClient(t, srv.URL, Config{})
		s := relaySwap()
		s.UpstreamRef = ""
		o, err := c.SwapStatus(context.Background(), s)
		if err != nil || o.Status != swap.StatusNotFound {
			t.Fatalf("%+v, %v", o, err)
		}
		if _, _, _, _, calls := rec.get(); calls != 0 {
			t.Errorf("Relay asked %d times", calls)
		}
	})
	for _, tc := range []struct {
		name    string
		fixture string
		change  func(map[string]any)
		reason  string
	}{
		{"undocumented status", "status_unknown.json", nil, "teleported"},
		{"destination hash not a transaction id", "status_success.json", func(m map[string]any) { m["txHashes"] = []any{"0x<script>"} }, "txHashes"},
		{"success without a destination hash", "status_success.json", func(m map[string]any) { m["txHashes"] = []any{} }, "txHashes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serve(t, http.StatusOK, tc.fixture, tc.change)
			c, _ := newClient(t, srv.URL, Config{})
			o, err := c.SwapStatus(context.Background(), relaySwap())
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || !strings.Contains(ae.Message, tc.reason) {
				t.Fatalf("%+v, %v: want UPSTREAM_ERROR saying %q", o, err, tc.reason)
			}
		})
	}
	t.Run("server error", func(t *testing.T) {
		srv, _ := serve(t, http.StatusInternalServerError, "error_500.json", nil)
		c, _ := newClient(t, srv.URL, Config{})
		_, err := c.SwapStatus(context.Background(), relaySwap())
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError {
			t.Fatalf("%v", err)
		}
	})
}
