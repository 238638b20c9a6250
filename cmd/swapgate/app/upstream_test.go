package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// TestUpstreamsEligibilityIsTheSpecificationsTable: the eligibility loop
// over the declared upstreams names, for every pair of the registry's
// chains, the providers the specification's table names (quote.Providers),
// in its order.
func TestUpstreamsEligibilityIsTheSpecificationsTable(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	e := eligibility(Upstreams())
	for _, from := range reg.Chains() {
		for _, to := range reg.Chains() {
			req := &quote.Request{From: from, To: to}
			if got, want := e.providers(req), quote.Providers(req); !slices.Equal(got, want) {
				t.Errorf("%d → %d: eligible %v, the table says %v", from.ID, to.ID, got, want)
			}
		}
	}
}

// TestOpenUpstreams: which upstreams a configuration turns on, in list
// order: in sandbox mode the sandbox market's providers stand in for every
// provider no configured upstream answers as; in live mode only what is
// configured runs.
func TestOpenUpstreams(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	pulse := map[uint64]string{369: "http://127.0.0.1:1"}
	tests := []struct {
		name string
		mode string
		cfg  QuoteConfig
		want []string
	}{
		{"sandbox", ModeSandbox, QuoteConfig{}, []string{"sandbox-aggregator", "sandbox-intents", "sandbox-pulseroute"}},
		{"sandbox with LI.FI", ModeSandbox, QuoteConfig{AggregatorURL: "http://127.0.0.1:1"},
			[]string{"lifi", "sandbox-intents", "sandbox-pulseroute"}},
		{"sandbox with 1Click and nodes", ModeSandbox, QuoteConfig{IntentsURL: "http://127.0.0.1:1", PulseRPC: pulse},
			[]string{"oneclick", "sandbox-aggregator", "sandbox-pulseroute"}},
		{"live with LI.FI", ModeLive, QuoteConfig{AggregatorURL: "http://127.0.0.1:1"}, []string{"lifi"}},
		{"live with everything", ModeLive, QuoteConfig{AggregatorURL: "http://127.0.0.1:1", IntentsURL: "http://127.0.0.1:2", PulseRPC: pulse},
			[]string{"lifi", "oneclick", "pulseroute"}},
		{"sandbox with Relay", ModeSandbox, QuoteConfig{Upstream: map[string]string{"relay-url": "http://127.0.0.1:3"}},
			[]string{"relay", "sandbox-intents", "sandbox-pulseroute"}},
		{"live with LI.FI and Relay", ModeLive, QuoteConfig{AggregatorURL: "http://127.0.0.1:1", Upstream: map[string]string{"relay-url": "http://127.0.0.1:3"}},
			[]string{"lifi", "relay"}},
		{"live with Relay alone", ModeLive, QuoteConfig{Upstream: map[string]string{"relay-url": "http://127.0.0.1:3"}}, []string{"relay"}},
		{"live with a node of another chain", ModeLive, QuoteConfig{PulseRPC: map[uint64]string{42161: "http://127.0.0.1:1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups, err := openUpstreams(tt.mode, tt.cfg, reg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range ups {
				got = append(got, u.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("opened %v, want %v", got, tt.want)
			}
			live := CheckLiveUpstreams(&Config{Mode: ModeLive, Quote: tt.cfg})
			if tt.mode == ModeLive && (live == nil) != (len(tt.want) > 0) {
				t.Fatalf("CheckLiveUpstreams = %v with %v opened", live, got)
			}
		})
	}
	if err := CheckLiveUpstreams(&Config{Mode: ModeLive}); !errors.Is(err, ErrNoLiveUpstream) ||
		!strings.Contains(err.Error(), "--aggregator-url") || !strings.Contains(err.Error(), "--pulse-rpc 369=URL") {
		t.Fatalf("CheckLiveUpstreams without upstreams = %v", err)
	}
}

// fakeProvider answers one route per leg, its tool the leg's name or its
// own, and records the legs it was asked.
type fakeProvider struct {
	name, tool string
	legs       []string
	exactOut   string
	asked      []string
}

func (f *fakeProvider) Name() string                                 { return f.name }
func (f *fakeProvider) Legs(*quote.Request) []string                 { return f.legs }
func (f *fakeProvider) ExactOutputUnsupported(*quote.Request) string { return f.exactOut }
func (f *fakeProvider) QuoteLeg(_ context.Context, _ *quote.Request, leg string) (*quote.Route, error) {
	f.asked = append(f.asked, leg)
	tool := leg
	if tool == "" {
		tool = f.tool
	}
	return &quote.Route{Provider: f.name, Tool: tool}, nil
}

// TestRacedProviderLegs: upstreams answering as one provider race as legs
// of it, one per upstream serving the pair and able to quote it as asked,
// each leg quoted by its own upstream.
func TestRacedProviderLegs(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	arb, _ := reg.Chain(42161)
	base, _ := reg.Chain(8453)
	sol, ok := reg.Chain(1151111081099710)
	if !ok {
		t.Fatal("no Solana in the registry")
	}
	evmOnly := func(from, to *registry.Chain) bool { return bothEVM(from, to) }
	tests := []struct {
		name     string
		req      *quote.Request
		relayOut string
		wantLegs []string
		wantWhy  string
	}{
		{"both serve", &quote.Request{From: arb, To: base}, "", []string{"lifi", "relay"}, ""},
		{"only LI.FI serves", &quote.Request{From: arb, To: sol}, "", []string{"lifi"}, ""},
		{"exact output only Relay sizes", &quote.Request{From: arb, To: base, ToAmount: big.NewInt(1)}, "", []string{"lifi", "relay"}, ""},
		{"exact output neither sizes", &quote.Request{From: arb, To: base, ToAmount: big.NewInt(1)}, "relay cannot", []string{"lifi", "relay"}, "lifi cannot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			li := &fakeProvider{name: "aggregator", tool: "across", legs: []string{""}, exactOut: "lifi cannot"}
			re := &fakeProvider{name: "aggregator", tool: "relay", legs: []string{""}, exactOut: tt.relayOut}
			r := &raced{name: "aggregator", members: []member{
				{up: opened{Upstream: Upstream{Name: "lifi", Serves: aggregatorPair}}, p: li},
				{up: opened{Upstream: Upstream{Name: "relay", Serves: evmOnly}}, p: re},
			}}
			legs := r.Legs(tt.req)
			if !slices.Equal(legs, tt.wantLegs) {
				t.Fatalf("legs %v, want %v", legs, tt.wantLegs)
			}
			if why := r.ExactOutputUnsupported(tt.req); why != tt.wantWhy {
				t.Fatalf("ExactOutputUnsupported %q, want %q", why, tt.wantWhy)
			}
			for _, leg := range legs {
				route, err := r.QuoteLeg(context.Background(), tt.req, leg)
				var nr *quote.NoRoute
				if errors.As(err, &nr) {
					// A member that cannot quote the request as asked
					// answers its reason at once, unasked.
					if nr.Reason != quote.ReasonExactOutputUnsupported || nr.Tool != leg || !strings.Contains(nr.Message, leg+" cannot") {
						t.Fatalf("leg %s: %+v", leg, nr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"lifi": "across", "relay": "relay"}[leg]
				if route.Tool != want || route.Provider != "aggregator" {
					t.Fatalf("leg %s answered %s/%s", leg, route.Provider, route.Tool)
				}
			}
			if _, err := r.QuoteLeg(context.Background(), tt.req, "nope"); err == nil {
				t.Fatal("an unknown leg was quoted")
			}
			if tt.req.ExactOutput() && tt.relayOut == "" && (len(li.asked) != 0 || len(re.asked) != 1) {
				t.Fatalf("LI.FI asked %v, Relay %v: only Relay sizes the output", li.asked, re.asked)
			}
		})
	}
}

// fakeStatus is an upstream client observing swaps, claiming those of its
// tool when claim is set.
type fakeStatus struct {
	name, claim string
}

func (f *fakeStatus) statusSource() tracker.Source { return f }
func (f *fakeStatus) SwapStatus(context.Context, *swap.Swap) (swap.Observation, error) {
	return swap.Observation{Status: f.name}, nil
}

type claimingStatus struct{ fakeStatus }

func (c *claimingStatus) claims(s *swap.Swap) bool { return s.Tool == c.claim }

// TestStatusOfSharedProvider: a provider's swaps are observed at the
// upstream that claims them (Relay's by its tool), the rest at the one that
// claims none (LI.FI); a provider with one upstream observes at it.
func TestStatusOfSharedProvider(t *testing.T) {
	lifiSrc := &fakeStatus{name: "lifi"}
	relaySrc := &claimingStatus{fakeStatus{name: "relay", claim: "relay"}}
	routed := statusOf([]opened{{client: lifiSrc}, {client: relaySrc}})
	alone := statusOf([]opened{{client: lifiSrc}})
	tests := []struct {
		src  tracker.Source
		tool string
		want string
	}{
		{routed, "relay", "relay"},
		{routed, "across", "lifi"},
		{routed, "", "lifi"},
		{alone, "relay", "lifi"},
	}
	for _, tt := range tests {
		obs, err := tt.src.SwapStatus(context.Background(), &swap.Swap{Provider: "aggregator", Tool: tt.tool})
		if err != nil || obs.Status != tt.want {
			t.Errorf("tool %q: observed at %q (%v), want %q", tt.tool, obs.Status, err, tt.want)
		}
	}
}

// fakeUpstream is an opened upstream's client offering what its fields
// say: a provider, tools, status, the network.
type fakeUpstream struct {
	p       quote.Provider
	toolKey string
	status  bool
	net     bool
}

func (f *fakeUpstream) provider(context.Context, *buildEnv) (quote.Provider, error) { return f.p, nil }
func (f *fakeUpstream) tools() []tools.Tool {
	return []tools.Tool{{Key: f.toolKey, Name: f.toolKey, Type: tools.TypeBridge, Provider: registry.ProviderAggregator}}
}
func (f *fakeUpstream) network() bool { return f.net }

type fakeStatusUpstream struct {
	fakeUpstream
	fakeStatus
}

// TestBuildProvidersLoop: the build loop makes one provider per provider
// name, in the declared providers' order: an upstream alone as itself,
// several racing as legs of one (their legs counted apart); a nil provider
// is none; the catalog is what they list, a key listed twice kept by the
// first; the network providers and status sources are those their
// upstreams offer.
func TestBuildProvidersLoop(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	agg := func(name, tool string, status, net bool) opened {
		u := Upstream{Name: name, Provider: registry.ProviderAggregator, Serves: aggregatorPair}
		f := fakeUpstream{p: &fakeProvider{name: registry.ProviderAggregator, tool: tool, legs: []string{""}}, toolKey: tool, net: net}
		if status {
			return opened{Upstream: u, client: &fakeStatusUpstream{fakeUpstream: f, fakeStatus: fakeStatus{name: name}}}
		}
		return opened{Upstream: u, client: &f}
	}
	intents := opened{Upstream: Upstream{Name: "intents", Provider: registry.ProviderIntents, Serves: intentsPair},
		client: &fakeUpstream{p: &fakeProvider{name: registry.ProviderIntents, legs: []string{""}}, toolKey: "near"}}
	none := opened{Upstream: Upstream{Name: "none", Provider: registry.ProviderPulseroute, Serves: pulseroutePair},
		client: &fakeUpstream{toolKey: "nothing"}}
	tests := []struct {
		name        string
		ups         []opened
		wantNames   []string
		wantRaced   []string
		wantTools   []string
		wantNetwork []string
		wantStatus  []string
	}{
		{"one upstream", []opened{agg("lifi", "across", true, true)},
			[]string{"aggregator"}, nil, []string{"across"}, []string{"aggregator"}, []string{"aggregator"}},
		{"two racing, intents before them", []opened{intents, agg("lifi", "across", true, true), agg("relay", "relay", true, false)},
			[]string{"aggregator", "intents"}, []string{"lifi", "relay"}, []string{"near", "across", "relay"}, []string{"aggregator"}, []string{"aggregator"}},
		{"a key listed twice, a provider that is none", []opened{agg("lifi", "relay", false, false), agg("relay", "relay", false, false), none},
			[]string{"aggregator"}, []string{"lifi", "relay"}, []string{"relay"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs := &quoteStack{statusSources: map[string]tracker.Source{}}
			cfg := QuoteConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			ps, err := buildProviders(context.Background(), ModeLive, cfg, nil, reg, nil, nil, qs, tt.ups)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name())
			}
			if !slices.Equal(names, tt.wantNames) {
				t.Fatalf("providers %v, want %v", names, tt.wantNames)
			}
			if got := legNames(ps)[registry.ProviderAggregator]; !slices.Equal(got, tt.wantRaced) {
				t.Fatalf("raced legs %v, want %v", got, tt.wantRaced)
			}
			var keys []string
			for _, tl := range qs.catalog.All() {
				keys = append(keys, tl.Key)
			}
			if !slices.Equal(keys, tt.wantTools) {
				t.Fatalf("catalog %v, want %v", keys, tt.wantTools)
			}
			if !slices.Equal(qs.network, tt.wantNetwork) {
				t.Fatalf("network %v, want %v", qs.network, tt.wantNetwork)
			}
			var status []string
			for name := range qs.statusSources {
				status = append(status, name)
			}
			if !slices.Equal(status, tt.wantStatus) {
				t.Fatalf("status sources %v, want %v", status, tt.wantStatus)
			}
		})
	}
}
