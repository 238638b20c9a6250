package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// fakeLIFI replays the recorded LI.FI responses of the adapter's tests: a
// quote for USDC Arbitrum → Base, the tool list, and on demand a 500.
func fakeLIFI(t *testing.T, fail *atomic.Bool, quotes *atomic.Int32) *httptest.Server {
	t.Helper()
	quote, tools, failure := lifiFixture(t, "quote_usdc_arb_base.json"), lifiFixture(t, "tools.json"), lifiFixture(t, "error_500.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/tools":
			_, _ = w.Write(tools)
		case "/v1/quote":
			quotes.Add(1)
			if r.URL.Query().Get("integrator") != "swapgate" || r.URL.Query().Get("fromChain") != "42161" {
				http.Error(w, `{"message":"unexpected query","code":1011}`, http.StatusBadRequest)
				return
			}
			if fail.Load() {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write(failure)
				return
			}
			_, _ = w.Write(quote)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// lifiFixture reads a recorded LI.FI answer of the adapter's tests.
func lifiFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "routing", "adapters", "lifi", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQuoteThroughRealAggregatorAdapter(t *testing.T) {
	var fail atomic.Bool
	var quotes atomic.Int32
	upstream := fakeLIFI(t, &fail, &quotes)
	ts := startServer(t, func(c *app.Config) { c.Quote.AggregatorURL = upstream.URL })
	var q shapeA
	ts.get(arbToBase()).decode(t, &q)
	if q.Provider != "aggregator" || q.Quote.Tool != "across" || q.Quote.TransactionRequest == nil || q.Quote.Estimate.ApprovalAddress == "" {
		t.Fatalf("quote from the LI.FI adapter: %+v", q)
	}
	if quotes.Load() != 1 {
		t.Fatalf("upstream saw %d quote calls", quotes.Load())
	}
	fail.Store(true)
	ts.get(arbToBase()).wantError(t, 502, "UPSTREAM_ERROR", "")
}
