package onramp

import (
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// Each on-ramp scenario's moves from each state, and its expiry.
func TestScriptedOrders(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	tests := []struct {
		scenario scenario.Name
		from     State
		to       State
		moves    bool
	}{
		{"", Created, "", false},
		{scenario.PaymentFailed, Created, Failed, true},
		{scenario.PaymentFailed, PaymentReceived, "", false}, // the buyer paid first: the ordinary flow
		{scenario.Refunded, Created, PaymentReceived, true},
		{scenario.Refunded, PaymentReceived, Refunded, true},
		{scenario.Refunded, CryptoSent, "", false},
		{scenario.Expired, Created, "", false}, // the ordinary expiry takes it
	}
	for _, tt := range tests {
		o := &Order{State: tt.from, Scenario: tt.scenario, CreatedAt: created}
		to, _, ok := o.ScriptedMove()
		if ok != tt.moves || to != tt.to {
			t.Errorf("%q from %s: %s %v", tt.scenario, tt.from, to, ok)
		}
		if ok && !o.Allowed(to) {
			t.Errorf("%q from %s: the state machine refuses %s", tt.scenario, tt.from, to)
		}
	}
	o := &Order{Scenario: scenario.Expired, CreatedAt: created, ExpiresAt: created.Add(CheckoutTTL)}
	o.Script(20 * time.Millisecond)
	if want := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC); !o.ExpiresAt.Equal(want) {
		t.Fatalf("expired scenario expires at %s, want %s", o.ExpiresAt, want)
	}
	o = &Order{Scenario: scenario.Refunded, CreatedAt: created, ExpiresAt: created.Add(CheckoutTTL)}
	o.Script(time.Second)
	if !o.ExpiresAt.Equal(created.Add(CheckoutTTL)) {
		t.Fatalf("refunded scenario moved the expiry to %s", o.ExpiresAt)
	}
}

// The checkout page's buttons on a scripted order play the script or are
// refused; an order without a scenario takes them as they are.
func TestScriptedOrdersHoldAgainstActions(t *testing.T) {
	tests := []struct {
		scenario scenario.Name
		from     State
		action   Action
		to       State // "" when refused
	}{
		{"", Created, Pay, PaymentReceived},
		{"", Created, Fail, Failed},
		{scenario.PaymentFailed, Created, Pay, Failed},
		{scenario.PaymentFailed, Created, Fail, Failed},
		{scenario.PaymentFailed, Created, Refund, ""},
		{scenario.Refunded, Created, Pay, PaymentReceived},
		{scenario.Refunded, Created, Fail, ""},
		{scenario.Refunded, PaymentReceived, Refund, Refunded},
		{scenario.Refunded, PaymentReceived, Fail, ""},
		{scenario.Expired, Created, Pay, ""},
		{scenario.Expired, Created, Fail, ""},
		{scenario.PaymentFailed, Failed, Pay, ""},
	}
	for _, tt := range tests {
		o := &Order{State: tt.from, Scenario: tt.scenario}
		to, _, err := o.ActionMove(tt.action)
		if tt.to == "" {
			if !errors.Is(err, ErrTransition) {
				t.Errorf("%q %s from %s: %s, %v; want ErrTransition", tt.scenario, tt.action, tt.from, to, err)
			}
			continue
		}
		if err != nil || to != tt.to || !o.Allowed(to) {
			t.Errorf("%q %s from %s: %s, %v; want %s", tt.scenario, tt.action, tt.from, to, err, tt.to)
		}
	}
}
