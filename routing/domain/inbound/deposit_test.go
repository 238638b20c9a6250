package inbound

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// TestNext holds the machine to a table written out here, independently of
// Transitions: every state (None included) against every trigger.
func TestNext(t *testing.T) {
	type move struct {
		to    State
		event string
	}
	allowed := map[State]map[Trigger]move{
		None:       {Registered: {Received, webhook.DepositReceived}, Awaited: {Confirming, ""}},
		Confirming: {Confirmed: {Received, webhook.DepositReceived}, Refused: {Failed, webhook.DepositFailed}},
		Received:   {BridgeSent: {Bridging, ""}, BridgeFailed: {Failed, webhook.DepositFailed}},
		Bridging: {
			Bridged:      {Swapping, ""},
			Delivered:    {Completed, webhook.DepositCompleted},
			BridgeFailed: {Failed, webhook.DepositFailed},
		},
		Swapping: {Swapped: {Completed, webhook.DepositCompleted}, SwapFailed: {Fallback, ""}},
		Fallback: {Refunded: {RefundedUSDCh, webhook.DepositFailed}, FallbackFailed: {Failed, webhook.DepositFailed}},
	}
	events := map[[2]string]string{}
	for _, tr := range Transitions() {
		events[[2]string{string(tr.From), string(tr.Trigger)}] = tr.Event
	}
	n := 0
	for _, from := range append([]State{None}, States()...) {
		for _, trig := range Triggers() {
			want, ok := allowed[from][trig]
			got, gotOK := Next(from, trig)
			if gotOK != ok || got != want.to {
				t.Errorf("Next(%q, %q) = %q, %v; want %q, %v", from, trig, got, gotOK, want.to, ok)
			}
			if ok {
				n++
				if ev := events[[2]string{string(from), string(trig)}]; ev != want.event {
					t.Errorf("%q --%s--> publishes %q, want %q", from, trig, ev, want.event)
				}
			}
		}
		if got, ok := Next(from, Trigger("teleported")); ok {
			t.Errorf("Next(%q, unknown trigger) = %q, true", from, got)
		}
	}
	if n != len(Transitions()) {
		t.Errorf("%d allowed moves found, the table has %d", n, len(Transitions()))
	}
}

func TestTerminal(t *testing.T) {
	want := map[State]bool{Completed: true, RefundedUSDCh: true, Failed: true}
	for _, s := range append([]State{None}, States()...) {
		if s.Terminal() != want[s] {
			t.Errorf("%q.Terminal() = %v", s, s.Terminal())
		}
		for _, trig := range Triggers() {
			if to, ok := Next(s, trig); ok && s.Terminal() {
				t.Errorf("terminal %q leaves on %q to %q", s, trig, to)
			}
		}
	}
}

// TestEveryPathPublishesTwice walks every path from registration to a
// terminal state: each publishes deposit.received first and one final
// event last, the one that matches its end, and nothing between; every
// state is on some path.
func TestEveryPathPublishesTwice(t *testing.T) {
	final := map[State]string{Completed: webhook.DepositCompleted, RefundedUSDCh: webhook.DepositFailed, Failed: webhook.DepositFailed}
	seen := map[State]bool{}
	paths := 0
	var walk func(s State, published []string, depth int)
	walk = func(s State, published []string, depth int) {
		seen[s] = true
		if depth > len(States())+1 {
			t.Fatalf("a path longer than the states: a cycle through %q", s)
		}
		if s.Terminal() {
			paths++
			// A deposit refused out of CONFIRMING was never received: it
			// publishes its final event alone.
			refusedUnconfirmed := len(published) == 1 && s == Failed && published[0] == webhook.DepositFailed
			if !refusedUnconfirmed && (len(published) != 2 || published[0] != webhook.DepositReceived || published[1] != final[s]) {
				t.Errorf("a path to %q publishes %v", s, published)
			}
			return
		}
		for _, tr := range Transitions() {
			if tr.From != s {
				continue
			}
			p := published
			if tr.Event != "" {
				p = append(append([]string(nil), published...), tr.Event)
			}
			walk(tr.To, p, depth+1)
		}
	}
	walk(None, nil, 0)
	for _, s := range States() {
		if !seen[s] {
			t.Errorf("state %q is on no path", s)
		}
	}
	// received→bridge_failed, bridging→bridge_failed, delivered, swapped,
	// refunded, fallback_failed, each from registered and from confirmed,
	// and confirming→refused.
	if paths != 13 {
		t.Errorf("%d paths, want 13", paths)
	}
}

