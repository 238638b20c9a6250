// Package lifi is the real adapter of the "aggregator" provider: it speaks
// the LI.FI REST API (GET /v1/quote, /v1/tools, /v1/tokens) over a pooled
// fasthttp client and maps LI.FI's step answer onto quote.Route, and its
// error bodies onto the service's error codes.
package lifi

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
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

// upstream names LI.FI in the errors the adapter builds. Its rate-limit
// errors carry LI.FI's ratelimit-* headers. It is never modified.
var upstream = httpjson.Upstream{
	Provider: Name,
	Prefix:   "lifi",
	Noun:     "the aggregator upstream",
	RateHeaders: []httpjson.RateHeader{
		{Header: "ratelimit-limit", Detail: "rateLimit"},
		{Header: "ratelimit-remaining", Detail: "rateRemaining"},
		{Header: "ratelimit-reset", Detail: "rateReset"},
	},
}

// Client is the LI.FI adapter. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	reg  *registry.Registry
	hc   *httpjson.Client
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
	hc, err := httpjson.New(httpjson.Config{
		BaseURL:        cfg.BaseURL,
		DefaultBaseURL: DefaultBaseURL,
		Timeout:        cfg.Timeout,
		DefaultTimeout: defaultTimeout,
		Auth:           httpjson.HeaderAuth("x-lifi-api-key", cfg.APIKey),
		Upstream:       upstream,
	})
	if err != nil {
		return nil, fmt.Errorf("lifi: %w", err)
	}
	return &Client{cfg: cfg, base: hc.BaseURL(), reg: reg, hc: hc}, nil
}

// Name returns "aggregator".
func (c *Client) Name() string { return Name }

// Legs returns a single leg: LI.FI picks the tool itself.
func (c *Client) Legs(*quote.Request) []string { return []string{""} }
