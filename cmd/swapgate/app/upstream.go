package app

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// Upstream is one upstream the service can quote through, declared once,
// in a file of its own (upstream_<name>.go): its name, the provider it
// answers as, the pairs it serves, its settings and how its client is
// made. What the client offers beyond quotes (tools, prices, swap status,
// deposits, step 1 of a multi-step quote) it says by implementing the
// small interfaces below, which the composition root asks for by type
// assertion. Eligibility, building, prices and status sources are each one
// loop over Upstreams.
type Upstream struct {
	// Name names the upstream: its legs in a race where it shares its
	// provider with others, and the refusals of its client.
	Name string
	// Provider is the provider it answers as (registry.Provider…): the
	// answer's provider, the engine's pool, the tracker's source.
	Provider string
	// Serves reports whether it quotes pairs from → to. A request's
	// eligible providers are those of every declared upstream that serves
	// its pair, configured or not: a provider without a running upstream
	// is then reported not configured.
	Serves func(from, to *registry.Chain) bool
	// Settings are its serve options (each a flag, a SWAPGATE_ variable
	// and a config-file key), which serve's one validation table checks.
	Settings []Setting
	// Switch is how an operator turns it on in live mode, for the refusal
	// of a live start with none (ErrNoLiveUpstream); "" for a fallback.
	Switch string
	// Fallback marks the sandbox market's providers: they run in sandbox
	// mode only, each for a provider that no configured upstream answers
	// as, and never in live mode.
	Fallback bool
	// On reports whether the configuration turns it on in mode (ignored
	// for a fallback).
	On func(mode string, q QuoteConfig) bool
	// Open makes its client from the configuration without calling it; the
	// client is made once per start and serves every role it offers.
	Open func(o *openEnv) (any, error)
}

// Setting is one serve option of an upstream. Its value lives in the quote
// configuration: a field of QuoteConfig for the upstreams that had one
// before upstreams were declared, QuoteConfig.Upstream otherwise.
type Setting struct {
	Flag, Usage string
	Kind        SettingKind
	Get         func(q *QuoteConfig) string
	Set         func(q *QuoteConfig, v string)
}

// SettingKind is how serve's validation table checks a setting.
type SettingKind int

const (
	// SettingURL is empty or an absolute http(s) URL.
	SettingURL SettingKind = iota
	// SettingCredential is an opaque credential: any value.
	SettingCredential
	// SettingEVMAddress is empty or a 0x-prefixed EVM address other than
	// the zero address (a recipient).
	SettingEVMAddress
)

// field is a Setting kept in QuoteConfig.Upstream under its flag.
func field(flag, usage string, kind SettingKind) Setting {
	return Setting{Flag: flag, Usage: usage, Kind: kind,
		Get: func(q *QuoteConfig) string { return q.Upstream[flag] },
		Set: func(q *QuoteConfig, v string) {
			if q.Upstream == nil {
				q.Upstream = map[string]string{}
			}
			q.Upstream[flag] = v
		}}
}

// Upstreams is the service's list of upstreams, in the order their
// providers race and their prices layer (the first listing a token prices
// it). Adding an upstream is adding its declaration here.
func Upstreams() []Upstream {
	return []Upstream{
		lifiUpstream(),
		relayUpstream(),
		oneClickUpstream(),
		pulserouteUpstream(),
		sandboxUpstream(registry.ProviderAggregator),
		sandboxUpstream(registry.ProviderIntents),
		sandboxUpstream(registry.ProviderPulseroute),
	}
}

// ProviderNames are the providers the declared upstreams answer as, in
// their order.
func ProviderNames() []string {
	var out []string
	for _, u := range Upstreams() {
		if !contains(out, u.Provider) {
			out = append(out, u.Provider)
		}
	}
	return out
}

// The optional roles of an opened upstream's client.
type (
	// providerMaker is an upstream that quotes: it makes the provider the
	// engine races, calling the network where it must (a tool list), from
	// what the rest of the stack offers (b). A nil provider is none.
	providerMaker interface {
		provider(ctx context.Context, b *buildEnv) (quote.Provider, error)
	}
	// toolOffer lists the upstream's tools for live mode's catalog, once
	// its provider is made.
	toolOffer interface{ tools() []tools.Tool }
	// priceOffer is a USD price source of live mode's reference data.
	priceOffer interface {
		priceSource(now func() time.Time) prices.Source
	}
	// statusOffer observes the swaps executed on its routes.
	statusOffer interface{ statusSource() tracker.Source }
	// swapClaimer tells its swaps from those of the other upstreams of its
	// provider; the provider's one upstream without it observes the rest.
	swapClaimer interface{ claims(s *swap.Swap) bool }
	// depositOffer is told of deposits to its deposit addresses.
	depositOffer interface {
		depositNotifier() edge.DepositNotifier
	}
	// stepOneOffer quotes step 1 of live multi-step pulseroute quotes.
	stepOneOffer interface {
		stepOne() pulseroute.Aggregator
	}
	// pairOffer narrows the pairs it serves to what the upstream itself
	// says at start (the chains it lists), within Serves.
	pairOffer interface{ servesPair(from, to uint64) bool }
	// networkOffer says whether its legs wait on the network (the engine
	// sizes the provider's pool for the network's latency).
	networkOffer interface{ network() bool }
)

