// Package edge is Swapgate's HTTP face: a fasthttp server and router that
// parses requests into typed values, authenticates partners, applies rate
// limits, calls the engine, and writes every answer through one envelope
// writer. It knows HTTP and nothing about providers.
package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/internal/uuid"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// MaxBodySize is the largest request body accepted: 64 KiB; a larger one
// is refused with INVALID_BODY.
const MaxBodySize = 64 << 10

// MaxHeaderSize bounds a request's line and headers together: 8 KiB, twice
// fasthttp's default, room for any client of this API (an API key, an
// Idempotency-Key, a forwarded-for chain) and no more. It is the size of
// the connection's read buffer, which is what bounds them in fasthttp;
// larger headers are refused with INVALID_PARAMS naming "headers" and the connection
// closed.
const MaxHeaderSize = 8 << 10

// Version is the API description version reported by /v1/ping.
const Version = "1.0.0"

// Config holds the edge's tunables.
type Config struct {
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// AnonHeavyPerMin and AnonReadPerMin are the anonymous tier's limits per
	// client IP; partners carry their own.
	AnonHeavyPerMin int
	AnonReadPerMin  int
	TrustedProxies  []netip.Prefix
	// Mode is reported by /v1/ping: "sandbox" or "live".
	Mode string
	// IdempotencyWait is how long a request waits for another one with the
	// same Idempotency-Key before it is refused as in progress.
	IdempotencyWait time.Duration
	// AuthCacheSize bounds the partners cached by API key digest (see
	// authenticator); 0 means DefaultAuthCacheSize.
	AuthCacheSize int
	// UsageFlushInterval is how often partners' hourly usage counts go to
	// Deps.Usage; 0 means DefaultUsageFlushInterval.
	UsageFlushInterval time.Duration
	// StatusStream tunes GET /v1/status/stream (status_stream.go); zero
	// fields take their defaults.
	StatusStream StatusStreamConfig
}

// DefaultConfig returns the anonymous tier's limits per client IP and
// sensible timeouts.
func DefaultConfig() Config {
	return Config{
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
		IdleTimeout:     60 * time.Second,
		AnonHeavyPerMin: account.AnonymousHeavyPerMin,
		AnonReadPerMin:  account.AnonymousReadPerMin,
		Mode:            "sandbox",
		IdempotencyWait: DefaultIdempotencyWait,
		AuthCacheSize:   DefaultAuthCacheSize,
	}
}

