package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/internal/uuid"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// Request is what a handler sees of one HTTP request: the fasthttp context
// (valid only until the handler returns), the request id, the authenticated
// partner (nil on the anonymous tier) and the rate-limit decision that
// meta.rateLimit reports.
type Request struct {
	Ctx     *fasthttp.RequestCtx
	ID      [36]byte
	Now     time.Time
	Partner *account.Partner
	Rate    RateResult

	// start is when the handler chain took the request, the origin of its
	// latency metric.
	start time.Time
	// streaming is set by a handler whose answer is a stream written after
	// it returns (quote_stream.go): the stream then records the request's
	// metrics when it ends, rather than the chain when the handler returns.
	streaming bool

	// buf is the envelope under construction, kept across requests by the
	// pool so that answers are built without allocating.
	buf []byte
}

// handlerFunc serves one endpoint. It writes its answer with writeRaw or
// writeJSON, or returns an error, which the wrapper writes as the envelope's
// error (an *apierr.Error keeps its code; anything else is INTERNAL_ERROR).
type handlerFunc func(r *Request) error

// authMode says whether an endpoint needs a partner key.
type authMode uint8

const (
	authOptional authMode = iota
	authRequired
)

// route describes how one endpoint is wrapped.
type route struct {
	bucket Bucket
	auth   authMode
	name   string
	// anonFree exempts calls without a key from the bucket (GET /v1/ping);
	// calls with a key still count.
	anonFree bool
	// idempotent makes the endpoint honour the Idempotency-Key header (see
	// idempotency.go): every POST that creates something declares it.
	idempotent bool
	// html marks a route a person's browser opens (the hosted checkout's
	// pages, checkout_page.go): its refusals, a rate limit or a panic
	// included, are an HTML page with the same status, since a JSON envelope
	// would be unreadable there.
	html bool
}

var requestPool = sync.Pool{New: func() any { return new(Request) }}

// wrap turns a handlerFunc into a fasthttp handler that assigns the request
// id, authenticates, applies the rate limit, recovers panics into a 500
// answer, and records metrics. Refusals are the envelope's error, or an HTML
// page on the routes declared html.
func (s *Server) wrap(rt route, h handlerFunc) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		r := requestPool.Get().(*Request)
		buf := r.buf[:0]
		*r = Request{Ctx: ctx, Now: s.now(), start: time.Now(), buf: buf}
		uuid.NewV4(&r.ID)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in handler", slog.String("requestId", string(r.ID[:])),
					slog.String("route", rt.name), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				s.refuse(r, rt, apierr.New(apierr.Internal, "internal error"))
			}
			if !r.streaming {
				s.metrics.observe(rt.name, ctx.Response.StatusCode(), time.Since(r.start))
			}
			buf := r.buf[:0]
			*r = Request{buf: buf}
			if cap(buf) <= 1<<20 {
				requestPool.Put(r)
			}
		}()
		refusal := s.admit(r, rt)
		// Every answer of a request that counted against a bucket, a
		// refusal or a stream included, carries the decision's headers.
		setRateHeaders(r)
		// Every answer to a browser's /v1 request, a refusal included,
		// carries the CORS headers, so that its page can read it (cors.go).
		setCORSHeaders(r, rt)
		if refusal != nil {
			s.refuse(r, rt, refusal)
			return
		}
		if name, ok := repeatedParam(ctx.QueryArgs()); ok {
			s.refuse(r, rt, apierr.Param(name, "query parameter "+name+" is given more than once; give it once").
				With("reason", "repeated"))
			return
		}
		var err error
		if rt.idempotent {
			err = s.serveIdempotent(r, h)
		} else {
			err = h(r)
		}
		if err != nil {
			var page *pageRefusal
			if rt.html && errors.As(err, &page) {
				s.writeRefusalPage(r, page)
				return
			}
			ae := apierr.From(err)
			s.logFailure(r.ID[:], rt.name, ae)
			s.refuse(r, rt, ae)
		}
	}
}

