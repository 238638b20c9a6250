package webhook

import (
	"testing"
	"time"
)

func TestFailing(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	ok := func(at time.Time) Attempt { return Attempt{Attempt: 1, StatusCode: 200, At: at} }
	bad := func(at time.Time) Attempt { return Attempt{Attempt: 1, StatusCode: 500, Error: "HTTP 500", At: at} }
	rec := func(as ...Attempt) *DeliveryRecord { return &DeliveryRecord{Attempts: as} }
	cases := []struct {
		name string
		recs []*DeliveryRecord
		want bool
	}{
		{"no history", nil, false},
		{"pending only", []*DeliveryRecord{rec()}, false},
		{"delivered", []*DeliveryRecord{rec(ok(ago(time.Hour)))}, false},
		{"failing 23h", []*DeliveryRecord{rec(bad(ago(23 * time.Hour)))}, false},
		{"failing 24h", []*DeliveryRecord{rec(bad(ago(24 * time.Hour)))}, true},
		{"failing 30h across deliveries", []*DeliveryRecord{rec(bad(ago(2 * time.Hour))), rec(bad(ago(30 * time.Hour)))}, true},
		{"old failure then success", []*DeliveryRecord{rec(bad(ago(48*time.Hour)), ok(ago(47*time.Hour)))}, false},
		{"success then 25h of failures", []*DeliveryRecord{rec(ok(ago(26 * time.Hour))), rec(bad(ago(25 * time.Hour)))}, true},
		{"recent success among failures", []*DeliveryRecord{rec(bad(ago(40 * time.Hour))), rec(ok(ago(time.Minute)))}, false},
	}
	for _, tc := range cases {
		if got := Failing(tc.recs, now); got != tc.want {
			t.Errorf("%s: Failing = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestResendable(t *testing.T) {
	for st, want := range map[string]bool{DeliveryPending: false, DeliveryDelivered: false, DeliveryRetrying: true, DeliveryDead: true, "": false} {
		if got := Resendable(st); got != want {
			t.Errorf("Resendable(%q) = %v", st, got)
		}
	}
}

func TestWellFormedDeliveryID(t *testing.T) {
	id, err := NewDeliveryID()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]bool{id: true, "dlv_000000000000000000000000": true, "dlv_00000000000000000000000": false,
		"dlv_00000000000000000000000g": false, "wh_0000000000000000000000000": false, "dlv_00000000000000000000000A": false, "": false} {
		if got := WellFormedDeliveryID(in); got != want {
			t.Errorf("WellFormedDeliveryID(%q) = %v", in, got)
		}
	}
}
