package admin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// Server limits. Admin requests are small and rare; generous timeouts only
// matter for a slow settlement run registered by a later issue.
const (
	maxBodySize  = 64 << 10
	readTimeout  = 10 * time.Second
	writeTimeout = 5 * time.Minute
	idleTimeout  = 30 * time.Second
)

// Server is the loopback admin listener of a running swapgate. Create it with
// New, register extra handlers with Handle, then Start; or call Start (the
// package function) when the partner endpoints are all that is needed.
type Server struct {
	dataDir  string
	token    string
	router   *router.Router
	partners PartnerAdmin

	mu      sync.Mutex
	started bool
	stopped bool
	ln      net.Listener
	srv     *fasthttp.Server
	done    chan struct{}
}

// New prepares an admin server for the store in dataDir with the partner
// endpoints registered. onChange is called with a partner's ID after each
// change, so the caller can invalidate caches.
func New(dataDir string, store PartnerStore, onChange func(partnerID string)) (*Server, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("admin: generate token: %w", err)
	}
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		writeErrorStatus(ctx, fasthttp.StatusNotFound, "NOT_FOUND", "no such admin endpoint")
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		writeErrorStatus(ctx, fasthttp.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "method not allowed")
	}
	s := &Server{
		dataDir:  dataDir,
		token:    hex.EncodeToString(raw[:]),
		router:   r,
		partners: NewLocal(store, onChange),
	}
	s.registerPartnerRoutes()
	return s, nil
}

// Start creates, starts and advertises an admin server with the partner
// endpoints.
func Start(dataDir string, store PartnerStore, onChange func(partnerID string)) (*Server, error) {
	s, err := New(dataDir, store, onChange)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Handle registers h for method and path (fasthttp/router syntax, e.g.
// "/admin/settle/{ecosystem}") behind the same bearer-token check as the
// partner endpoints. It must be called before Start.
func (s *Server) Handle(method, path string, h fasthttp.RequestHandler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("admin: Handle(%s %s) after Start", method, path)
	}
	s.router.Handle(method, path, s.authenticated(h))
	return nil
}

// Start binds a random loopback port, serves, and writes admin.json.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("admin: server already started")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("admin: listen on loopback: %w", err)
	}
	srv := &fasthttp.Server{
		Handler:               s.router.Handler,
		Name:                  "swapgate-admin",
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		MaxRequestBodySize:    maxBodySize,
		NoDefaultServerHeader: true,
		NoDefaultDate:         true,
		Logger:                quietLogger{},
	}
	if err := writeEndpoint(s.dataDir, Endpoint{Addr: ln.Addr().String(), Token: s.token}); err != nil {
		ln.Close()
		return fmt.Errorf("admin: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns once Stop closes the listener
	}()
	s.started, s.ln, s.srv, s.done = true, ln, srv, done
	return nil
}

// Addr returns the listening address, or "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Token returns the bearer token clients must present. It is for tests and
// in-process callers; operators read it from admin.json.
func (s *Server) Token() string { return s.token }

// Stop withdraws admin.json, then shuts the listener down, waiting for
// in-flight requests until ctx ends. It is safe to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()

	// Withdraw the advertisement first so no new CLI call picks a dying
	// listener.
	rmErr := removeEndpoint(s.dataDir, s.token)
	shutErr := s.srv.ShutdownWithContext(ctx)
	// Shutdown is a no-op if Serve had not yet registered the listener;
	// closing it ourselves guarantees Serve returns.
	_ = s.ln.Close()
	select {
	case <-s.done:
	case <-ctx.Done():
		return fmt.Errorf("admin: stop: %w", ctx.Err())
	}
	if shutErr != nil {
		return fmt.Errorf("admin: shutdown: %w", shutErr)
	}
	if rmErr != nil {
		return fmt.Errorf("admin: %w", rmErr)
	}
	return nil
}

// authenticated wraps h with the bearer-token check, compared in constant
// time so response timing leaks nothing about the token.
func (s *Server) authenticated(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	want := []byte("Bearer " + s.token)
	return func(ctx *fasthttp.RequestCtx) {
		got := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeErrorStatus(ctx, fasthttp.StatusUnauthorized, "UNAUTHORIZED", "missing or wrong admin token")
			return
		}
		h(ctx)
	}
}

// quietLogger drops fasthttp's connection-level messages; the admin listener
// has no access log, so no request detail (or key in a response) reaches a
// log.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
