package quote

import (
	"errors"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// PulseChainID is PulseChain, which only the pulseroute provider serves.
const PulseChainID = 369

// Providers returns the providers eligible for a request, following the
// specification's table: anything touching chain 369 goes
// to pulseroute; EVM to EVM to the aggregator; otherwise every provider both
// chains list (the aggregator and intents race for EVM↔Solana, for example;
// Bitcoin and the intents-only chains leave intents alone).
func Providers(req *Request) []string {
	if req.From.ID == PulseChainID || req.To.ID == PulseChainID {
		return []string{registry.ProviderPulseroute}
	}
	if req.From.ChainType == registry.EVM && req.To.ChainType == registry.EVM {
		return []string{registry.ProviderAggregator}
	}
	var out []string
	for _, p := range []string{registry.ProviderAggregator, registry.ProviderIntents} {
		if has(req.From.Providers, p) && has(req.To.Providers, p) {
			out = append(out, p)
		}
	}
	return out
}

func has(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Near-tie margins within which PreferredTool wins: RECOMMENDED and
// CHEAPEST compare in USD and call a route within 0.1% of the best's output
// value a near-tie; FASTEST calls routes within 5 seconds of the fastest one
// near-ties.
const (
	NearTieFraction = 0.001
	NearTieSeconds  = 5
)

// netUSD is the output value less gas, the RECOMMENDED score; a route
// whose figures are not known (NoUSD) scores below every known one.
func netUSD(r *Route) float64 {
	if v := r.ToAmountUSD - r.GasUSD(); KnownUSD(v) {
		return v
	}
	return math.Inf(-1)
}

// costUSD is fees plus gas, the CHEAPEST score; a route whose costs are
// not known scores above every known one.
func costUSD(r *Route) float64 {
	if v := r.FeeUSD() + r.GasUSD(); KnownUSD(v) {
		return v
	}
	return math.Inf(1)
}

// better reports whether a ranks before b under order.
func better(order Order, a, b *Route) bool {
	switch order {
	case Fastest:
		if a.ExecutionDuration != b.ExecutionDuration {
			return a.ExecutionDuration < b.ExecutionDuration
		}
		return netUSD(a) > netUSD(b)
	case Cheapest:
		if ca, cb := costUSD(a), costUSD(b); ca != cb {
			return ca < cb
		}
		return netUSD(a) > netUSD(b)
	default:
		if na, nb := netUSD(a), netUSD(b); na != nb {
			return na > nb
		}
		return a.ExecutionDuration < b.ExecutionDuration
	}
}

// nearTie reports whether r is close enough to best for a preferred tool.
func nearTie(order Order, best, r *Route) bool {
	switch order {
	case Fastest:
		return r.ExecutionDuration-best.ExecutionDuration <= NearTieSeconds
	case Cheapest:
		return costUSD(r)-costUSD(best) <= NearTieFraction*best.ToAmountUSD
	default:
		return netUSD(best)-netUSD(r) <= NearTieFraction*best.ToAmountUSD
	}
}

// Rank sorts routes best first under order, with the preferred tool's
// best route moved to the front when it ties or nearly ties the best. Ties
// that remain are broken by tool key so that the answer is deterministic.
func Rank(routes []*Route, order Order, preferred string) {
	sort.SliceStable(routes, func(i, j int) bool {
		if better(order, routes[i], routes[j]) {
			return true
		}
		if better(order, routes[j], routes[i]) {
			return false
		}
		return routes[i].Tool < routes[j].Tool
	})
	if preferred == "" || len(routes) < 2 || routes[0].Tool == preferred {
		return
	}
	for i, r := range routes {
		if r.Tool == preferred && nearTie(order, routes[0], r) {
			copy(routes[1:i+1], routes[:i])
			routes[0] = r
			return
		}
	}
}

// LegOutcome is what one raced leg produced.
type LegOutcome struct {
	Provider string
	Leg      string
	Route    *Route
	Err      error
	// Answered is false when the leg did not answer before the race ended.
	Answered bool
	// Skipped is set on a leg that was not sent, its breaker being open;
	// Err then says so (UPSTREAM_MAINTENANCE).
	Skipped bool
	// Unsupported is set on a provider left out of the race because it
	// cannot quote the request (an exact output it cannot size); Err is
	// the NoRoute that says why (ExactOutputOutcome).
	Unsupported bool
	// Elapsed is the time from the race's start to the leg's answer.
	Elapsed time.Duration
}

// Failure turns a race that produced no route into the client's error:
// UPSTREAM_MAINTENANCE naming the tools in details.tools when every leg was
// skipped (its breaker open: nothing was sent); UPSTREAM_TIMEOUT when
// nothing answered; NO_ROUTE_FOUND (details echo the pair and each tool's
// reason) when every leg said no route; the common code when every failure
// carried the same one (maintenance, build failure); UPSTREAM_ERROR
// otherwise.
func Failure(req *Request, outcomes []LegOutcome) *apierr.Error {
	answered, noRoute, absent := 0, 0, 0
	reasons := make([]map[string]any, 0, len(outcomes))
	codes := map[string]int{}
	var skipped []string
	for _, o := range outcomes {
		if o.Skipped {
			name := o.Leg
			if name == "" {
				name = o.Provider
			}
			skipped = append(skipped, name)
		}
		if !o.Answered {
			reasons = append(reasons, map[string]any{"provider": o.Provider, "tool": o.Leg, "reason": "TIMEOUT"})
			continue
		}
		answered++
		var nr *NoRoute
		if errors.As(o.Err, &nr) {
			noRoute++
			if nr.Reason == ReasonNotConfigured {
				absent++
			}
			reasons = append(reasons, map[string]any{"provider": o.Provider, "tool": nr.Tool, "reason": nr.Reason, "message": nr.Message})
			continue
		}
		ae := apierr.From(o.Err)
		codes[ae.Code]++
		reasons = append(reasons, map[string]any{"provider": o.Provider, "tool": o.Leg, "reason": ae.Code, "message": ae.Message})
	}
	switch {
	case len(outcomes) == 0:
		return &apierr.Error{Code: apierr.NoRouteFound, Message: "no provider serves this pair", Details: echo(req, nil)}
	case absent == len(outcomes):
		d := echo(req, reasons)
		d["reason"] = notConfigured(outcomes)
		return &apierr.Error{Code: apierr.NoRouteFound, Message: d["reason"].(string), Details: d}
	case len(skipped) == len(outcomes):
		d := echo(req, reasons)
		d["tools"] = skipped
		return &apierr.Error{Code: apierr.UpstreamMaintenance, Details: d,
			Message: "unavailable: " + strings.Join(skipped, ", ") + " (most recent calls failed or timed out; tried again after a cool-down, see GET /v1/tools)"}
	case answered == 0:
		return &apierr.Error{Code: apierr.UpstreamTimeout, Message: "no provider answered before the quote deadline", Details: echo(req, reasons)}
	case noRoute == len(outcomes):
		return &apierr.Error{Code: apierr.NoRouteFound, Message: "no route for these parameters", Details: echo(req, reasons)}
	case noRoute == answered:
		return &apierr.Error{Code: apierr.UpstreamTimeout, Message: "the providers that answered had no route and the others timed out", Details: echo(req, reasons)}
	}
	for code, n := range codes {
		if n == answered-noRoute && n > 0 && code != apierr.Internal {
			return &apierr.Error{Code: code, Message: "every provider failed: " + code, Details: echo(req, reasons)}
		}
	}
	return &apierr.Error{Code: apierr.UpstreamError, Message: "upstream providers failed; denyTools can exclude a failing tool", Details: echo(req, reasons)}
}

// notConfigured says which providers that could serve the pair the service
// does not run.
func notConfigured(outcomes []LegOutcome) string {
	names := make([]string, len(outcomes))
	for i, o := range outcomes {
		names[i] = o.Provider
	}
	if len(names) == 1 {
		return "provider not configured: " + names[0] + ", the provider for this pair, has no upstream on this service"
	}
	return "providers not configured: " + strings.Join(names, " and ") + ", the providers for this pair, have no upstream on this service"
}

func echo(req *Request, reasons []map[string]any) map[string]any {
	d := map[string]any{
		"fromChain": req.From.ID, "toChain": req.To.ID,
		"fromToken": req.FromToken.Address, "toToken": req.ToToken.Address,
	}
	if reasons != nil {
		d["reasons"] = reasons
	}
	return d
}