var (
	t0        = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	bridgeTx  = common.HexToHash("0xb1")
	destTx    = common.HexToHash("0xd1")
	usdchAddr = common.HexToAddress(pulseroute.USDChAddress)
)

func newTestDeposit(t *testing.T, output common.Address) Deposit {
	t.Helper()
	reg := signedRegistration(t, "alice", 8453)
	reg.OutputToken = output
	d, ev, err := NewDeposit(pulseroute.DefaultContracts(), 8453, reg, big.NewInt(1_000_000), t0)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Name != webhook.DepositReceived || !ev.Time.Equal(t0) {
		t.Fatalf("registration event %+v", ev)
	}
	if d.State != Received || !d.CreatedAt.Equal(t0) || !d.UpdatedAt.Equal(t0) {
		t.Fatalf("new deposit %+v", d)
	}
	return d
}

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

// TestApplyPaths drives deposits along each path and checks the record and
// the event data at the end.
func TestApplyPaths(t *testing.T) {
	type step struct {
		u     Update
		event string // "" none
	}
	sent := step{Update{Trigger: BridgeSent, At: at(1), TxHash: bridgeTx}, ""}
	bridged := step{Update{Trigger: Bridged, At: at(2)}, ""}
	cases := []struct {
		name   string
		output common.Address
		steps  []step
		want   Data // at the end, fields other than the registration's
	}{
		{"swapped", testOutput, []step{sent, bridged,
			{Update{Trigger: Swapped, At: at(3), TxHash: destTx, AmountOut: big.NewInt(5_000)}, webhook.DepositCompleted},
		}, Data{Status: "COMPLETED", AmountOut: "5000", DeliveredToken: testOutput.Hex(), BridgeTxHash: bridgeTx.Hex(), DestinationTxHash: destTx.Hex()}},
		{"delivered without a DEX leg", usdchAddr, []step{sent,
			{Update{Trigger: Delivered, At: at(3), TxHash: destTx, AmountOut: big.NewInt(1_000_000)}, webhook.DepositCompleted},
		}, Data{Status: "COMPLETED", AmountOut: "1000000", DeliveredToken: usdchAddr.Hex(), BridgeTxHash: bridgeTx.Hex(), DestinationTxHash: destTx.Hex()}},
		{"fallback", common.Address{}, []step{sent, bridged,
			{Update{Trigger: SwapFailed, At: at(3), Reason: "slippage"}, ""},
			{Update{Trigger: Refunded, At: at(4), TxHash: destTx, AmountOut: big.NewInt(1_000_000)}, webhook.DepositFailed},
		}, Data{Status: "REFUNDED_USDCH", AmountOut: "1000000", DeliveredToken: usdchAddr.Hex(), BridgeTxHash: bridgeTx.Hex(), DestinationTxHash: destTx.Hex(), Fallback: true, Reason: "DEX leg failed: slippage"}},
		{"fallback failed", testOutput, []step{sent, bridged,
			{Update{Trigger: SwapFailed, At: at(3), Reason: "no liquidity"}, ""},
			{Update{Trigger: FallbackFailed, At: at(4), Reason: "USDCh transfer reverted"}, webhook.DepositFailed},
		}, Data{Status: "FAILED", BridgeTxHash: bridgeTx.Hex(), Fallback: true, Reason: "USDCh transfer reverted"}},
		{"bridge never sent", testOutput, []step{
			{Update{Trigger: BridgeFailed, At: at(1), Reason: "receiver out of gas funds"}, webhook.DepositFailed},
		}, Data{Status: "FAILED", Reason: "receiver out of gas funds"}},
		{"bridge never arrived", testOutput, []step{sent,
			{Update{Trigger: BridgeFailed, At: at(90), Reason: "message not delivered"}, webhook.DepositFailed},
		}, Data{Status: "FAILED", BridgeTxHash: bridgeTx.Hex(), Reason: "message not delivered"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDeposit(t, tc.output)
			var last *webhook.Event
			for i, s := range tc.steps {
				before := d
				next, ev, err := d.Apply(s.u)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, s.u.Trigger, err)
				}
				if before.State != d.State || before.UpdatedAt != d.UpdatedAt {
					t.Fatalf("step %d changed the deposit it was applied to", i)
				}
				if !next.UpdatedAt.Equal(s.u.At) || !next.CreatedAt.Equal(t0) {
					t.Fatalf("step %d: times %v, %v", i, next.CreatedAt, next.UpdatedAt)
				}
				switch {
				case s.event == "" && ev != nil:
					t.Fatalf("step %d published %s", i, ev.Name)
				case s.event != "" && (ev == nil || ev.Name != s.event || !ev.Time.Equal(s.u.At)):
					t.Fatalf("step %d published %+v, want %s at %v", i, ev, s.event, s.u.At)
				}
				d, last = next, ev
			}
			if !d.State.Terminal() {
				t.Fatalf("ended in %q", d.State)
			}
			reg := d.Registration
			want := tc.want
			want.TxHash, want.SourceChain, want.DestinationChain = reg.TxHash.Hex(), 8453, 369
			want.FromAddress, want.ToAddress, want.OutputToken = reg.FromAddress.Hex(), reg.ToAddress.Hex(), reg.OutputToken.Hex()
			want.InputToken, want.AmountIn = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "1000000"
			if got := d.Data(); got != want {
				t.Fatalf("data\n%+v\nwant\n%+v", got, want)
			}
			if got := last.Data.(Data); got != want {
				t.Fatalf("event data\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestApplyRefused(t *testing.T) {
	wpls := newTestDeposit(t, testOutput)
	direct := newTestDeposit(t, usdchAddr)
	advance := func(d Deposit, us ...Update) Deposit {
		for _, u := range us {
			var err error
			if d, _, err = d.Apply(u); err != nil {
				t.Fatalf("%s: %v", u.Trigger, err)
			}
		}
		return d
	}
	sent := Update{Trigger: BridgeSent, At: at(1), TxHash: bridgeTx}
	bridged := Update{Trigger: Bridged, At: at(2)}
	bridging := advance(wpls, sent)
	swapping := advance(wpls, sent, bridged)
	fallback := advance(swapping, Update{Trigger: SwapFailed, At: at(3), Reason: "x"})
	completed := advance(swapping, Update{Trigger: Swapped, At: at(3), TxHash: destTx, AmountOut: big.NewInt(1)})
	failed := advance(wpls, Update{Trigger: BridgeFailed, At: at(1), Reason: "x"})
	refunded := advance(fallback, Update{Trigger: Refunded, At: at(4), TxHash: destTx, AmountOut: big.NewInt(1)})

	cases := []struct {
		name string
		d    Deposit
		u    Update
		want error
	}{
		{"registered twice", wpls, Update{Trigger: Registered, At: at(1)}, ErrTransition},
		{"skipping the bridge", wpls, Update{Trigger: Swapped, At: at(1), TxHash: destTx, AmountOut: big.NewInt(1)}, ErrTransition},
		{"bridged for a USDCh output", advance(direct, sent), bridged, ErrTransition},
		{"delivered for a swapped output", bridging, Update{Trigger: Delivered, At: at(2), TxHash: destTx, AmountOut: big.NewInt(1)}, ErrTransition},
		{"swap failed before swapping", bridging, Update{Trigger: SwapFailed, At: at(2), Reason: "x"}, ErrTransition},
		{"refunded without a fallback", swapping, Update{Trigger: Refunded, At: at(3), TxHash: destTx, AmountOut: big.NewInt(1)}, ErrTransition},
		{"bridge failed while swapping", swapping, Update{Trigger: BridgeFailed, At: at(3), Reason: "x"}, ErrTransition},
		{"anything after completed", completed, Update{Trigger: SwapFailed, At: at(4), Reason: "x"}, ErrTransition},
		{"swapped twice", completed, Update{Trigger: Swapped, At: at(4), TxHash: destTx, AmountOut: big.NewInt(1)}, ErrTransition},
		{"anything after failed", failed, Update{Trigger: BridgeSent, At: at(2), TxHash: bridgeTx}, ErrTransition},
		{"anything after refunded", refunded, Update{Trigger: FallbackFailed, At: at(5), Reason: "x"}, ErrTransition},
		{"unknown trigger", wpls, Update{Trigger: "teleported", At: at(1)}, ErrTransition},
		{"no time", wpls, Update{Trigger: BridgeSent, TxHash: bridgeTx}, ErrUpdate},
		{"bridge sent without its transaction", wpls, Update{Trigger: BridgeSent, At: at(1)}, ErrUpdate},
		{"swapped without its transaction", swapping, Update{Trigger: Swapped, At: at(3), AmountOut: big.NewInt(1)}, ErrUpdate},
		{"swapped without an amount", swapping, Update{Trigger: Swapped, At: at(3), TxHash: destTx}, ErrUpdate},
		{"swapped for nothing", swapping, Update{Trigger: Swapped, At: at(3), TxHash: destTx, AmountOut: new(big.Int)}, ErrUpdate},
		{"delivered without an amount", advance(direct, sent), Update{Trigger: Delivered, At: at(3), TxHash: destTx}, ErrUpdate},
		{"refunded without its transaction", fallback, Update{Trigger: Refunded, At: at(4), AmountOut: big.NewInt(1)}, ErrUpdate},
		{"refunded a negative amount", fallback, Update{Trigger: Refunded, At: at(4), TxHash: destTx, AmountOut: big.NewInt(-1)}, ErrUpdate},
		{"swap failed without a reason", swapping, Update{Trigger: SwapFailed, At: at(3)}, ErrUpdate},
		{"bridge failed without a reason", bridging, Update{Trigger: BridgeFailed, At: at(3)}, ErrUpdate},
		{"fallback failed without a reason", fallback, Update{Trigger: FallbackFailed, At: at(4)}, ErrUpdate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ev, err := tc.d.Apply(tc.u)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if ev != nil {
				t.Fatalf("a refusal published %s", ev.Name)
			}
			if got.State != tc.d.State || got.UpdatedAt != tc.d.UpdatedAt || got.Reason != tc.d.Reason {
				t.Fatalf("a refusal moved the deposit: %+v", got)
			}
		})
	}
}

func TestNewDepositRefused(t *testing.T) {
	c := pulseroute.DefaultContracts()
	reg := signedRegistration(t, "alice", 8453)
	cases := []struct {
		name   string
		chain  uint64
		amount *big.Int
		at     time.Time
	}{
		{"chain 369", 369, big.NewInt(1), t0},
		{"chain without a warp route", 56, big.NewInt(1), t0},
		{"no amount", 8453, nil, t0},
		{"zero amount", 8453, new(big.Int), t0},
		{"no time", 8453, big.NewInt(1), time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ev, err := NewDeposit(c, tc.chain, reg, tc.amount, tc.at)
			if !errors.Is(err, ErrUpdate) {
				t.Fatalf("error %v, want ErrUpdate", err)
			}
			if d.State != None || ev.Name != "" {
				t.Fatalf("a refusal made %+v, %+v", d, ev)
			}
		})
	}
}

// TestApplyCopiesAmounts checks that the deposit shares no big.Int with
// the caller, whose values may be reused.
func TestApplyCopiesAmounts(t *testing.T) {
	in := big.NewInt(1_000_000)
	reg := signedRegistration(t, "alice", 8453)
	d, _, err := NewDeposit(pulseroute.DefaultContracts(), 8453, reg, in, t0)
	if err != nil {
		t.Fatal(err)
	}
	out := big.NewInt(7)
	for _, u := range []Update{{Trigger: BridgeSent, At: at(1), TxHash: bridgeTx}, {Trigger: Bridged, At: at(2)}, {Trigger: Swapped, At: at(3), TxHash: destTx, AmountOut: out}} {
		if d, _, err = d.Apply(u); err != nil {
			t.Fatal(err)
		}
	}
	in.SetInt64(1)
	out.SetInt64(1)
	if d.AmountIn.Int64() != 1_000_000 || d.AmountOut.Int64() != 7 {
		t.Fatalf("amounts %s, %s follow the caller's values", d.AmountIn, d.AmountOut)
	}
}

// TestPayloadBytes pins the exact webhook bodies of a deposit's events: the
// field names, their order, and which are left out.
func TestPayloadBytes(t *testing.T) {
	var (
		from = common.HexToAddress("0x1111111111111111111111111111111111111111")
		to   = common.HexToAddress("0x2222222222222222222222222222222222222222")
	)
	reg := Registration{TxHash: common.HexToHash("0xaa"), FromAddress: from, ToAddress: to, OutputToken: testOutput, DestinationDomain: DestinationDomain}
	d, received, err := NewDeposit(pulseroute.DefaultContracts(), 42161, reg, big.NewInt(2_500_000), t0)
	if err != nil {
		t.Fatal(err)
	}
	var refunded *webhook.Event
	for _, u := range []Update{
		{Trigger: BridgeSent, At: at(1), TxHash: bridgeTx},
		{Trigger: Bridged, At: at(2)},
		{Trigger: SwapFailed, At: at(3), Reason: "PulseX: INSUFFICIENT_OUTPUT_AMOUNT"},
		{Trigger: Refunded, At: at(4), TxHash: destTx, AmountOut: big.NewInt(2_500_000)},
	} {
		if d, refunded, err = d.Apply(u); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		ev   webhook.Event
		want string
	}{
		{"deposit.received", received, `{"event":"deposit.received","timestamp":1772366400,"data":{` +
			`"txHash":"0x00000000000000000000000000000000000000000000000000000000000000aa","sourceChain":42161,"destinationChain":369,` +
			`"fromAddress":"0x1111111111111111111111111111111111111111","toAddress":"0x2222222222222222222222222222222222222222",` +
			`"inputToken":"0xaf88d065e77c8cC2239327C5EDb3A432268e5831","outputToken":"0xA1077a294dDE1B09bB078844df40758a5D0f9a27",` +
			`"amountIn":"2500000","status":"RECEIVED","fallback":false}}`},
		{"deposit.failed after the fallback", *refunded, `{"event":"deposit.failed","timestamp":1772366640,"data":{` +
			`"txHash":"0x00000000000000000000000000000000000000000000000000000000000000aa","sourceChain":42161,"destinationChain":369,` +
			`"fromAddress":"0x1111111111111111111111111111111111111111","toAddress":"0x2222222222222222222222222222222222222222",` +
			`"inputToken":"0xaf88d065e77c8cC2239327C5EDb3A432268e5831","outputToken":"0xA1077a294dDE1B09bB078844df40758a5D0f9a27",` +
			`"amountIn":"2500000","amountOut":"2500000","deliveredToken":"0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D","status":"REFUNDED_USDCH",` +
			`"bridgeTxHash":"0x00000000000000000000000000000000000000000000000000000000000000b1",` +
			`"destinationTxHash":"0x00000000000000000000000000000000000000000000000000000000000000d1",` +
			`"fallback":true,"reason":"DEX leg failed: PulseX: INSUFFICIENT_OUTPUT_AMOUNT"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.ev.Body()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("body\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
}

// TestConfirmingDeposit: a registration awaiting its transaction is
// CONFIRMING without an amount and publishes nothing; Confirmed brings the
// amount and deposit.received, Refused the reason and deposit.failed; each
// without its fact is refused.
func TestConfirmingDeposit(t *testing.T) {
	reg := signedRegistration(t, "alice", 8453)
	d, err := NewPendingDeposit(pulseroute.DefaultContracts(), 8453, reg, t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != Confirming || d.AmountIn != nil || !d.CreatedAt.Equal(t0) || d.Data().Status != "CONFIRMING" || d.Data().AmountIn != "" {
		t.Fatalf("pending deposit %+v", d)
	}
	if _, err := NewPendingDeposit(pulseroute.DefaultContracts(), 369, reg, t0); !errors.Is(err, ErrUpdate) {
		t.Fatalf("pending deposit on 369: %v", err)
	}
	at := t0.Add(time.Minute)
	if _, _, err := d.Apply(Update{Trigger: Confirmed, At: at}); !errors.Is(err, ErrUpdate) {
		t.Fatalf("confirmed without an amount: %v", err)
	}
	got, ev, err := d.Apply(Update{Trigger: Confirmed, At: at, AmountIn: big.NewInt(7_000_000)})
	if err != nil || got.State != Received || got.AmountIn.Cmp(big.NewInt(7_000_000)) != 0 || ev == nil || ev.Name != webhook.DepositReceived ||
		ev.Data.(Data).AmountIn != "7000000" {
		t.Fatalf("confirmed: %+v %+v %v", got, ev, err)
	}
	if _, _, err := d.Apply(Update{Trigger: Refused, At: at}); !errors.Is(err, ErrUpdate) {
		t.Fatalf("refused without a reason: %v", err)
	}
	got, ev, err = d.Apply(Update{Trigger: Refused, At: at, Reason: "NOT_CONFIRMED: never mined"})
	if err != nil || got.State != Failed || got.Reason != "NOT_CONFIRMED: never mined" || ev == nil || ev.Name != webhook.DepositFailed {
		t.Fatalf("refused: %+v %+v %v", got, ev, err)
	}
}
