package quote

import (
	"errors"
	"fmt"
)

// ErrNoRoute is wrapped by every "this provider has no route" answer; the
// wrapping NoRoute error says why, so that NO_ROUTE_FOUND can explain itself
// in details.
var ErrNoRoute = errors.New("no route")

// NoRoute is a provider's reasoned refusal.
type NoRoute struct {
	Provider string
	Tool     string
	Reason   string // e.g. AMOUNT_TOO_LOW, NO_POSSIBLE_ROUTE, INSUFFICIENT_LIQUIDITY
	Message  string
}

// ReasonNotConfigured is the NoRoute reason of a provider the request is
// eligible for but the service does not run (live mode without that
// provider's upstream).
const ReasonNotConfigured = "PROVIDER_NOT_CONFIGURED"

// NotConfigured is the outcome of a provider that is not running: it was
// never raced, and says so.
func NotConfigured(provider string) LegOutcome {
	return LegOutcome{Provider: provider, Answered: true, Err: &NoRoute{Provider: provider, Reason: ReasonNotConfigured,
		Message: "the " + provider + " provider is not configured on this service"}}
}

func (e *NoRoute) Error() string {
	return fmt.Sprintf("%s/%s: no route: %s: %s", e.Provider, e.Tool, e.Reason, e.Message)
}

// Unwrap makes errors.Is(err, ErrNoRoute) true.
func (e *NoRoute) Unwrap() error { return ErrNoRoute }
