package quote

import (
	"context"
	"fmt"
)

// A quote races many legs and answers with one route, so providers may price
// in two phases: PriceLeg answers with the figures ranking needs (USD values,
// duration) and leaves the expensive parts — big.Int amounts, cost lists,
// calldata — to a Builder the route carries, which runs only for the routes
// a client is actually shown.

// Builder completes a priced route in place.
type Builder interface {
	Build(ctx context.Context, req *Request, r *Route) error
}

// Pricer is a Provider that can price a leg without building it. The route
// it returns carries a Builder in Pending (or none, when it is complete).
type Pricer interface {
	PriceLeg(ctx context.Context, req *Request, leg string) (*Route, error)
}

// Complete builds a priced route; a route without a Builder is complete
// already. A route whose build fails must not be shown; the error is a
// *BuildError. On an exact-output request the builder sees the request
// with the input the route was sized for (Request.ForRoute), and the built
// route is then held to toAmount (CheckExactOutput): one that falls short
// must not be shown either, and the error is that check's NoRoute. Every
// route a client is shown passes through here, which is what makes the
// check hold on /v1/quote, /v1/quote/stream and /v1/routes alike.
func Complete(ctx context.Context, req *Request, r *Route) error {
	if b := r.Pending; b != nil {
		if err := b.Build(ctx, req.ForRoute(r), r); err != nil {
			return &BuildError{Provider: r.Provider, Tool: r.Tool, Err: err}
		}
		r.Pending = nil
	}
	return CheckExactOutput(req, r)
}

// BuildError is a route that was priced but could not be built: the leg
// answered, and Swapgate could not make its transaction, which says
// nothing of the provider's health.
type BuildError struct {
	Provider, Tool string
	Err            error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("quote: build %s/%s route: %v", e.Provider, e.Tool, e.Err)
}

// Unwrap returns the builder's error.
func (e *BuildError) Unwrap() error { return e.Err }
