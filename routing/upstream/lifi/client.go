// Package lifi is the real adapter of the "aggregator" provider: it speaks
// the LI.FI REST API (GET /v1/quote, /v1/tools, /v1/tokens) over a pooled
// fasthttp client and maps LI.FI's step answer onto quote.Route, and its
// error bodies onto the service's error codes.
package lifi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/quote"
	"github.com/swapgate/swapgate/routing/registry"
)

// Name is the provider name the adapter answers to.
const Name = registry.ProviderAggregator

// DefaultBaseURL is LI.FI's public API.
const DefaultBaseURL = "https://li.quest"

// defaultTimeout applies when Config.Timeout is zero.
const defaultTimeout = 10 * time.Second

// Config configures the adapter. Integrator is LI.FI's integrator string; it
// is required by LI.FI for the partner fee to be collected.
type Config struct {
	BaseURL    string
	APIKey     string
	Timeout    time.Duration
	Integrator string
}

// Client is the LI.FI adapter. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	reg  *registry.Registry
	hc   *fasthttp.Client
	// kinds maps LI.FI tool keys to TypeBridge or TypeDEX once LoadTools has
	// run; nil until then, when tool filters go to both kinds.
	kinds atomic.Pointer[map[string]string]
}

var _ quote.Provider = (*Client)(nil)

// New checks the configuration and builds the client.
func New(cfg Config, reg *registry.Registry) (*Client, error) {
	if reg == nil {
		return nil, errors.New("lifi: nil registry")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("lifi: base URL %q: want http(s)://host", cfg.BaseURL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("lifi: negative timeout %v", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultTimeout
	}
	return &Client{
		cfg:  cfg,
		base: strings.TrimRight(cfg.BaseURL, "/"),
		reg:  reg,
		hc:   newHTTPClient(cfg.Timeout),
	}, nil
}

// Name returns "aggregator".
func (c *Client) Name() string { return Name }

// Legs returns a single leg: LI.FI picks the tool itself.
func (c *Client) Legs(*quote.Request) []string { return []string{""} }
