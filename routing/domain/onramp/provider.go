package onramp

import (
	"context"
	"strings"
	"time"
)

// Provider is a hosted-checkout on-ramp provider, the shape of the services
// integrators use (MoonPay, Transak, Ramp, Banxa): it prices a purchase, it
// opens a checkout session for an order and gives the URL the user is sent
// to, and it reports the order's progress afterwards (an adapter turns the
// provider's own webhooks into Updates). The sandbox provider is the one
// built in; a real adapter plugs in behind the same interface.
type Provider interface {
	// Name is the provider's id, kept on each order it serves.
	Name() string
	// Quote prices a resolved request at now, the partner fee at
	// partnerFeeBps included, valid for ttl.
	Quote(ctx context.Context, r *Request, partnerFeeBps int, now time.Time, ttl time.Duration) (*Quote, error)
	// Open opens the checkout session of a new order and returns the URL
	// the user completes the payment at.
	Open(ctx context.Context, o *Order) (checkoutURL string, err error)
}

// Update is a provider's report of an order's progress: the state it
// entered, when, and what came with it.
type Update struct {
	UID    string
	State  State
	At     time.Time
	TxHash string
	Reason string
}

// Action is what the user does on a checkout page: pay, have the payment
// fail, or ask for a refund once paid.
type Action string

// Actions of the sandbox checkout page.
const (
	Pay    Action = "pay"
	Fail   Action = "fail"
	Refund Action = "refund"
)

// Target is the state an action moves an order to, and false for an
// unknown action.
func (a Action) Target() (State, bool) {
	switch a {
	case Pay:
		return PaymentReceived, true
	case Fail:
		return Failed, true
	case Refund:
		return Refunded, true
	}
	return "", false
}

// Reason is the history note an action leaves.
func (a Action) Reason() string {
	switch a {
	case Fail:
		return "the payment was declined"
	case Refund:
		return "the payment was refunded at the user's request"
	}
	return ""
}

// Sandbox is the built-in provider: prices from the reference data at the
// catalogue's fixed exchange rates, and a checkout page the service serves
// itself at <base>/checkout/<orderUid>, where the user's buttons stand in
// for a card network.
type Sandbox struct {
	Market Market
	// BaseURL gives the service's public address, which may be known only
	// once it listens.
	BaseURL func() string
}

// Name is "sandbox".
func (s *Sandbox) Name() string { return "sandbox" }

// Quote prices the request (see Price).
func (s *Sandbox) Quote(_ context.Context, r *Request, partnerFeeBps int, now time.Time, ttl time.Duration) (*Quote, error) {
	return Price(s.Market, r, partnerFeeBps, now, ttl)
}

// Open returns the order's page on the service.
func (s *Sandbox) Open(_ context.Context, o *Order) (string, error) {
	return CheckoutURL(s.BaseURL(), o.UID), nil
}

// CheckoutURL is the address of an order's hosted checkout page.
func CheckoutURL(base, uid string) string {
	return strings.TrimRight(base, "/") + CheckoutPath + uid
}

// CheckoutPath is where the service serves checkout pages.
const CheckoutPath = "/checkout/"
