// Package httpjson is the plumbing the real upstream adapters share: a
// pooled fasthttp client that exchanges JSON with one upstream under a
// deadline, the validation of an adapter's base URL and timeout, the
// lenient and strict readers of the numbers upstreams send, and the mapping
// of transport failures and HTTP statuses onto the service's error codes.
// Adapters keep only what is particular to their upstream: its paths, its
// authentication header, its wire types and its own error codes.
package httpjson

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Pool limits of the upstream connection pool. A call holds a connection
// for the upstream's whole answer time, so the pool carries at most
// maxConnsPerHost ÷ latency calls a second: 1,024 connections at 200 ms are
// 5,120 calls/s, as many as a network provider's default pool of workers
// (engine.DefaultNetworkPoolSize) can make, so that the connections never
// cap what the workers could do. Idle connections are closed after
// maxIdleConnDuration, so a quiet node keeps few. A caller waits briefly
// for a free connection rather than failing at once (fasthttp answers
// ErrNoFreeConns immediately without MaxConnWaitTimeout).
const (
	maxConnsPerHost     = 1024
	maxConnWaitTimeout  = 500 * time.Millisecond
	maxResponseBodySize = 8 << 20
	maxIdleConnDuration = 30 * time.Second
)

// Config configures a Client. BaseURL and Timeout are the adapter's own
// settings as its caller gave them; the defaults apply when they are zero.
type Config struct {
	BaseURL        string
	DefaultBaseURL string
	Timeout        time.Duration
	DefaultTimeout time.Duration
	// Auth, when not nil, adds the upstream's credentials to each request.
	Auth func(*fasthttp.Request)
	// KeepHeaders names the response headers a Response carries once the
	// fasthttp response has been released, besides the Upstream's
	// RateHeaders, which are always kept; all others are dropped.
	KeepHeaders []string
	// Upstream names the provider in the errors the client returns.
	Upstream Upstream
}

// Client exchanges JSON with one upstream. It is safe for concurrent use.
type Client struct {
	base    string
	timeout time.Duration
	auth    func(*fasthttp.Request)
	keep    []string
	up      Upstream
	hc      *fasthttp.Client
}

// New applies the defaults, checks the base URL and timeout, and builds the
// pooled client. The errors name the offending setting but not the adapter,
// which adds its own prefix.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = cfg.DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: want http(s)://host", cfg.BaseURL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("negative timeout %v", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = cfg.DefaultTimeout
	}
	if cfg.Timeout <= 0 {
		return nil, errors.New("no timeout and no default timeout")
	}
	keep := make([]string, 0, len(cfg.KeepHeaders)+len(cfg.Upstream.RateHeaders))
	for _, h := range cfg.KeepHeaders {
		keep = append(keep, http.CanonicalHeaderKey(h))
	}
	for _, h := range cfg.Upstream.RateHeaders {
		keep = append(keep, http.CanonicalHeaderKey(h.Header))
	}
	return &Client{
		base:    strings.TrimRight(cfg.BaseURL, "/"),
		timeout: cfg.Timeout,
		auth:    cfg.Auth,
		keep:    keep,
		up:      cfg.Upstream,
		hc:      newHTTPClient(cfg.Timeout),
	}, nil
}

// newHTTPClient builds the pooled client. Read and write timeouts bound a
// single exchange even when a caller passes a distant deadline.
func newHTTPClient(timeout time.Duration) *fasthttp.Client {
	return &fasthttp.Client{
		Name:                "swapgate",
		MaxConnsPerHost:     maxConnsPerHost,
		MaxConnWaitTimeout:  maxConnWaitTimeout,
		ReadTimeout:         timeout,
		WriteTimeout:        timeout,
		MaxIdleConnDuration: maxIdleConnDuration,
		MaxResponseBodySize: maxResponseBodySize,
	}
}

// BaseURL is the upstream's base URL without a trailing slash, ready for a
// path to be appended.
func (c *Client) BaseURL() string { return c.base }

// Timeout is the bound of one exchange once the default has been applied.
func (c *Client) Timeout() time.Duration { return c.timeout }

// HeaderAuth sets a header to a secret on each request. It returns nil when
// the secret is empty, so that an unconfigured key sends no header at all.
func HeaderAuth(name, secret string) func(*fasthttp.Request) {
	if secret == "" {
		return nil
	}
	return func(req *fasthttp.Request) { req.Header.Set(name, secret) }
}

// BearerAuth sends a token as "Authorization: Bearer <token>". It returns
// nil when the token is empty, for the same reason as HeaderAuth.
func BearerAuth(token string) func(*fasthttp.Request) {
	if token == "" {
		return nil
	}
	return HeaderAuth("Authorization", "Bearer "+token)
}
