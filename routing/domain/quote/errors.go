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

func (e *NoRoute) Error() string {
	return fmt.Sprintf("%s/%s: no route: %s: %s", e.Provider, e.Tool, e.Reason, e.Message)
}

// Unwrap makes errors.Is(err, ErrNoRoute) true.
func (e *NoRoute) Unwrap() error { return ErrNoRoute }
