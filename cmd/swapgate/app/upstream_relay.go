package app

import (
	"context"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/adapters/relay"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// relayUpstream is Relay (relay.link) as a second upstream of the
// aggregator (--relay-url): on every pair of EVM chains both serve, Relay
// and LI.FI race as legs of the one aggregator provider and the better
// route wins by the request's order, its tool relay. Exact output and
// refundTo go through Relay's own parameters (tradeType EXACT_OUTPUT,
// refundTo), the partner fee as its appFees to --relay-fee-recipient; its
// swaps are followed at Relay's status endpoint by the request id the route
// carries. Its one tool is listed on the chains Relay serves (GET /chains).
// In sandbox mode it replaces the sandbox market's aggregator, or races
// LI.FI's where --aggregator-url is set too.
func relayUpstream() Upstream {
	return Upstream{
		Name:     "relay",
		Provider: registry.ProviderAggregator,
		// Relay's EVM side only, among the aggregator's pairs.
		Serves: func(from, to *registry.Chain) bool { return aggregatorPair(from, to) && bothEVM(from, to) },
		Switch: "--relay-url",
		Settings: []Setting{
			field("relay-url", "Relay API base URL, a second upstream of the aggregator provider raced with LI.FI (empty: none)", SettingURL),
			field("relay-key", "Relay API key, sent as x-api-key (optional)", SettingCredential),
			field("relay-fee-recipient", "EVM address Relay pays partner fees to as app fees (without it, a quote with a partner fee has no Relay route)", SettingEVMAddress),
		},
		On: func(_ string, q QuoteConfig) bool { return q.Upstream["relay-url"] != "" },
		Open: func(o *openEnv) (any, error) {
			q := o.cfg.Upstream
			c, err := relay.New(relay.Config{BaseURL: q["relay-url"], APIKey: q["relay-key"], Timeout: o.cfg.UpstreamTimeout,
				FeeRecipient: q["relay-fee-recipient"]}, o.reg)
			if err != nil {
				return nil, err
			}
			return &relayClient{c: c}, nil
		},
	}
}

// relayClient is the Relay adapter in every role it serves.
type relayClient struct{ c *relay.Client }

// provider loads the chains Relay serves; without them every EVM chain of
// the registry is taken as served, its legs failing with their reason.
func (r *relayClient) provider(ctx context.Context, b *buildEnv) (quote.Provider, error) {
	if err := loadCatalog(ctx, b.cfg.UpstreamTimeout, r.c.LoadChains); err != nil {
		b.cfg.Logger.Warn("relay chain list not loaded; every EVM chain taken as served", "err", err)
	}
	return r.c, nil
}

func (r *relayClient) tools() []tools.Tool             { return r.c.Tools() }
func (r *relayClient) statusSource() tracker.Source    { return r.c }
func (r *relayClient) network() bool                   { return true }
func (r *relayClient) servesPair(from, to uint64) bool { return r.c.Serves(from, to) }

// claims tells Relay's swaps: its tool and the request id its status
// endpoint is asked with (LI.FI names a bridge relay too, without one).
func (r *relayClient) claims(s *swap.Swap) bool { return s.Tool == relay.Tool && s.UpstreamRef != "" }
