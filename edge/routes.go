package edge

import (
	"sort"
	"strconv"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
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
// sortBy (output, speed or gas; default: the request's order), with the
// race they came from in timing.
func (s *Server) routesEndpoint(r *Request) error {
	sortBy := string(r.Ctx.QueryArgs().Peek("sortBy"))
	switch sortBy {
	case "", "output", "speed", "gas":
	default:
		return apierr.Param("sortBy", "sortBy must be output, speed or gas").With("value", sortBy)
	}
	req, ctx, cancel, err := s.quoteRequest(r)
	if err != nil {
		return err
	}
	defer cancel()
	routes, timing, err := s.deps.Quotes.Routes(ctx, req, r.Partner)
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
	expires := req.Now.Add(quote.TTL).Unix()
	beginData(r, statusOK)
	r.buf = append(r.buf, `{"routes":[`...)
	for i, rt := range routes {
		if i > 0 {
			r.buf = append(r.buf, ',')
		}
		r.buf = quote.AppendShapeA(r.buf, s.livePrices, req, rt, expires)
		if tg := tags[rt]; len(tg) > 0 {
			// Tags join the Shape A object as its last field.
			r.buf = append(r.buf[:len(r.buf)-1], `,"tags":[`...)
			for j, t := range tg {
				if j > 0 {
					r.buf = append(r.buf, ',')
				}
				r.buf = jsonenc.AppendString(r.buf, t)
			}
			r.buf = append(r.buf, "]}"...)
		}
	}
	r.buf = append(r.buf, `],"isDryQuote":`...)
	r.buf = strconv.AppendBool(r.buf, req.Dry)
	r.buf = append(r.buf, `,"timing":`...)
	r.buf = quote.AppendTiming(r.buf, timing)
	r.buf = append(r.buf, '}')
	endData(r)
	return nil
}
