package lifi

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestQuoteLegExactOutput: an exact-output request asks
// GET /v1/quote/toAmount with toAmount and no fromAmount, and maps the
// recorded answer (testdata/quote_toamount_usdc_arb_base.json) to a route
// whose fromAmount is the one LI.FI sized; an answer whose toAmountMin
// falls short of toAmount is a reasoned no-route, not a quote that
// under-delivers. A request for a given input still asks /v1/quote.
func TestQuoteLegExactOutput(t *testing.T) {
	tests := []struct {
		name     string
		toAmount int64 // 0: a request for a given input
		path     string
		refused  bool
	}{
		{"exact output met", 100_000_000, "/v1/quote/toAmount", false},
		{"exact output met at the bound", 100_000_002, "/v1/quote/toAmount", false},
		{"answer short of toAmount", 100_000_003, "/v1/quote/toAmount", true},
		{"given input", 0, "/v1/quote", false},
	}
	for _, tt := range tests {
		srv, rec := replay(t, http.StatusOK, "quote_toamount_usdc_arb_base.json", nil)
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := usdcArbToBase(t, reg)
		if tt.toAmount > 0 {
			req.FromAmount, req.ToAmount = nil, big.NewInt(tt.toAmount)
		}
		if c.ExactOutputUnsupported(req) != "" {
			t.Fatalf("%s: refused", tt.name)
		}
		r, err := c.QuoteLeg(context.Background(), req, "")
		path, q, _ := rec.get()
		if path != tt.path {
			t.Errorf("%s: path %q, want %q", tt.name, path, tt.path)
		}
		if tt.toAmount > 0 && (q.Get("toAmount") != big.NewInt(tt.toAmount).String() || q.Has("fromAmount")) {
			t.Errorf("%s: query %v", tt.name, q)
		}
		if tt.toAmount == 0 && (q.Get("fromAmount") != "100000000" || q.Has("toAmount")) {
			t.Errorf("%s: query %v", tt.name, q)
		}
		if tt.refused {
			var nr *quote.NoRoute
			if err == nil || !errors.As(err, &nr) || nr.Reason != "NO_POSSIBLE_ROUTE" {
				t.Errorf("%s: %v, %v; want a no-route", tt.name, r, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		checkInt(t, "FromAmount", r.FromAmount, "101119548")
		checkInt(t, "ToAmount", r.ToAmount, "100502515")
		checkInt(t, "ToAmountMin", r.ToAmountMin, "100000002")
		if r.Tx == nil || r.Tx.ChainID != 42161 {
			t.Errorf("%s: tx %+v", tt.name, r.Tx)
		}
	}
}
