package swap

import (
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TestRefundDestination: a swap from a ticket keeps the quote's refund
// address; its refunds go there, or to fromAddress when the quote named
// none, and RefundedTo names it only once the swap was refunded.
func TestRefundDestination(t *testing.T) {
	for _, tt := range []struct {
		name, refundTo     string
		status, substatus  string
		wantAddr, wantDone string
	}{
		{"refundTo, refunded", "0xr", StatusDone, Refunded, "0xr", "0xr"},
		{"no refundTo, refunded", "", StatusDone, Refunded, "0xf", "0xf"},
		{"refundTo, completed", "0xr", StatusDone, Completed, "0xr", ""},
		{"refundTo, pending", "0xr", StatusPending, WaitDestinationTransaction, "0xr", ""},
		{"refundTo, failed at the source", "0xr", StatusFailed, SlippageExceeded, "0xr", ""},
	} {
		tk := &quote.Ticket{ID: "qt_1", FromChain: 42161, ToChain: 8453, FromAddress: "0xf", ToAddress: "0xt", RefundTo: tt.refundTo}
		s := FromTicket(tk, "0xABC")
		if s.RefundTo != tt.refundTo || tk.RefundAddress() != tt.wantAddr {
			t.Errorf("%s: swap refundTo %q, ticket refunds to %q", tt.name, s.RefundTo, tk.RefundAddress())
		}
		s.Status, s.Substatus = tt.status, tt.substatus
		if s.RefundAddress() != tt.wantAddr || s.RefundedTo() != tt.wantDone {
			t.Errorf("%s: refunds to %q, refunded to %q; want %q and %q", tt.name, s.RefundAddress(), s.RefundedTo(), tt.wantAddr, tt.wantDone)
		}
	}
}
