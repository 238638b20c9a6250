package app

import (
	"context"
	"fmt"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// member is one upstream of a provider that several upstreams answer as.
type member struct {
	up opened
	p  quote.Provider
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

// usable are the members that serve req's pair and can quote it as asked
// (an exact output, a refund address).
func (r *raced) usable(req *quote.Request) []member {
	out := make([]member, 0, len(r.members))
	for _, m := range r.members {
		if !m.up.Serves(req.From, req.To) {
			continue
		}
		if (req.ExactOutput() || req.RefundTo != "") && !supports(m.p, req) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func supports(p quote.Provider, req *quote.Request) bool {
	reason, _ := quote.Unsupported(p, req)
	return reason == ""
}

// Legs are the legs of every usable member.
func (r *raced) Legs(req *quote.Request) []string {
	var out []string
	for _, m := range r.usable(req) {
		legs := m.p.Legs(req)
		if unnamed(legs) {
			out = append(out, m.up.Name)
			continue
		}
		out = append(out, legs...)
	}
	return out
}

// QuoteLeg asks the member the leg belongs to.
func (r *raced) QuoteLeg(ctx context.Context, req *quote.Request, leg string) (*quote.Route, error) {
	for _, m := range r.members {
		if m.up.Name == leg && unnamed(m.p.Legs(req)) {
			return m.p.QuoteLeg(ctx, req, "")
		}
	}
	for _, m := range r.members {
		if contains(m.p.Legs(req), leg) {
			return m.p.QuoteLeg(ctx, req, leg)
		}
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
		if !m.up.Serves(req.From, req.To) {
			continue
		}
		if reason, why := quote.Unsupported(m.p, req); reason == want {
			return why
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