// openEnv is what an upstream's client is made from.
type openEnv struct {
	mode string
	cfg  QuoteConfig
	reg  *registry.Registry
}

// buildEnv is what the upstreams' providers are made from: the reference
// data, the sandbox's catalog in sandbox mode, and what upstreams built
// earlier in the list offer to those after them (step 1 of a multi-step
// quote).
type buildEnv struct {
	mode      string
	cfg       QuoteConfig
	evmRPC    map[uint64]string
	reg       *registry.Registry
	ref       *refdata.Service
	contracts *pulseroute.Contracts
	qs        *quoteStack
	// stepOne is the first built upstream offering step 1 of multi-step
	// quotes, nil when none does.
	stepOne pulseroute.Aggregator
	// market is the sandbox market the fallbacks share, made by the first
	// that needs it.
	market *sandbox.Market
}

// price and gasPrice are the reference data's USD prices and gas, as the
// providers that price legs themselves read them.
func (b *buildEnv) price(chainID uint64, token string) (float64, bool) {
	return b.ref.Price(chainID, token)
}
func (b *buildEnv) gasPrice() func(uint64) (*big.Int, bool) {
	return newGasPrices(b.ref, b.reg).price
}

// opened is an upstream turned on by the configuration, with its client.
type opened struct {
	Upstream
	client any
}

// openUpstreams makes the client of every upstream the configuration turns
// on, in list order: in sandbox mode, the fallbacks of the providers no
// configured upstream answers as.
func openUpstreams(mode string, cfg QuoteConfig, reg *registry.Registry) ([]opened, error) {
	list := Upstreams()
	covered := map[string]bool{}
	var on []Upstream
	for _, u := range list {
		if !u.Fallback && u.On(mode, cfg) {
			on = append(on, u)
			covered[u.Provider] = true
		}
	}
	if mode != ModeLive {
		for _, u := range list {
			if u.Fallback && !covered[u.Provider] {
				on = append(on, u)
			}
		}
	}
	env := &openEnv{mode: mode, cfg: cfg, reg: reg}
	out := make([]opened, 0, len(on))
	for _, u := range on {
		c, err := u.Open(env)
		if err != nil {
			return nil, fmt.Errorf("app: %s upstream: %w", u.Name, err)
		}
		out = append(out, opened{Upstream: u, client: c})
	}
	return out, nil
}

// liveUpstreamSwitches is how an operator turns on an upstream in live
// mode, as the refusal of a live start with none says.
func liveUpstreamSwitches() string {
	var sw []string
	for _, u := range Upstreams() {
		if u.Switch != "" {
			sw = append(sw, u.Switch)
		}
	}
	if len(sw) < 2 {
		return strings.Join(sw, "")
	}
	return strings.Join(sw[:len(sw)-1], ", ") + " or " + sw[len(sw)-1]
}

// ErrNoLiveUpstream refuses live mode without a single upstream: it would
// answer every quote NO_ROUTE_FOUND.
var ErrNoLiveUpstream = errors.New("live mode quotes only through configured upstreams and none is configured: " +
	"set " + liveUpstreamSwitches())

// CheckLiveUpstreams refuses a live configuration that turns on no
// upstream.
func CheckLiveUpstreams(c *Config) error {
	if c.Mode != ModeLive {
		return nil
	}
	for _, u := range Upstreams() {
		if !u.Fallback && u.On(ModeLive, c.Quote) {
			return nil
		}
	}
	return ErrNoLiveUpstream
}

// eligibility is a request's eligible providers: those of every declared
// upstream that serves its pair, in list order, whether the configuration
// turns them on or not (the quoter reports an eligible provider that does
// not run as not configured).
type eligibility []Upstream

func (e eligibility) providers(req *quote.Request) []string {
	out := make([]string, 0, 3)
	for _, u := range e {
		if u.Serves(req.From, req.To) && !contains(out, u.Provider) {
			out = append(out, u.Provider)
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// The pairs of the providers as the specification's table gives them:
// anything touching chain 369 goes to pulseroute alone; EVM to EVM to the
// aggregator alone; otherwise every provider both chains list (the
// aggregator and intents race for EVM↔Solana, for example; Bitcoin and the
// intents-only chains leave intents alone).
func pulseroutePair(from, to *registry.Chain) bool {
	return from.ID == quote.PulseChainID || to.ID == quote.PulseChainID
}

func bothEVM(from, to *registry.Chain) bool {
	return from.ChainType == registry.EVM && to.ChainType == registry.EVM
}

func bothList(provider string) func(from, to *registry.Chain) bool {
	return func(from, to *registry.Chain) bool {
		return contains(from.Providers, provider) && contains(to.Providers, provider)
	}
}

func aggregatorPair(from, to *registry.Chain) bool {
	return !pulseroutePair(from, to) && (bothEVM(from, to) || bothList(registry.ProviderAggregator)(from, to))
}

func intentsPair(from, to *registry.Chain) bool {
	return !pulseroutePair(from, to) && !bothEVM(from, to) && bothList(registry.ProviderIntents)(from, to)
}
