package sandbox

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/swap"
)

// fakeLedger is a Ledger with one known transaction and a record of
// deliveries.
type fakeLedger struct {
	found, ok  bool
	reason     string
	minedAt    time.Time
	deliveries map[string]string
	// to records each delivery's recipient, by reference.
	to map[string]string
}

func (f *fakeLedger) Outcome(context.Context, uint64, string) (bool, bool, string, time.Time, error) {
	return f.found, f.ok, f.reason, f.minedAt, nil
}

func (f *fakeLedger) Deliver(_ context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	if h, ok := f.deliveries[ref]; ok {
		return h, nil
	}
	h := "0xdeliver" + uintString(chainID) + amount.String()
	f.deliveries[ref] = h
	if f.to != nil {
		f.to[ref] = to
	}
	return h, nil
}

func TestBridging(t *testing.T) {
	mined := time.Unix(1_767_225_600, 0)
	cross := swap.Swap{ID: "0xsrc", FromChain: 42161, ToChain: 8453, FromAmount: "1000", ToAmount: "990",
		FromAddress: "0xf", ToAddress: "0xt", ExpectedDuration: 60, Sending: swap.Leg{TxHash: "0xsrc"}}
	same := cross
	same.ToChain = 42161
	tests := []struct {
		name       string
		ledger     fakeLedger
		s          swap.Swap
		cfg        BridgingConfig
		at         time.Time
		status     string
		sub        string
		deliveries int
	}{
		{"not mined", fakeLedger{}, cross, BridgingConfig{DurationScale: 1}, mined, swap.StatusNotFound, "", 0},
		{"reverted without allowance", fakeLedger{found: true, reason: "ERC20: insufficient allowance", minedAt: mined}, cross,
			BridgingConfig{DurationScale: 1}, mined, swap.StatusFailed, swap.InsufficientAllowance, 0},
		{"reverted without balance", fakeLedger{found: true, reason: "ERC20: transfer amount exceeds balance", minedAt: mined}, cross,
			BridgingConfig{DurationScale: 1}, mined, swap.StatusFailed, swap.InsufficientBalance, 0},
		{"same chain: done when mined", fakeLedger{found: true, ok: true, minedAt: mined}, same,
			BridgingConfig{DurationScale: 1}, mined, swap.StatusDone, swap.Completed, 0},
		{"bridging under way", fakeLedger{found: true, ok: true, minedAt: mined}, cross,
			BridgingConfig{DurationScale: 1}, mined.Add(59 * time.Second), swap.StatusPending, swap.WaitDestinationTransaction, 0},
		{"delivered after the quoted duration", fakeLedger{found: true, ok: true, minedAt: mined}, cross,
			BridgingConfig{DurationScale: 1}, mined.Add(60 * time.Second), swap.StatusDone, swap.Completed, 1},
		{"scale 0 delivers at once", fakeLedger{found: true, ok: true, minedAt: mined}, cross,
			BridgingConfig{}, mined, swap.StatusDone, swap.Completed, 1},
		{"a failing bridge refunds", fakeLedger{found: true, ok: true, minedAt: mined}, cross,
			BridgingConfig{FailureRate: 1}, mined, swap.StatusDone, swap.Refunded, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ledger.deliveries = map[string]string{}
			b := NewBridging(&tt.ledger, tt.cfg, func() time.Time { return tt.at })
			s := tt.s
			o, err := b.SwapStatus(context.Background(), &s)
			if err != nil || o.Status != tt.status || o.Substatus != tt.sub || len(tt.ledger.deliveries) != tt.deliveries {
				t.Fatalf("got %+v %v with %d deliveries", o, err, len(tt.ledger.deliveries))
			}
			if tt.deliveries > 0 {
				again, _ := b.SwapStatus(context.Background(), &s)
				if again.Receiving.TxHash != o.Receiving.TxHash || len(tt.ledger.deliveries) != tt.deliveries {
					t.Fatalf("a second poll delivered again: %+v", again)
				}
			}
		})
	}
}

// TestBridgingRefundsToRefundTo: a failing bridge pays the input back on
// the source chain to the quote's refund address, or to fromAddress when it
// named none, and the swap says where it went.
func TestBridgingRefundsToRefundTo(t *testing.T) {
	mined := time.Unix(1_767_225_600, 0)
	for _, tt := range []struct {
		name, refundTo, want string
	}{{"refundTo", "0xrefund", "0xrefund"}, {"no refundTo", "", "0xf"}} {
		led := &fakeLedger{found: true, ok: true, minedAt: mined, deliveries: map[string]string{}, to: map[string]string{}}
		b := NewBridging(led, BridgingConfig{FailureRate: 1}, func() time.Time { return mined })
		s := swap.Swap{ID: "0xsrc", FromChain: 42161, ToChain: 8453, FromAmount: "1000", ToAmount: "990", FromAddress: "0xf",
			ToAddress: "0xt", RefundTo: tt.refundTo, Sending: swap.Leg{TxHash: "0xsrc"}}
		o, err := b.SwapStatus(context.Background(), &s)
		if err != nil || o.Substatus != swap.Refunded || led.to["0xsrc/refund"] != tt.want || o.Receiving.ChainID != 42161 {
			t.Fatalf("%s: %+v %v, refund paid to %q", tt.name, o, err, led.to["0xsrc/refund"])
		}
		swap.Apply(&s, o, mined)
		if s.RefundedTo() != tt.want {
			t.Errorf("%s: RefundedTo %q, want %q", tt.name, s.RefundedTo(), tt.want)
		}
	}
}
