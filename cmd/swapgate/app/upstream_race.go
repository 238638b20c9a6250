package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// member is one upstream of a provider that several upstreams answer as.
type member struct {
	up opened
	p  quote.Provider
}

// serves reports whether the member quotes req's pair: its declaration's
// pairs, narrowed to what the upstream lists where it says (pairOffer).
func (m member) serves(req *quote.Request) bool {
	if !m.up.Serves(req.From, req.To) {
		return false
	}
	if po, ok := m.up.client.(pairOffer); ok {
		return po.servesPair(req.From.ID, req.To.ID)
	}
	return true
}

// raced is one provider answered by several upstreams (LI.FI and Relay as
// the aggregator): each upstream that serves a request's pair is a leg of
// its own, so that the engine, which keeps one pool per provider, races
// them, and each leg has its own breaker and figures. A member with one
// unnamed leg (a remote API quoted once per request) races as a leg named
// after its upstream; one with named legs keeps their names. The routes
// keep the provider's name; their tool names the upstream's route.
type raced struct {
	name    string
	members []member
}

var (
	_ quote.ExactOutputQuoter = (*raced)(nil)
	_ quote.RefundToQuoter    = (*raced)(nil)
)

func (r *raced) Name() string { return r.name }

// unnamed reports whether a member races as a leg named after its
// upstream: its provider quotes one leg with no name.
func unnamed(legs []string) bool { return len(legs) == 1 && legs[0] == "" }

// serving are the members that serve req's pair.
func (r *raced) serving(req *quote.Request) []member {
	out := make([]member, 0, len(r.members))
	for _, m := range r.members {
		if m.serves(req) {
			out = append(out, m)
		}
	}
	return out
}

// usable are the members that serve req's pair and can quote it as asked
// (an exact output, a refund address).
func (r *raced) usable(req *quote.Request) []member {
	out := r.serving(req)
	if req.ExactOutput() || req.RefundTo != "" {
		out = slices.DeleteFunc(out, func(m member) bool { return unsupported(m.p, req) != nil })
	}
	return out
}

// unsupported is why p cannot quote req as asked, nil when it can.
func unsupported(p quote.Provider, req *quote.Request) *quote.NoRoute {
	if !req.ExactOutput() && req.RefundTo == "" {
		return nil
	}
	if reason, why := quote.Unsupported(p, req); reason != "" {
		return &quote.NoRoute{Provider: p.Name(), Reason: reason, Message: why}
	}
	return nil
}

// Legs are the legs of every member that serves the pair. A member that
// cannot quote the request as asked (a refund address LI.FI cannot pay)
// keeps its leg, answered at once with its reason, so that the race's
// timing says why it has no route; the engine leaves the whole provider
// out only when no member can (ExactOutputUnsupported,
// RefundToUnsupported).
func (r *raced) Legs(req *quote.Request) []string {
	var out []string
	for _, m := range r.serving(req) {
		legs := m.p.Legs(req)
		if unnamed(legs) {
			out = append(out, m.up.Name)
			continue
		}
		out = append(out, legs...)
	}
	return out
}

// QuoteLeg asks the member the leg belongs to, or answers its reason when
// it cannot quote the request as asked.
func (r *raced) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	for _, m := range r.members {
		own := m.p.Legs(req)
		switch {
		case m.up.Name == leg && unnamed(own):
			own = []string{""}
		case contains(own, leg):
			own = []string{leg}
		default:
			continue
		}
		if nr := unsupported(m.p, req); nr != nil {
			nr.Tool = leg
			return nil, nr
		}
		return m.p.QuoteLeg(ctx, req, own[0])
	}
	return nil, fmt.Errorf("app: %s: no upstream quotes leg %q", r.name, leg)
}

// ExactOutputUnsupported is "" when a member serving the pair quotes req
// as asked, else the first member's reason it cannot size the output.
func (r *raced) ExactOutputUnsupported(req *quote.Request) string {
	return r.reason(req, quote.ReasonExactOutputUnsupported)
}

// RefundToUnsupported is "" when a member serving the pair quotes req as
// asked, else the first member's reason it cannot pay the refund address.
func (r *raced) RefundToUnsupported(req *quote.Request) string {
	return r.reason(req, quote.ReasonRefundToUnsupported)
}

func (r *raced) reason(req *quote.Request, want string) string {
	if len(r.usable(req)) > 0 {
		return ""
	}
	for _, m := range r.members {
		if !m.serves(req) {
			continue
		}
		if nr := unsupported(m.p, req); nr != nil && nr.Reason == want {
			return nr.Message
		}
	}
	return ""
}

// routedStatus observes a provider's swaps at the upstream whose route
// each was: the first that claims the swap, else rest.
type routedStatus struct {
	claimers []claimedSource
	rest     tracker.Source
}

type claimedSource struct {
	claim swapClaimer
	src   tracker.Source
}

func (s routedStatus) SwapStatus(ctx context.Context, sw *swap.Swap) (swap.Observation, error) {
	for _, c := range s.claimers {
		if c.claim.claims(sw) {
			return c.src.SwapStatus(ctx, sw)
		}
	}
	if s.rest == nil {
		return swap.Observation{}, fmt.Errorf("app: no upstream observes %s swaps of tool %q", sw.Provider, sw.Tool)
	}
	return s.rest.SwapStatus(ctx, sw)
}
