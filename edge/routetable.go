package edge

import (
	"cmp"
	"slices"
)

// Route is one endpoint of the server's route table as a reader outside the
// edge sees it: the method and path template the router matches (path
// parameters in braces, as OpenAPI writes them) and how the handler chain
// wraps it. The API document is held to this table by a test, so that an
// endpoint cannot be added without being described; the table is read from
// the router itself, so that nothing can be registered around it unseen.
type Route struct {
	Method string
	Path   string
	// Bucket is the rate-limit bucket the route counts against: "heavy",
	// "read" or "none"; empty for a route registered outside the handler
	// chain (the metrics endpoint), which has no bucket, envelope or auth.
	Bucket string
	// PartnerOnly is set when the route refuses requests without a partner
	// key (401 UNAUTHORIZED).
	PartnerOnly bool
	// Idempotent is set when the route honours the Idempotency-Key header.
	Idempotent bool
	// AnonymousFree is set when calls without a key count against no bucket.
	AnonymousFree bool
	// HTML is set on routes a buyer's browser opens (the hosted checkout),
	// whose refusals are HTML pages rather than the JSON envelope.
	HTML bool
}

// registered is what Handle recorded of a route, keyed by method and path.
type registered struct{ method, path string }

// Routes lists every route the router matches, sorted by path and method.
// Routes registered through Handle carry their bucket, auth and idempotency;
// any other registration appears with those fields empty.
func (s *Server) Routes() []Route {
	var out []Route
	for method, paths := range s.router.List() {
		for _, p := range paths {
			rt := Route{Method: method, Path: p}
			if info, ok := s.table[registered{method, p}]; ok {
				rt.Bucket = info.bucket.String()
				rt.PartnerOnly = info.auth == authRequired
				rt.Idempotent = info.idempotent
				rt.AnonymousFree = info.anonFree
				rt.HTML = info.html
			}
			out = append(out, rt)
		}
	}
	slices.SortFunc(out, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method))
	})
	return out
}
