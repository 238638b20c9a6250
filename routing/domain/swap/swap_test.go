package swap

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
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

// TestUpstreamRefFromTicketAndRecord: the upstream's reference of the
// quote's route (Relay's request id, which its status endpoint is asked
// with) passes from the ticket to the tracked swap, survives the swap's
// JSON record, and a record written before the field existed reads back
// without one.
func TestUpstreamRefFromTicketAndRecord(t *testing.T) {
	const ref = "0x7e13a4a944b62ee6e378a15cfb29659351f69fedf7780406279a47cdf895499e"
	for _, tt := range []struct {
		name string
		ref  string
	}{{"with a reference", ref}, {"without one", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			tk := &quote.Ticket{ID: "qt_1", Provider: "aggregator", Tool: "relay", FromChain: 42161, ToChain: 8453, UpstreamRef: tt.ref}
			s := FromTicket(tk, "0xABC")
			if s.UpstreamRef != tt.ref {
				t.Fatalf("swap UpstreamRef %q, want %q", s.UpstreamRef, tt.ref)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(b), `"upstreamRef"`); has != (tt.ref != "") {
				t.Errorf("record %s", b)
			}
			var back Swap
			if err := json.Unmarshal(b, &back); err != nil || back.UpstreamRef != tt.ref {
				t.Fatalf("read back %q, %v", back.UpstreamRef, err)
			}
		})
	}
	var old Swap
	if err := json.Unmarshal([]byte(`{"id":"0xabc","provider":"aggregator","tool":"across","status":"PENDING"}`), &old); err != nil || old.UpstreamRef != "" || old.Tool != "across" {
		t.Fatalf("old record: %+v %v", old, err)
	}
}