// logFailure logs a refusal that is the service's fault (a 5xx): the
// client's mistakes are answered, not logged.
func (s *Server) logFailure(requestID []byte, route string, e *apierr.Error) {
	if e.HTTPStatus() >= 500 {
		s.log.Error("request failed", slog.String("requestId", string(requestID)),
			slog.String("route", route), slog.String("code", e.Code), slog.Any("err", e))
	}
}

// refuse writes a refusal: the envelope's error, or on an html route a page
// with the same status.
func (s *Server) refuse(r *Request, rt route, e *apierr.Error) {
	if rt.html {
		s.writeErrorPage(r, e)
		return
	}
	writeError(r, e)
}

// repeatedParam returns the first query parameter given more than once.
// No endpoint takes a parameter twice (lists are comma-separated), and
// reading only the first of two would let a client believe the second one
// counted; so a repeat is refused, whatever its values. Requests carry few
// parameters: they are compared pairwise without allocating, unless there
// are many.
func repeatedParam(args *fasthttp.Args) (string, bool) {
	n := args.Len()
	if n < 2 {
		return "", false
	}
	if n > 16 {
		seen := make(map[string]bool, n)
		for k := range args.All() {
			if seen[string(k)] {
				return string(k), true
			}
			seen[string(k)] = true
		}
		return "", false
	}
	var buf [16][]byte
	keys := buf[:0]
	for k := range args.All() {
		for _, prev := range keys {
			if string(prev) == string(k) {
				return string(k), true
			}
		}
		keys = append(keys, k)
	}
	return "", false
}

// admit authenticates the request and counts it against its bucket.
func (s *Server) admit(r *Request, rt route) *apierr.Error {
	var authErr *apierr.Error
	key := r.Ctx.Request.Header.PeekBytes(headerAPIKey)
	switch {
	case len(key) > 0 && len(r.Ctx.Request.Header.PeekAll("X-API-Key")) > 1:
		// Two keys name two callers: neither is taken.
		authErr = apierr.New(apierr.Unauthorized, "X-API-Key must be given once")
	case len(key) > 0:
		r.Partner, authErr = s.auth.Authenticate(r.Context(), key)
		if authErr == nil && !rt.html {
			// A key sent from a page the partner does not list is refused
			// like a wrong key, and counted as one (cors.go).
			if authErr = checkOrigin(r, r.Partner); authErr != nil {
				r.Partner = nil
			}
		}
	case rt.auth == authRequired:
		authErr = apierr.New(apierr.Unauthorized, "a valid X-API-Key header is required")
	}
	if rt.bucket == BucketNone || (len(key) == 0 && rt.anonFree) {
		return authErr
	}
	// A refused key still counts against its IP's anonymous bucket, so
	// guessing keys is rate-limited like any other anonymous traffic.
	limit, key2 := s.bucketFor(r, rt.bucket)
	var limErr *apierr.Error
	if r.Rate, limErr = s.allow(r, key2, limit); limErr != nil {
		return limErr
	}
	if !r.Rate.Allowed {
		return &apierr.Error{Code: apierr.RateLimit,
			Message: fmt.Sprintf("rate limit exceeded; retry after %d (Unix seconds)", r.Rate.Reset)}
	}
	return authErr
}

// bucketFor returns the limit and the counter key of a request: partners are
// counted per key (per partner id), anonymous clients per IP address.
func (s *Server) bucketFor(r *Request, b Bucket) (int, RateKey) {
	if p := r.Partner; p != nil {
		if b == BucketHeavy {
			return p.HeavyPerMin, RateKey{Bucket: b, Partner: p.ID}
		}
		return p.ReadPerMin, RateKey{Bucket: b, Partner: p.ID}
	}
	key := RateKey{Bucket: b, IP: s.clientIP(r.Ctx)}
	if b == BucketHeavy {
		return s.cfg.AnonHeavyPerMin, key
	}
	return s.cfg.AnonReadPerMin, key
}

// Context is the context a handler passes to stores and services. It is
// not the fasthttp RequestCtx: that one is recycled after the handler
// returns, and its Done races with server shutdown, so nothing may keep or
// derive from it. Handlers that need a deadline add one to this context.
func (r *Request) Context() context.Context { return context.Background() }