// Deps are the collaborators the edge calls.
type Deps struct {
	Registry *registry.Registry
	Tools    *tools.Catalog
	RefData  RefData
	Partners PartnerFinder
	// Accounts serves the partner account endpoints; nil leaves them out.
	Accounts AccountStore
	// Quotes is the quote engine; nil leaves /v1/quote and /v1/routes out.
	Quotes QuoteService
	// QuoteStream races a quote streaming its candidates, for
	// /v1/quote/stream; nil (or a nil Quotes) leaves that route out.
	QuoteStream QuoteStreamer
	// ToolHealth gives each tool's status in GET /v1/tools (its breaker's
	// word); nil shows every tool ok.
	ToolHealth ToolHealth
	// Tickets and Swaps serve /v1/execute and /v1/status; nil leaves them
	// out.
	Tickets QuoteTickets
	Swaps   SwapTracker
	// QuoteSwaps answers GET /v1/status?quoteId=, RetainedTickets tells
	// its NOT_FOUND reasons apart, and SourceTxs lets GET /v1/status
	// with fromChain find and track a transaction broadcast without
	// execute; nil leaves each out (quoteId and fromChain are then
	// refused, naming them). QuoteRetention is how long past its expiry
	// an issued quote is kept for them (--quote-retention).
	QuoteSwaps      QuoteSwaps
	RetainedTickets RetainedTickets
	SourceTxs       SourceTxs
	QuoteRetention  time.Duration
	// Repricer checks the price of a quote at execute; nil executes
	// without a check.
	Repricer QuoteRepricer
	// Inbound registers multi-step deposits; nil leaves the inbound
	// receiver endpoints out.
	Inbound InboundDeposits
	// DepositQuotes and DepositSwaps serve the intents deposit endpoints;
	// nil leaves them out.
	DepositQuotes DepositQuotes
	DepositSwaps  DepositSwaps
	// Onramp serves the on-ramp endpoints and checkout pages; nil leaves
	// them out.
	Onramp OnrampDesk
	// ProviderWebhook, given with a live on-ramp provider, receives the
	// provider's webhooks; the provider then hosts the checkout, so the
	// sandbox's checkout pages are not served.
	ProviderWebhook *ProviderWebhookRoute
	// Balances serves GET /v1/balances; nil leaves it out.
	Balances BalanceReader
	// Wallets reads a quote's pre-flight checks (preflight.go); nil: every
	// quote from an EVM source answers checks null with checksError.
	Wallets WalletReader
	// DepositNotifier, when set, is told of every submitted deposit.
	DepositNotifier DepositNotifier
	// Webhooks serves the webhook endpoints; nil leaves them out.
	Webhooks *WebhookService
	// Sandbox is the sandbox chain: given (sandbox mode), the sandbox
	// endpoints and GET /v1/balances are served; nil leaves them out.
	Sandbox SandboxChain
	// SandboxNode is the sandbox chains' JSON-RPC nodes and base-fee knob
	// (sandbox mode); nil: POST /rpc/{chainId} and POST
	// /v1/sandbox/gas do not exist.
	SandboxNode SandboxNode
	// Cluster, when the node is a cluster member, is reported by
	// GET /v1/ping; nil for a single node.
	Cluster ClusterView
	// Portal serves the partner portal at /portal (portal.go); nil leaves
	// it out.
	Portal *PortalService
	// Mailbox serves GET /v1/sandbox/mailbox (sandbox mode without SMTP);
	// nil leaves it out.
	Mailbox SandboxMailbox
	// Idempotency remembers the answers of the routes declared idempotent;
	// it is required as soon as one of them is served.
	Idempotency IdempotencyStore
	// PartnerLimiter, in a cluster, counts partners' requests across the
	// nodes (partnerlimit.go); nil counts them in this node's memory.
	PartnerLimiter PartnerLimiter
	// IdempotencyClaims, in a cluster, makes one request per
	// Idempotency-Key act across the nodes (idempotency_claims.go); nil
	// decides it in this process's memory.
	IdempotencyClaims IdempotencyClaims
	// Usage keeps partners' hourly request counts, for
	// GET /v1/partner/usage; nil leaves that route out and counts nothing.
	Usage UsageStore
	// Ready reports whether the store is open and the actors are running.
	Ready  func() error
	Logger *slog.Logger
	// Metrics is the registry /metrics exposes; nil makes a private one.
	Metrics *prometheus.Registry
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PublicURL is the service's address as users' browsers reach it, the
	// base of the logoURI of tokens, chains and tools (served under
	// /logos/); nil names them by path alone. It is read when an answer is
	// first encoded, after the listener is up.
	PublicURL func() string
}

// Server is the HTTP edge.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	now     func() time.Time
	limiter *Limiter
	auth    *authenticator
	metrics *metrics
	srv     *fasthttp.Server
	router  *router.Router
	ref     *refCache
	logos   *logoSet
	flights flights
	// checkout holds the checkout page's templates and assets; nil when no
	// on-ramp is served.
	checkout *checkoutPages
	// portal holds the portal's pages and sign-in limits; nil when no
	// portal is served.
	portal *portalState
	// routeErr is the first route registered without what it needs.
	routeErr error
	// table keeps how each route registered through Handle is wrapped, for
	// Routes.
	table map[registered]route
	// document is the API document served at /v1/openapi.json.
	document []byte
	// usage flushes and reads partners' usage counts; nil without
	// Deps.Usage.
	usage *usageBook
	// closing is closed when Shutdown starts: long streams end on it
	// rather than hold the shutdown.
	closing     chan struct{}
	closingOnce sync.Once
}

