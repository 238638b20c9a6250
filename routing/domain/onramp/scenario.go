package onramp

import (
	"fmt"
	"time"

	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// Scripted on-ramp orders (sandbox mode): an order opened with a sandbox
// scenario (see package scenario) moves by itself, a step after each state
// it enters, as the scenario says, instead of waiting for the buyer on the
// checkout page:
//
//   - payment-failed: CREATED → FAILED (onramp.failed);
//   - refunded: CREATED → PAYMENT_RECEIVED → REFUNDED
//     (onramp.payment_received, onramp.refunded);
//   - expired: the checkout expires unpaid a step after it opened
//     (EXPIRED, no event): its expiresAt is that moment, and the desk's
//     ordinary expiry takes it there.
//
// The scenario is kept in the order's record, so that the desk plays it
// after a restart too. The checkout page's buttons cannot change a scripted
// outcome (ActionMove): a button that plays the script's next move makes it
// at once (Pay on payment-failed is the declined payment), and any other is
// refused.

// Script applies the order's scenario to its expiry at creation: an
// expired scenario's checkout expires step after it opened (whole seconds,
// rounded up, as every expiresAt).
func (o *Order) Script(step time.Duration) {
	if o.Scenario == scenario.Expired {
		o.ExpiresAt = o.CreatedAt.Add(step + time.Second - 1).Truncate(time.Second)
	}
}

// ScriptedMove is the move the order's scenario makes from its current
// state, and false when it makes none (no scenario, or the buyer's own
// actions took the order elsewhere: the ordinary flow then goes on).
func (o *Order) ScriptedMove() (to State, reason string, ok bool) {
	switch {
	case o.Scenario == scenario.PaymentFailed && o.State == Created:
		return Failed, "the payment was declined (sandbox scenario payment-failed)", true
	case o.Scenario == scenario.Refunded && o.State == Created:
		return PaymentReceived, "", true
	case o.Scenario == scenario.Refunded && o.State == PaymentReceived:
		return Refunded, "the payment was refunded (sandbox scenario refunded)", true
	}
	return "", "", false
}

// ActionMove is the move the checkout page's action a makes on the order:
// its target for an order without a scenario; for a scripted order, the
// script's next move when a plays it (Pay on a payment-failed order is the
// payment declined, FAILED; Pay on a refunded order is the payment
// received, which the script then refunds; Fail or Refund where the script
// goes there next), and ErrTransition for every other action, so that the
// scripted outcome holds whatever the page is used for (an expired
// scenario's checkout takes no payment).
func (o *Order) ActionMove(a Action) (to State, reason string, err error) {
	target, ok := a.Target()
	if !ok {
		return "", "", fmt.Errorf("%w: unknown action %q", ErrTransition, a)
	}
	if o.Scenario == "" {
		return target, a.Reason(), nil
	}
	next, why, scripted := o.ScriptedMove()
	if scripted && (next == target || o.Scenario == scenario.PaymentFailed && a == Pay) {
		return next, why, nil
	}
	return "", "", fmt.Errorf("%w: the order plays the sandbox scenario %s, which decides its outcome", ErrTransition, o.Scenario)
}
