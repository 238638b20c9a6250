package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// fakeLIFIWithStatus is fakeLIFI that also answers /v1/status with the
// recorded answers: PENDING until done is set, DONE after.
func fakeLIFIWithStatus(t *testing.T, done *atomic.Bool, polls *atomic.Int32) *httptest.Server {
	t.Helper()
	pending, finished := lifiFixture(t, "status_pending.json"), lifiFixture(t, "status_done.json")
	var fail atomic.Bool
	var quotes atomic.Int32
	quotesAndTools := fakeLIFI(t, &fail, &quotes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/status" {
			quotesAndTools.Config.Handler.ServeHTTP(w, r)
			return
		}
		polls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if done.Load() {
			_, _ = w.Write(finished)
		} else {
			_, _ = w.Write(pending)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type statusBody struct {
	Status, Substatus, SubstatusMessage, TransactionID, QuoteID, Tool string
	Sending, Receiving                                                struct {
		TxHash, Amount, Token string
		ChainID               uint64
	}
}

func TestExecuteAndTrackASwapToDone(t *testing.T) {
	var done atomic.Bool
	var polls atomic.Int32
	upstream := fakeLIFIWithStatus(t, &done, &polls)
	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.Quote.AggregatorURL = upstream.URL
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
	})
	_, key := ts.createPartner("Exec", "--swap-fee-bps", "0")
	events := []string{webhook.SwapPending, webhook.SwapCompleted, webhook.SwapFailed}
	if env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", events, e2eSecret), withKey(key)); env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	var q shapeA
	ts.get(arbToBase(), withKey(key)).decode(t, &q)
	post := func(body string, opts ...reqOpt) *envelope {
		return ts.do(http.MethodPost, "/v1/execute", []byte(body), append(opts, withKey(key))...)
	}

	// Refusals name the field.
	post(`{}`).wantError(t, 400, "INVALID_PARAMS", "quoteId")
	post(`{"quoteId":"qt_0123456789abcdef0123456789"}`).wantError(t, 400, "INVALID_PARAMS", "quoteId")
	post(`{"quoteId":"qt_00000000010123456789abcdef0123"}`).wantError(t, 400, "INVALID_PARAMS", "quoteId") // issued in 1970: expired
	post(`{"quoteId":"`+q.Quote.ID+`","depositMode":"MEMO"}`).wantError(t, 400, "INVALID_PARAMS", "depositMode")
	post(`{"quoteId":"`+q.Quote.ID+`","txHash":"0x12"}`).wantError(t, 400, "INVALID_PARAMS", "txHash")
	post(`{"quoteId":1}`).wantError(t, 400, "VALIDATION_ERROR", "")
	ts.get("/v1/status?txHash=0x12").wantError(t, 400, "INVALID_PARAMS", "txHash")

	// Without a txHash: what to sign.
	var ex struct {
		QuoteID, Kind       string
		ApprovalAddress     *string
		TransactionRequests []struct {
			To, Data, Value string
			ChainID         uint64
		}
		Status *statusBody
	}
	post(`{"quoteId":"`+q.Quote.ID+`"}`).decode(t, &ex)
	if ex.Kind != "transaction" || ex.ApprovalAddress == nil || *ex.ApprovalAddress != q.Quote.Estimate.ApprovalAddress ||
		len(ex.TransactionRequests) != 1 || ex.TransactionRequests[0].To != q.Quote.TransactionRequest.To ||
		ex.TransactionRequests[0].Data != q.Quote.TransactionRequest.Data || ex.Status != nil {
		t.Fatalf("execute: %+v", ex)
	}

	// Unknown transactions are NOT_FOUND with HTTP 200.
	src := "0x9a2f1e4c7b3d5a6e8f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"
	var st statusBody
	ts.get("/v1/status?txHash="+src).decode(t, &st)
	if st.Status != "NOT_FOUND" {
		t.Fatalf("unknown tx: %+v", st)
	}

	// Reporting the broadcast transaction starts tracking; the same report
	// with the same Idempotency-Key is answered once.
	body := `{"quoteId":"` + q.Quote.ID + `","txHash":"` + strings.ToUpper(src[:2]) + src[2:] + `"}`
	post(body, withHeader("Idempotency-Key", "exec-1")).decode(t, &ex)
	if ex.Status == nil || ex.Status.Status != "PENDING" || ex.Status.TransactionID != q.Quote.ID || ex.Status.Sending.TxHash != src {
		t.Fatalf("tracked: %+v", ex.Status)
	}
	waitUntil(t, "the provider reports pending", func() bool {
		ts.get("/v1/status?txHash="+src).decode(t, &st)
		return st.Substatus == swap.WaitDestinationTransaction
	})
	done.Store(true)
	waitUntil(t, "the swap is done", func() bool {
		ts.get("/v1/status?txHash="+src).decode(t, &st)
		return st.Status == "DONE"
	})
	if st.Substatus != "COMPLETED" || st.Receiving.TxHash == "" || st.Receiving.Amount != "998712345" || st.QuoteID != q.Quote.ID || st.Tool != "across" {
		t.Fatalf("done: %+v", st)
	}
	after := polls.Load()
	time.Sleep(200 * time.Millisecond)
	if polls.Load() != after {
		t.Fatalf("a finished swap is still polled (%d → %d)", after, polls.Load())
	}

	// The partner heard swap.pending then swap.completed, signed.
	waitUntil(t, "two webhooks", func() bool { return rc.count() >= 2 })
	rc.mu.Lock()
	var got []webhook.Payload
	for _, b := range rc.body {
		var p webhook.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	rc.mu.Unlock()
	if len(got) == 2 && got[0].Event == webhook.SwapCompleted {
		got[0], got[1] = got[1], got[0] // deliveries run in parallel
	}
	if len(got) != 2 || got[0].Event != webhook.SwapPending || got[1].Event != webhook.SwapCompleted {
		t.Fatalf("events %+v", got)
	}
	data := got[1].Data.(map[string]any)
	if data["transactionId"] != q.Quote.ID || data["sourceTxHash"] != src || data["status"] != "DONE" || data["toAmount"] != "998712345" {
		t.Fatalf("completed payload %v", data)
	}
	// The partner's transaction history shows the quote as a finished swap.
	var txs struct {
		Transactions []struct{ ID, Kind, Status string }
	}
	ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
	if len(txs.Transactions) != 1 || txs.Transactions[0].Kind != "swap" || txs.Transactions[0].Status != "DONE" {
		t.Fatalf("transactions %+v", txs)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
