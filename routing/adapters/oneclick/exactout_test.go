package oneclick

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestQuoteLegExactOutputAndRefundTo: an exact-output request is sent as
// swapType EXACT_OUTPUT with the output wanted as its amount, and the
// recorded answer (testdata/quote_exact_output_usdc.json) maps to a route
// whose input is 1Click's amountIn, deposited by the transaction; an answer
// whose minAmountOut falls short of toAmount is a reasoned no-route. A
// request's refundTo is 1Click's refundTo; without one refunds go to
// fromAddress, as before.
func TestQuoteLegExactOutputAndRefundTo(t *testing.T) {
	const refund = "0x9f8E2b1a7C3d4E5f60718293a4B5c6D7e8F90a1B"
	tests := []struct {
		name       string
		toAmount   int64 // 0: a request for a given input
		refundTo   string
		wantType   string
		wantAmount string
		wantRefund string
		refused    bool
	}{
		{"exact output with refundTo", 100_000_000, refund, "EXACT_OUTPUT", "100000000", refund, false},
		{"exact output without refundTo", 99_000_000, "", "EXACT_OUTPUT", "99000000", user, false},
		{"answer short of toAmount", 100_000_001, refund, "EXACT_OUTPUT", "100000001", refund, true},
		{"given input with refundTo", 0, refund, "EXACT_INPUT", "100000000", refund, false},
	}
	for _, tt := range tests {
		srv, rec := replay(t, http.StatusOK, "quote_exact_output_usdc.json")
		c, reg := newClient(t, srv.URL, 5*time.Second)
		req := request(t, reg, 42161, "USDC", 8453, "USDC", 100_000_000)
		req.FeeBps, req.FeeRecipient = 0, ""
		req.RefundTo = tt.refundTo
		if tt.toAmount > 0 {
			req.FromAmount, req.ToAmount = nil, big.NewInt(tt.toAmount)
		}
		if c.ExactOutputUnsupported(req) != "" {
			t.Fatalf("%s: refused", tt.name)
		}
		r, err := c.QuoteLeg(context.Background(), req, "")
		_, _, _, body := rec.get()
		if body["swapType"] != tt.wantType || body["amount"] != tt.wantAmount || body["refundTo"] != tt.wantRefund {
			t.Errorf("%s: sent swapType %v amount %v refundTo %v", tt.name, body["swapType"], body["amount"], body["refundTo"])
		}
		if tt.refused {
			var nr *quote.NoRoute
			if !errors.As(err, &nr) || nr.Reason != "NO_POSSIBLE_ROUTE" {
				t.Errorf("%s: %v, %v; want a no-route", tt.name, r, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.FromAmount.String() != "100852306" || r.ToAmount.String() != "100000000" || r.ToAmountMin.String() != "100000000" {
			t.Errorf("%s: from %s to %s min %s", tt.name, r.FromAmount, r.ToAmount, r.ToAmountMin)
		}
		if r.DepositAddress != "0x3C2B8d9E4F1a7B6C5d0E9F8a7B6C5d4e3f2a1B0c" || r.Tx == nil {
			t.Fatalf("%s: deposit %q tx %v", tt.name, r.DepositAddress, r.Tx)
		}
		// The ERC-20 transfer to the deposit address moves amountIn.
		if got := new(big.Int).SetBytes(r.Tx.Data[4+32:]); got.String() != "100852306" ||
			common.BytesToAddress(r.Tx.Data[4:36]) != common.HexToAddress(r.DepositAddress) {
			t.Errorf("%s: deposit transfer %x", tt.name, r.Tx.Data)
		}
	}
}
