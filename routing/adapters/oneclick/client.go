// Package oneclick is the real adapter of the "intents" provider: it speaks
// the NEAR Intents 1Click API (POST /v0/quote, GET /v0/tokens) over a pooled
// fasthttp client, maps 1Click's quote onto quote.Route, and builds the
// deposit transaction an EVM wallet signs to start the swap.
package oneclick

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Name is the provider name the adapter answers to.
const Name = registry.ProviderIntents

// DefaultBaseURL is the public 1Click API.
const DefaultBaseURL = "https://1click.chaindefuser.com"

// defaultTimeout applies when Config.Timeout is zero.
const defaultTimeout = 10 * time.Second

// Config configures the adapter. APIKey is the 1Click JWT; Integrator is
// sent as 1Click's referral tag.
type Config struct {
	BaseURL    string
	APIKey     string
	Timeout    time.Duration
	Integrator string
}

// upstream names 1Click in the errors the adapter builds. Its rate-limit
// errors carry the Retry-After header. It is never modified.
var upstream = httpjson.Upstream{
	Provider:    Name,
	Prefix:      "oneclick",
	Noun:        "the intents upstream",
	RateHeaders: []httpjson.RateHeader{{Header: "Retry-After", Detail: "retryAfter"}},
}

// Client is the 1Click adapter. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	reg  *registry.Registry
	hc   *httpjson.Client
	// assets is the /v0/tokens index once loaded; nil until then, when asset
	// ids are derived by AssetID's rules.
	assets atomic.Pointer[AssetTable]
	// now is the clock used when a request carries no Now.
	now func() time.Time
}

var _ quote.Provider = (*Client)(nil)

// New checks the configuration and builds the client.
func New(cfg Config, reg *registry.Registry) (*Client, error) {
	if reg == nil {
		return nil, errors.New("oneclick: nil registry")
	}
	hc, err := httpjson.New(httpjson.Config{
		BaseURL:        cfg.BaseURL,
		DefaultBaseURL: DefaultBaseURL,
		Timeout:        cfg.Timeout,
		DefaultTimeout: defaultTimeout,
		Auth:           httpjson.BearerAuth(cfg.APIKey),
		Upstream:       upstream,
	})
	if err != nil {
		return nil, fmt.Errorf("oneclick: %w", err)
	}
	return &Client{cfg: cfg, base: hc.BaseURL(), reg: reg, hc: hc, now: time.Now}, nil
}

// Name returns "intents".
func (c *Client) Name() string { return Name }

// Legs returns a single leg: 1Click's solvers compete upstream.
func (c *Client) Legs(*quote.Request) []string { return []string{""} }

// Tokens fetches the assets 1Click supports.
func (c *Client) Tokens(ctx context.Context) ([]TokenInfo, error) {
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+"/v0/tokens", nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var list []TokenInfo
	if err := json.Unmarshal(r.Body, &list); err != nil {
		return nil, upstream.BadAnswer("decode tokens: %w", err)
	}
	return list, nil
}

// LoadAssets fetches /v0/tokens and uses it for asset ids from then on.
func (c *Client) LoadAssets(ctx context.Context) error {
	list, err := c.Tokens(ctx)
	if err != nil {
		return err
	}
	c.SetAssets(NewAssetTable(list))
	return nil
}

// SetAssets installs an asset table (nil returns to derived ids).
func (c *Client) SetAssets(t *AssetTable) { c.assets.Store(t) }
