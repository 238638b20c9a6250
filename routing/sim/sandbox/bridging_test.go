package sandbox

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/scenario"
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
	play := func(n scenario.Name) swap.Swap {
		s := cross
		s.Scenario = n
		return s
	}
	incomplete := play(scenario.IncompleteDeposit)
	incomplete.DepositAddress = "0xdeposit"
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
		{"scenario refund: refunded after the bridge time", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Refund),
			BridgingConfig{DurationScale: 1}, mined.Add(60 * time.Second), swap.StatusDone, swap.Refunded, 1},
		{"scenario refund: under way before it", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Refund),
			BridgingConfig{DurationScale: 1}, mined.Add(59 * time.Second), swap.StatusPending, swap.WaitDestinationTransaction, 0},
		{"scenario partial: half delivered, half refunded", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Partial),
			BridgingConfig{DurationScale: 1}, mined.Add(60 * time.Second), swap.StatusDone, swap.Partial, 2},
		{"scenario slow: still under way at 9 times the quoted time", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Slow),
			BridgingConfig{DurationScale: 1}, mined.Add(9 * 60 * time.Second), swap.StatusPending, swap.WaitDestinationTransaction, 0},
		{"scenario slow: delivered at 10 times", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Slow),
			BridgingConfig{DurationScale: 1}, mined.Add(10 * 60 * time.Second), swap.StatusDone, swap.Completed, 1},
		{"scenario stuck: never delivered", fakeLedger{found: true, ok: true, minedAt: mined}, play(scenario.Stuck),
			BridgingConfig{}, mined.Add(1000 * time.Hour), swap.StatusPending, swap.WaitDestinationTransaction, 0},
		{"scenario incomplete-deposit: short before the bridge time", fakeLedger{found: true, ok: true, minedAt: mined}, incomplete,
			BridgingConfig{DurationScale: 1}, mined, swap.StatusPending, swap.Partial, 0},
		{"scenario incomplete-deposit: refunded after it", fakeLedger{found: true, ok: true, minedAt: mined}, incomplete,
			BridgingConfig{DurationScale: 1}, mined.Add(60 * time.Second), swap.StatusDone, swap.Refunded, 1},
		{"scenario source-revert: the revert decides", fakeLedger{found: true, reason: "SandboxRouter: output 990 is below minAmountOut 991", minedAt: mined},
			play(scenario.SourceRevert), BridgingConfig{}, mined, swap.StatusFailed, swap.SlippageExceeded, 0},
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

// A partial fill delivers half the quoted output and refunds the unfilled
// half of the input (the odd unit with it) to the sender.
func TestBridgingPartialAmounts(t *testing.T) {
	mined := time.Unix(1_767_225_600, 0)
	l := &fakeLedger{found: true, ok: true, minedAt: mined, deliveries: map[string]string{}}
	var got []string
	rec := &recordingLedger{fakeLedger: l, got: &got}
	s := swap.Swap{ID: "0xsrc", FromChain: 42161, ToChain: 8453, FromAmount: "1001", ToAmount: "990", FromAddress: "0xf",
		ToAddress: "0xt", Sending: swap.Leg{TxHash: "0xsrc"}, Scenario: scenario.Partial}
	o, err := NewBridging(rec, BridgingConfig{}, func() time.Time { return mined }).SwapStatus(context.Background(), &s)
	if err != nil || o.Receiving.Amount != "495" || o.Receiving.ChainID != 8453 {
		t.Fatalf("observation %+v %v", o, err)
	}
	want := []string{"8453 0xt 495", "42161 0xf 501"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
}

// recordingLedger records each delivery's chain, receiver and amount.
type recordingLedger struct {
	*fakeLedger
	got *[]string
}

func (r *recordingLedger) Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	*r.got = append(*r.got, uintString(chainID)+" "+to+" "+amount.String())
	return r.fakeLedger.Deliver(ctx, chainID, ref, to, token, amount)
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

// warpLedger is a fakeLedger whose source transaction sent a warp-route
// message, delivered or not.
type warpLedger struct {
	fakeLedger
	arrival WarpArrival
}

func (w *warpLedger) WarpArrival(context.Context, uint64, string) (WarpArrival, error) {
	return w.arrival, nil
}

// TestBridgingWarpRoutes: a swap whose source transaction sent a
// warp-route message is the relayer's to deliver: bridging waits for the
// delivery whatever the quoted duration and the bridge failure rate, and
// delivers nothing of its own when the warp route's token is the output
// (the relayer's transaction is the receiving one); when the output is
// swapped on arrival, it pays it once by the swap's reference.
func TestBridgingWarpRoutes(t *testing.T) {
	mined := time.Unix(1_767_225_600, 0)
	const usdch = "0xA0b86a33E6441b8C4C8C0C8C0C8C0C8C0C8C0C8C"
	direct := swap.Swap{ID: "0xsrc", FromChain: 42161, ToChain: 369, FromAmount: "1000", ToAmount: "1000", ToToken: usdch,
		FromAddress: "0xf", ToAddress: "0xt", ExpectedDuration: 600, Sending: swap.Leg{TxHash: "0xsrc"}}
	swapped := direct
	swapped.ToToken, swapped.ToAmount = "0x95B303987A60C71504D99Aa1b13B4DA07b0790ab", "777"
	sent := WarpArrival{Sent: true, MessageID: "0xmsg", Amount: "1000", Token: strings.ToLower(usdch)}
	delivered := sent
	delivered.Delivered, delivered.TxHash, delivered.At = true, "0xrelayed", mined.Add(time.Minute)
	for _, tc := range []struct {
		name       string
		arrival    WarpArrival
		s          swap.Swap
		status     string
		receiving  string
		deliveries int
	}{
		{"not yet delivered: pending past the quoted duration", sent, direct, swap.StatusPending, "", 0},
		{"USDCh delivered by the relayer", delivered, direct, swap.StatusDone, "0xrelayed", 0},
		{"not yet arrived for the swap on arrival", sent, swapped, swap.StatusPending, "", 0},
		{"arrived: the swap on arrival pays the output", delivered, swapped, swap.StatusDone, "0xdeliver369777", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &warpLedger{fakeLedger: fakeLedger{found: true, ok: true, minedAt: mined, deliveries: map[string]string{}}, arrival: tc.arrival}
			b := NewBridging(l, BridgingConfig{FailureRate: 1}, func() time.Time { return mined.Add(24 * time.Hour) })
			s := tc.s
			for range 2 {
				obs, err := b.SwapStatus(context.Background(), &s)
				if err != nil {
					t.Fatal(err)
				}
				if obs.Status != tc.status || obs.Receiving.TxHash != tc.receiving {
					t.Fatalf("%+v, want %s received in %q", obs, tc.status, tc.receiving)
				}
			}
			if len(l.deliveries) != tc.deliveries {
				t.Fatalf("bridging delivered %v, want %d", l.deliveries, tc.deliveries)
			}
		})
	}
}
