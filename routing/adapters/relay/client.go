package relay

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Name is the provider name the adapter answers as: Relay is a second
// upstream of the aggregator provider, raced with LI.FI.
const Name = registry.ProviderAggregator

// Tool is the tool key a Relay route names, and ToolName its name: Relay
// fills every order with its own solver, so the upstream is one tool.
const (
	Tool     = "relay"
	ToolName = "Relay"
)

// DefaultBaseURL is Relay's public API; TestnetsBaseURL is its testnets'.
const (
	DefaultBaseURL  = "https://api.relay.link"
	TestnetsBaseURL = "https://api.testnets.relay.link"
)

// defaultTimeout applies when Config.Timeout is zero.
const defaultTimeout = 10 * time.Second

// Config configures the adapter. APIKey, when set, is sent as x-api-key
// (Relay's higher rate limits; /quote/v2 needs none). FeeRecipient is the
// EVM address Relay pays the partner fee to as an app fee: without it a
// fee-bearing request is not quoted (see QuoteLeg).
type Config struct {
	BaseURL      string
	APIKey       string
	Timeout      time.Duration
	FeeRecipient string
}

// upstream names Relay in the errors the adapter builds. It is never
// modified.
var upstream = httpjson.Upstream{
	Provider: Name,
	Prefix:   "relay",
	Noun:     "the Relay upstream",
}

// Client is the Relay adapter. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	reg  *registry.Registry
	hc   *httpjson.Client
	// chains is the set of registry chains Relay serves once LoadChains has
	// run; nil until then (see Serves).
	chains atomic.Pointer[map[uint64]bool]
}

var (
	_ quote.Provider          = (*Client)(nil)
	_ quote.ExactOutputQuoter = (*Client)(nil)
	_ quote.RefundToQuoter    = (*Client)(nil)
)

// New checks the configuration and builds the client. A FeeRecipient must
// be an EVM address (Relay pays app fees on EVM chains).
func New(cfg Config, reg *registry.Registry) (*Client, error) {
	if reg == nil {
		return nil, errors.New("relay: nil registry")
	}
	hc, err := httpjson.New(httpjson.Config{
		BaseURL:        cfg.BaseURL,
		DefaultBaseURL: DefaultBaseURL,
		Timeout:        cfg.Timeout,
		DefaultTimeout: defaultTimeout,
		Auth:           httpjson.HeaderAuth("x-api-key", cfg.APIKey),
		Upstream:       upstream,
	})
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if cfg.FeeRecipient != "" {
		if err := address.Validate("evm", cfg.FeeRecipient); err != nil || cfg.FeeRecipient == registry.NativeAddressEVM {
			return nil, fmt.Errorf("relay: fee recipient %q: want an EVM address other than the zero address", cfg.FeeRecipient)
		}
	}
	return &Client{cfg: cfg, base: hc.BaseURL(), reg: reg, hc: hc}, nil
}

// Name returns "aggregator".
func (c *Client) Name() string { return Name }

// Legs returns a single leg, Tool: Relay's solver is the one tool.
func (c *Client) Legs(*quote.Request) []string { return []string{Tool} }
