package edge

import (
	"context"
	"sort"

	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/quote"
)

// Route tags of /v1/routes.
const (
	TagBestOutput = "BEST_OUTPUT"
	TagFastest    = "FASTEST"
	TagCheapest   = "CHEAPEST"
)

// routesEndpoint answers GET /v1/routes: every candidate that came back
// before the deadline, in Shape A, tagged BEST_OUTPUT (most output value),
// FASTEST (shortest duration) and CHEAPEST (least fees plus gas), sorted by
// sortBy (output, speed or gas; default: the request's order).
func (s *Server) routesEndpoint(r *Request) error {
	sortBy := string(r.Ctx.QueryArgs().Peek("sortBy"))
	switch sortBy {
	case "", "output", "speed", "gas":
	default:
		return apierr.Param("sortBy", "sortBy must be output, speed or gas").With("value", sortBy)
	}
	req, perr := quote.Parse(s.deps.Registry, s.deps.Tools, quoteParams(r.Ctx.QueryArgs()))
	if perr != nil {
		return perr
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deps.Quotes.Deadline()+ledgerGrace)
	defer cancel()
	routes, err := s.deps.Quotes.Routes(ctx, req, r.Partner)
	if err != nil {
		return err
	}
	tags := make(map[*quote.Route][]string, len(routes))
	best, fast, cheap := routes[0], routes[0], routes[0]
	for _, rt := range routes {
		if rt.ToAmountUSD > best.ToAmountUSD {
			best = rt
		}
		if rt.ExecutionDuration < fast.ExecutionDuration {
			fast = rt
		}
		if rt.FeeUSD()+rt.GasUSD() < cheap.FeeUSD()+cheap.GasUSD() {
			cheap = rt
		}
	}
	tags[best] = append(tags[best], TagBestOutput)
	tags[fast] = append(tags[fast], TagFastest)
	tags[cheap] = append(tags[cheap], TagCheapest)
	switch sortBy {
	case "output":
		sort.SliceStable(routes, func(i, j int) bool { return routes[i].ToAmountUSD > routes[j].ToAmountUSD })
	case "speed":
		sort.SliceStable(routes, func(i, j int) bool { return routes[i].ExecutionDuration < routes[j].ExecutionDuration })
	case "gas":
		sort.SliceStable(routes, func(i, j int) bool { return routes[i].GasUSD() < routes[j].GasUSD() })
	}
	expires := req.Now.Unix() + 60
	out := make([]*standardQuote, 0, len(routes))
	for _, rt := range routes {
		q := s.shapeA(req, rt, expires)
		q.Tags = tags[rt]
		out = append(out, q)
	}
	writeJSON(r, statusOK, map[string]any{"routes": out, "isDryQuote": req.Dry})
	return nil
}