// New builds the server and its routes.
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Registry == nil || deps.Tools == nil || deps.RefData == nil || deps.Partners == nil {
		return nil, fmt.Errorf("edge: registry, tools, refdata and partners are required")
	}
	s := &Server{
		cfg:     cfg,
		deps:    deps,
		log:     deps.Logger,
		now:     deps.Now,
		limiter: NewLimiter(),
		auth:    &authenticator{finder: deps.Partners, max: int64(cfg.AuthCacheSize)},
		closing: make(chan struct{}),
	}
	if s.auth.max <= 0 {
		s.auth.max = DefaultAuthCacheSize
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if deps.Metrics == nil {
		deps.Metrics = prometheus.NewRegistry()
		s.deps.Metrics = deps.Metrics
	}
	var err error
	if s.metrics, err = newMetrics(deps.Metrics); err != nil {
		return nil, err
	}
	if err = deps.Metrics.Register(limiterCollector{s.limiter}); err != nil {
		return nil, fmt.Errorf("edge: register rate-limit metrics: %w", err)
	}
	s.logos = newLogoSet(deps.Registry, deps.Tools)
	if s.ref, err = newRefCache(deps.Registry, deps.Tools, deps.RefData, serverLogos{s}); err != nil {
		return nil, err
	}
	if s.document, err = openapiDocument(); err != nil {
		return nil, err
	}
	if s.cfg.IdempotencyWait <= 0 {
		s.cfg.IdempotencyWait = DefaultIdempotencyWait
	}
	s.cfg.StatusStream = s.cfg.StatusStream.withDefaults()
	s.router = router.New()
	// A path that matches a route only without its trailing slash, in
	// another case or once cleaned (/v1//ping, /v1/x/../ping) is not that
	// route: it is answered NOT_FOUND in the envelope like any unknown path,
	// not redirected with an empty 301 or 308.
	s.router.RedirectTrailingSlash = false
	s.router.RedirectFixedPath = false
	s.routes()
	if s.routeErr != nil {
		return nil, s.routeErr
	}
	notFound := func(r *Request) error {
		return apierr.New(apierr.NotFound, "no such path: "+string(r.Ctx.Path()))
	}
	notAllowed := func(r *Request) error {
		return apierr.New(apierr.MethodNotAllowed, "method "+string(r.Ctx.Method())+" not allowed on "+string(r.Ctx.Path()))
	}
	s.router.NotFound = s.pagesOr(s.wrap(route{name: "not_found"}, notFound), s.wrap(route{name: "not_found", html: true}, notFound))
	s.router.MethodNotAllowed = s.pagesOr(s.wrap(route{name: "method_not_allowed"}, notAllowed),
		s.wrap(route{name: "method_not_allowed", html: true}, notAllowed))
	s.router.HandleOPTIONS = false
	s.srv = &fasthttp.Server{
		Handler:               s.serveHTTP,
		Name:                  "swapgate",
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		MaxRequestBodySize:    MaxBodySize,
		ReadBufferSize:        MaxHeaderSize,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		ErrorHandler:          s.transportError,
		CloseOnShutdown:       true,
		Logger:                slogPrintf{s.log},
	}
	if deps.Usage != nil {
		// Counting starts once every route is in place, with its flusher.
		s.limiter.countsUsage = true
		s.usage = newUsageBook(deps.Usage, s.limiter, s.log, cfg.UsageFlushInterval)
	}
	return s, nil
}

// routes registers every endpoint. Later issues add theirs through Handle.
func (s *Server) routes() {
	s.Handle("GET", "/healthz", route{name: "healthz"}, s.healthz)
	s.Handle("GET", "/readyz", route{name: "readyz"}, s.readyz)
	s.router.GET("/metrics", s.metrics.handler(s.deps.Metrics))

	s.Handle("GET", "/v1/ping", route{bucket: BucketRead, name: "ping", anonFree: true}, s.ping)
	s.Handle("GET", "/v1/openapi.json", route{bucket: BucketRead, name: "openapi"}, s.openapi)
	s.docsRoutes()
	s.Handle("GET", "/v1/chains", route{bucket: BucketRead, name: "chains"}, s.chains)
	s.Handle("GET", "/v1/tokens", route{bucket: BucketRead, name: "tokens"}, s.tokens)
	s.Handle("GET", "/v1/connections", route{bucket: BucketRead, name: "connections"}, s.connections)
	s.Handle("GET", "/v1/tools", route{bucket: BucketRead, name: "tools"}, s.tools)
	s.Handle("GET", "/v1/gas-prices", route{bucket: BucketRead, name: "gas-prices"}, s.gasPrices)
	s.Handle("GET", "/v1/partner/me", route{bucket: BucketRead, auth: authRequired, name: "partner-me"}, s.partnerMe)
	if s.deps.Usage != nil {
		s.Handle("GET", "/v1/partner/usage", route{bucket: BucketRead, auth: authRequired, name: "partner-usage"}, s.partnerUsage)
	}
	s.logoRoutes()
	if s.deps.Accounts != nil {
		s.accountRoutes()
	}
	if s.deps.Quotes != nil {
		s.quoteRoutes()
	}
	if s.deps.Webhooks != nil {
		s.webhookRoutes()
	}
	if s.deps.Inbound != nil {
		s.inboundRoutes()
	}
	if s.deps.Tickets != nil && s.deps.Swaps != nil {
		s.executionRoutes()
		if s.deps.DepositQuotes != nil && s.deps.DepositSwaps != nil {
			s.depositRoutes()
		}
	}
	if s.deps.Onramp != nil {
		s.onrampRoutes()
	}
	if s.deps.ProviderWebhook != nil {
		s.providerWebhookRoutes(s.deps.ProviderWebhook)
	}
	if s.deps.Sandbox != nil {
		s.sandboxRoutes()
	}
	if s.deps.SandboxNode != nil {
		s.sandboxNodeRoutes()
	}
	if s.deps.Portal != nil {
		s.portalRoutes()
	}
	if s.deps.Mailbox != nil {
		s.Handle("GET", "/v1/sandbox/mailbox", route{bucket: BucketRead, name: "sandbox-mailbox"}, s.sandboxMailbox)
	}
	if s.deps.Balances != nil {
		s.Handle("GET", "/v1/balances", route{bucket: BucketRead, name: "balances"}, s.balances)
	}
}

