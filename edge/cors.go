package edge

import (
	"bytes"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/internal/uuid"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// Browsers (CORS) on /v1. A page on another origin may call every /v1
// endpoint; the rules:
//
//   - A preflight (OPTIONS on a /v1 path) carries no key, so it cannot say
//     whose call follows: it is answered 204 for any origin, with the
//     methods the API uses, the request headers it reads (corsAllowHeaders)
//     and a Max-Age, and counts against no bucket. The real request
//     decides.
//   - Every answer to a /v1 request with an Origin header, refusals
//     included, echoes that origin in Access-Control-Allow-Origin (with
//     Vary: Origin) and exposes the headers the contract documents for
//     clients (corsExposeHeaders), so that a page can read a refusal's
//     code as well as a success. No credentials (cookies) are involved:
//     Access-Control-Allow-Credentials is never sent.
//   - Without a key (the anonymous tier) any origin is served: the page
//     holds no secret and is limited per client IP like any other caller.
//   - With a partner's key, the Origin must be one the partner lists in
//     allowedOrigins (exactly, as the browser sends it); any other is 401
//     UNAUTHORIZED naming the origin, counted, like a refused key, against
//     the client IP's anonymous bucket. A partner that lists no origin has
//     its key refused in every browser: a key in a page is readable by
//     anyone who loads it, so accepting it from pages must be the partner's
//     explicit choice, not a default.
//   - A request without Origin (a backend, curl) is answered exactly as
//     before: no CORS header is added.
//
// Paths outside /v1 (the portal, the checkout, /docs, the operator's
// endpoints) are unchanged: they are this origin's own pages.

// corsAllowMethods are the methods of the /v1 routes.
const corsAllowMethods = "GET, POST, PUT, DELETE"

// corsAllowHeaders are the request headers the API reads that a browser
// does not send on its own: the key, the JSON body's type, the
// Idempotency-Key and the sandbox's scenario.
const corsAllowHeaders = "X-API-Key, Content-Type, " + idempotency.Header + ", " + scenario.Header

// corsExposeHeaders are the response headers the contract documents for
// clients, which a page's script may only read once exposed.
const corsExposeHeaders = "X-Request-Id, Idempotent-Replayed, RateLimit, RateLimit-Policy, Retry-After"

// corsMaxAge is how long a browser may keep a preflight's answer, in
// seconds: two hours, Chromium's own ceiling.
const corsMaxAge = "7200"

var (
	headerOrigin       = []byte("Origin")
	headerVary         = []byte("Vary")
	headerAllowOrigin  = []byte("Access-Control-Allow-Origin")
	headerExpose       = []byte("Access-Control-Expose-Headers")
	headerAllowMethods = []byte("Access-Control-Allow-Methods")
	headerAllowHeaders = []byte("Access-Control-Allow-Headers")
	headerMaxAge       = []byte("Access-Control-Max-Age")
	valueOrigin        = []byte("Origin")
	valueExpose        = []byte(corsExposeHeaders)
	apiPrefix          = []byte("/v1/")
)

// isAPIPath reports whether path is under /v1, where browsers are
// answered.
func isAPIPath(path []byte) bool { return bytes.HasPrefix(path, apiPrefix) }

// browserOrigin is the Origin of a browser's request to a /v1 path, nil
// for any other request.
func browserOrigin(ctx *fasthttp.RequestCtx) []byte {
	if !isAPIPath(ctx.Path()) {
		return nil
	}
	return ctx.Request.Header.PeekBytes(headerOrigin)
}

// setCORSHeaders gives the answer to a browser's /v1 request its CORS
// headers; other requests get none.
func setCORSHeaders(r *Request, rt route) {
	if rt.html {
		return
	}
	origin := browserOrigin(r.Ctx)
	if len(origin) == 0 {
		return
	}
	h := &r.Ctx.Response.Header
	h.SetBytesKV(headerAllowOrigin, origin)
	h.AddBytesKV(headerVary, valueOrigin)
	h.SetBytesKV(headerExpose, valueExpose)
}

// checkOrigin refuses a partner's key sent from a page whose origin the
// partner does not list; nil for any other request.
func checkOrigin(r *Request, p *account.Partner) *apierr.Error {
	origin := browserOrigin(r.Ctx)
	if len(origin) == 0 || p.AllowsOrigin(string(origin)) {
		return nil
	}
	o := string(origin)
	msg := "origin " + o + " is not in this partner's allowedOrigins: a page may send the key only from an origin the partner lists"
	if len(p.AllowedOrigins) == 0 {
		msg = "origin " + o + " is refused: this partner lists no allowedOrigins, so its key is accepted from no web page " +
			"(a key in a page is readable by anyone who loads it); list the page's origin in the portal or ask the operator"
	}
	return apierr.New(apierr.Unauthorized, msg).With("origin", o).With("reason", "origin_not_allowed")
}

// serveHTTP answers a /v1 preflight itself and hands every other request
// to the router.
func (s *Server) serveHTTP(ctx *fasthttp.RequestCtx) {
	if ctx.IsOptions() && isAPIPath(ctx.Path()) {
		s.corsPreflight(ctx)
		return
	}
	s.router.Handler(ctx)
}

// corsPreflight answers OPTIONS on a /v1 path: 204 for any origin (see the
// rules above), no body.
func (s *Server) corsPreflight(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	var id [36]byte
	uuid.NewV4(&id)
	h := &ctx.Response.Header
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	h.SetBytesKV(headerRequestID, id[:])
	if origin := ctx.Request.Header.PeekBytes(headerOrigin); len(origin) > 0 {
		h.SetBytesKV(headerAllowOrigin, origin)
	}
	h.SetBytesK(headerAllowMethods, corsAllowMethods)
	h.SetBytesK(headerAllowHeaders, corsAllowHeaders)
	h.SetBytesK(headerMaxAge, corsMaxAge)
	h.Set("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	s.metrics.observe("preflight", fasthttp.StatusNoContent, time.Since(start))
}
