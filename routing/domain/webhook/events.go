package webhook

import "slices"

// Event names of the specification's Events table. No other name is accepted
// at registration or published.
const (
	SwapPending           = "swap.pending"
	SwapCompleted         = "swap.completed"
	SwapFailed            = "swap.failed"
	DepositReceived       = "deposit.received"
	DepositCompleted      = "deposit.completed"
	DepositFailed         = "deposit.failed"
	OnrampPaymentReceived = "onramp.payment_received"
	OnrampCryptoSent      = "onramp.crypto_sent"
	OnrampCompleted       = "onramp.completed"
	OnrampFailed          = "onramp.failed"
	OnrampRefunded        = "onramp.refunded"
)

// TestEvent is the name a test delivery (POST /v1/partner/webhooks/{id}/test)
// is sent under. It reuses swap.completed, with data.test set to true, so that
// a receiver exercises the exact code path of a real completion and needs no
// case for a name the specification does not list.
const TestEvent = SwapCompleted

// Events returns every event name in the specification's order. It returns a
// fresh slice each call.
func Events() []string {
	return []string{
		SwapPending, SwapCompleted, SwapFailed,
		DepositReceived, DepositCompleted, DepositFailed,
		OnrampPaymentReceived, OnrampCryptoSent, OnrampCompleted, OnrampFailed, OnrampRefunded,
	}
}

// ValidEvent reports whether name is an event of the specification's table.
func ValidEvent(name string) bool { return slices.Contains(Events(), name) }
