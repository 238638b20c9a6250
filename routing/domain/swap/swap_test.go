package swap

import (
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func TestApply(t *testing.T) {
	t0 := time.Unix(1_767_225_600, 0)
	pending := Observation{Status: StatusPending, Substatus: WaitDestinationTransaction}
	done := Observation{Status: StatusDone, Substatus: Completed, Receiving: Leg{TxHash: "0xdst", ChainID: 8453, Amount: "990"}}
	failed := Observation{Status: StatusFailed, Substatus: InsufficientAllowance, SubstatusMessage: "ERC20: insufficient allowance"}
	tests := []struct {
		name      string
		from      string
		partner   string
		obs       Observation
		wantState string
		wantEvent string
	}{
		{"first sighting publishes pending", "", "ptn_a", pending, StatusPending, webhook.SwapPending},
		{"pending again publishes nothing", StatusPending, "ptn_a", pending, StatusPending, ""},
		{"done publishes completed", StatusPending, "ptn_a", done, StatusDone, webhook.SwapCompleted},
		{"straight to done from nothing publishes pending first", "", "ptn_a", done, StatusDone, webhook.SwapPending + "," + webhook.SwapCompleted},
		{"straight to failed from nothing", "", "ptn_a", failed, StatusFailed, webhook.SwapPending + "," + webhook.SwapFailed},
		{"failed publishes failed", StatusPending, "ptn_a", failed, StatusFailed, webhook.SwapFailed},
		{"terminal never changes", StatusDone, "ptn_a", failed, StatusDone, ""},
		{"failed stays failed", StatusFailed, "ptn_a", done, StatusFailed, ""},
		{"not found changes nothing", StatusPending, "ptn_a", Observation{Status: StatusNotFound}, StatusPending, ""},
		{"no partner: the status moves, nobody is told", StatusPending, "", done, StatusDone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Swap{ID: "0xsrc", PartnerID: tt.partner, Status: tt.from, CreatedAt: t0}
			evs := Apply(s, tt.obs, t0.Add(time.Minute))
			ev := strings.Join(evs, ",")
			if s.Status != tt.wantState || ev != tt.wantEvent {
				t.Fatalf("status %s event %q, want %s %q", s.Status, ev, tt.wantState, tt.wantEvent)
			}
			if tt.wantState == StatusDone && tt.from != StatusDone && s.Receiving.TxHash != "0xdst" {
				t.Fatalf("receiving leg not recorded: %+v", s.Receiving)
			}
		})
	}
}

func TestScheduleBacksOffAndGivesUp(t *testing.T) {
	sc := Schedule{First: time.Second, Max: 5 * time.Second, Horizon: time.Hour}
	t0 := time.Unix(1_767_225_600, 0)
	s := &Swap{Status: StatusPending, CreatedAt: t0}
	var delays []time.Duration
	now := t0
	for range 5 {
		if sc.Next(s, now) {
			t.Fatal("gave up early")
		}
		delays = append(delays, s.NextPoll.Sub(now))
		now = s.NextPoll
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", delays, want)
		}
	}
	if !sc.Next(s, t0.Add(time.Hour)) || !s.NextPoll.IsZero() || s.Status != StatusPending || s.Substatus != UnknownError ||
		!strings.Contains(s.SubstatusMessage, "tracking stopped") {
		t.Fatalf("past the horizon: %+v", s)
	}
	done := &Swap{Status: StatusDone, CreatedAt: t0}
	if sc.Next(done, t0) || !done.NextPoll.IsZero() {
		t.Fatalf("a terminal swap is scheduled: %+v", done)
	}
}

func TestEventPayload(t *testing.T) {
	t0 := time.Unix(1_767_225_600, 0)
	s := &Swap{ID: "0xsrc", QuoteID: "qt_x", FromChain: 42161, ToChain: 8453, ToAmount: "990", Status: StatusDone,
		Sending: Leg{TxHash: "0xsrc"}, Receiving: Leg{TxHash: "0xdst", Amount: "991"}, Tool: "sbx-arcbridge",
		CreatedAt: t0, UpdatedAt: t0.Add(42 * time.Second)}
	d := Event(webhook.SwapCompleted, s, t0.Add(42*time.Second)).Data.(webhook.SwapData)
	if d.TransactionID != "qt_x" || d.SourceTxHash != "0xsrc" || d.DestinationTxHash != "0xdst" || d.ToAmount != "991" ||
		d.ExecutionDuration != 42 || d.Status != StatusDone {
		t.Fatalf("payload %+v", d)
	}
	s.QuoteID = ""
	if d := Event(webhook.SwapCompleted, s, t0).Data.(webhook.SwapData); d.TransactionID != "0xsrc" {
		t.Fatalf("transaction id without a quote: %q", d.TransactionID)
	}
}

func TestDepositStatusesAndEvents(t *testing.T) {
	t0 := time.Unix(1_767_225_600, 0)
	tests := []struct {
		from       string
		obs        Observation
		wantStatus string
		wantEvents string
	}{
		{"", Observation{Status: StatusPending, Substatus: WaitDestinationTransaction}, DepositProcessing, webhook.DepositReceived},
		{"", Observation{Status: StatusPending, Substatus: Partial}, DepositIncomplete, webhook.DepositReceived},
		{StatusPending, Observation{Status: StatusDone, Substatus: Completed}, DepositSuccess, webhook.DepositCompleted},
		{StatusPending, Observation{Status: StatusDone, Substatus: Refunded, SubstatusMessage: "deadline passed"}, DepositRefunded, webhook.DepositFailed},
		{StatusPending, Observation{Status: StatusFailed, Substatus: UnknownFailedError}, DepositFailed, webhook.DepositFailed},
		{"", Observation{Status: StatusDone, Substatus: Completed}, DepositSuccess, webhook.DepositReceived + "," + webhook.DepositCompleted},
	}
	for _, tt := range tests {
		s := &Swap{ID: "0xdep", QuoteID: "qt_x", PartnerID: "ptn_a", DepositAddress: "0xaddr", Sending: Leg{TxHash: "0xdep"}, Status: tt.from}
		if tt.from == "" && s.DepositStatus() != DepositKnownTx {
			t.Fatalf("before any observation: %s", s.DepositStatus())
		}
		evs := Apply(s, tt.obs, t0)
		if s.DepositStatus() != tt.wantStatus || strings.Join(evs, ",") != tt.wantEvents {
			t.Fatalf("%+v: status %s events %v, want %s %q", tt.obs, s.DepositStatus(), evs, tt.wantStatus, tt.wantEvents)
		}
		d, ok := Event(evs[len(evs)-1], s, t0).Data.(DepositData)
		if !ok || d.DepositAddress != "0xaddr" || d.DepositTxHash != "0xdep" || d.Status != tt.wantStatus || d.TransactionID != "qt_x" {
			t.Fatalf("payload %+v", d)
		}
	}
}