// Handle registers an endpoint with its bucket and auth mode. An
// idempotent route needs Deps.Idempotency; without it New fails rather than
// serve a route whose Idempotency-Key would be ignored.
func (s *Server) Handle(method, path string, rt route, h handlerFunc) {
	if rt.idempotent && s.deps.Idempotency == nil && s.routeErr == nil {
		s.routeErr = fmt.Errorf("edge: %s %s is idempotent but no idempotency store was given", method, path)
	}
	if s.table == nil {
		s.table = make(map[registered]route)
	}
	s.table[registered{method, path}] = rt
	s.router.Handle(method, path, s.wrap(rt, h))
}

// InvalidatePartner drops cached partner data after an operator change.
func (s *Server) InvalidatePartner(id string) { s.auth.Invalidate(id) }

// Serve serves on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// Shutdown stops accepting connections, ends the status streams (each with
// its done event), waits for in-flight requests to finish, or for ctx to
// end, then stores the usage counts not flushed yet.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closingOnce.Do(func() { close(s.closing) })
	err := s.srv.ShutdownWithContext(ctx)
	if s.usage != nil {
		if uerr := s.usage.close(ctx); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	if s.portal != nil {
		s.portal.issuing.Wait() // bounded by issueCodeTimeout
	}
	return err
}

// transportError answers requests fasthttp refused before routing in the
// envelope, and fasthttp closes the connection after it: a body over the
// limit is INVALID_BODY; a request line and headers over MaxHeaderSize are
// INVALID_PARAMS naming "headers" (the URL and the headers are the
// request's parameters, and the contract has no code of its own for a head
// too long), with that code's 400; a request not received within the read timeout, as a
// slow client's or a slow-loris's, is TIMEOUT with 408; anything else (a
// malformed request) INVALID_BODY.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	r := &Request{Ctx: ctx, Now: s.now()}
	uuid.NewV4(&r.ID)
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case err == fasthttp.ErrBodyTooLarge:
		writeError(r, apierr.New(apierr.InvalidBody, fmt.Sprintf("request body exceeds %d bytes", MaxBodySize)))
	case errors.As(err, &small):
		writeError(r, apierr.Param("headers", fmt.Sprintf("the request line and headers exceed %d bytes: shorten the URL or a header", MaxHeaderSize)).
			With("reason", "too_large").With("limit", MaxHeaderSize).Wrap(err))
	case errors.As(err, &netErr) && netErr.Timeout():
		e := apierr.New(apierr.Timeout, fmt.Sprintf("request not received within %s", s.cfg.ReadTimeout))
		e.Status = fasthttp.StatusRequestTimeout
		writeError(r, e)
	default:
		writeError(r, apierr.New(apierr.InvalidBody, "malformed request").Wrap(err))
	}
}

type slogPrintf struct{ l *slog.Logger }

func (p slogPrintf) Printf(format string, args ...any) { p.l.Debug(fmt.Sprintf(format, args...)) }

// Handler is the full handler chain (router, auth, limits, envelope), for
// benchmarks that drive it without sockets.
func (s *Server) Handler() fasthttp.RequestHandler { return s.srv.Handler }
