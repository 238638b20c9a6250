package loadgen

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Scenario names the request a worker sends next. Path returns the path and
// query (without the base URL's prefix) of the seq-th request of a run, so
// that a run's request mix is deterministic and spread evenly over workers.
type Scenario interface {
	Name() string
	Path(seq uint64) string
}

// Request is one request of a RequestScenario.
type Request struct {
	// Method is the HTTP method; empty means GET.
	Method string
	// Path is the path and query, as Scenario.Path returns it.
	Path string
	// Body, when not empty, is sent as application/json.
	Body []byte
}

// RequestScenario is a Scenario whose requests are not all plain GETs: the
// requester asks it for the whole request instead of only the path. Path
// must still return the seq-th request's path, for logs and checks.
type RequestScenario interface {
	Scenario
	Request(seq uint64) Request
}

// staticScenario sends the same GET every time.
type staticScenario struct{ name, path string }

func (s staticScenario) Name() string       { return s.name }
func (s staticScenario) Path(uint64) string { return s.path }

// NewStaticScenario returns a scenario called name that sends GET path
// every time.
func NewStaticScenario(name, path string) Scenario { return staticScenario{name, path} }

// postScenario sends the same bodiless POST every time.
type postScenario struct{ name, path string }

func (s postScenario) Name() string       { return s.name }
func (s postScenario) Path(uint64) string { return s.path }
func (s postScenario) Request(uint64) Request {
	return Request{Method: "POST", Path: s.path}
}

// NewPostScenario returns a scenario called name that sends POST path
// without a body every time, such as a webhook's test event.
func NewPostScenario(name, path string) RequestScenario { return postScenario{name, path} }

// QuoteScenario rotates through realistic /v1/quote (or /v1/routes)
// requests, each pair with a handful of amounts, so that caches keyed by
// request see a mix rather than one hot key.
type QuoteScenario struct {
	name  string
	paths []string
}

// Name implements Scenario.
func (q *QuoteScenario) Name() string { return q.name }

// Path implements Scenario.
func (q *QuoteScenario) Path(seq uint64) string { return q.paths[seq%uint64(len(q.paths))] }

// Paths returns every distinct request of the mix, in order, so that a
// caller can check each once before loading them.
func (q *QuoteScenario) Paths() []string { return slices.Clone(q.paths) }

// WithQuery returns the mix with query appended to every request (it
// starts with "&": the paths already have a query).
func (q *QuoteScenario) WithQuery(query string) *QuoteScenario {
	out := &QuoteScenario{name: q.name, paths: make([]string, len(q.paths))}
	for i, p := range q.paths {
		out.paths[i] = p + query
	}
	return out
}

// Kinds of quote pairs: which providers answer and in which shape. Each
// names a part of the mix that NewQuoteMix can select.
const (
	// QuoteEVMToEVM is a bridge or cross-chain swap between EVM chains,
	// which the aggregator answers (Shape A).
	QuoteEVMToEVM = "evm-evm"
	// QuoteEVMToSolana and QuoteSolanaToEVM cross to and from Solana:
	// the intents provider and the aggregator's Wormhole-like bridge race.
	QuoteEVMToSolana = "evm-solana"
	QuoteSolanaToEVM = "solana-evm"
	// QuoteToTON is an intents swap to TON.
	QuoteToTON = "to-ton"
	// QuotePulseInbound is pulseroute's direct inbound variant: USDC on a
	// warp-route chain to USDCh on chain 369 (Shape B).
	QuotePulseInbound = "pulse-inbound"
	// QuotePulseOutbound is pulseroute's direct outbound variant: USDCh on
	// chain 369 to USDC elsewhere (Shape B, fee free).
	QuotePulseOutbound = "pulse-outbound"
	// QuotePulseMultiStep is pulseroute's multi-step inbound variant: any
	// other source token to chain 369 (Shape C).
	QuotePulseMultiStep = "pulse-multi-step"
)

// quotePair is one route of the quote mix; amounts are in the source token's
// smallest unit, each worth more than the $10 the bridges quote at least.
type quotePair struct {
	kind                   string
	fromChain, toChain     int64
	fromToken, toToken     string
	fromAddress, toAddress string
	amounts                []string
}

const (
	benchFromAddress = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	benchSolAddress  = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	usdcArbitrum     = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase         = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	usdcEthereum     = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
	usdcSolana       = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	wethArbitrum     = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	usdchPulse       = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
	evmNative        = "0x0000000000000000000000000000000000000000"
	tonRecipient     = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"

	chainSolana = 1151111081099710
	chainTON    = 900000002
	chainPulse  = 369
)

// quotePairs is the mix over all three providers: same-asset and
// native-to-stable EVM routes (aggregator), both directions to Solana and
// an intents swap to TON (intents, the aggregator racing where it can), and
// each pulseroute variant (direct inbound to 369, outbound from 369,
// multi-step). It is a function, not a variable, so nothing can change it;
// every pair answers 200 in the sandbox (the suite checks each before a
// run).
func quotePairs() []quotePair {
	return []quotePair{
		{QuoteEVMToEVM, 42161, 8453, usdcArbitrum, usdcBase, benchFromAddress, benchFromAddress,
			[]string{"12000000", "25000000", "250000000", "1500000000", "9875432100"}},
		{QuoteEVMToEVM, 1, 8453, evmNative, usdcBase, benchFromAddress, benchFromAddress,
			[]string{"10000000000000000", "50000000000000000", "250000000000000000", "1000000000000000000", "3141592653589793238"}},
		{QuotePulseInbound, 1, chainPulse, usdcEthereum, usdchPulse, benchFromAddress, benchFromAddress,
			[]string{"50000000", "100000000", "750000000", "2000000000", "12345678901"}},
		{QuoteToTON, 1, chainTON, usdcEthereum, "native", benchFromAddress, tonRecipient,
			[]string{"20000000", "150000000", "500000000", "3000000000", "8000000000"}},
		{QuoteEVMToSolana, 1, chainSolana, usdcEthereum, usdcSolana, benchFromAddress, benchSolAddress,
			[]string{"40000000", "120000000", "400000000", "2500000000", "7000000000"}},
		{QuotePulseOutbound, chainPulse, 8453, usdchPulse, usdcBase, benchFromAddress, benchFromAddress,
			[]string{"15000000", "50000000", "120000000", "800000000", "2500000000"}},
		{QuoteSolanaToEVM, chainSolana, 8453, usdcSolana, usdcBase, benchSolAddress, benchFromAddress,
			[]string{"30000000", "90000000", "400000000", "1200000000", "6000000000"}},
		{QuotePulseMultiStep, 42161, chainPulse, wethArbitrum, "native", benchFromAddress, benchFromAddress,
			[]string{"20000000000000000", "50000000000000000", "250000000000000000", "1000000000000000000", "3200000000000000000"}},
	}
}

// QuoteKinds lists every kind of pair in the mix, in mix order.
func QuoteKinds() []string {
	var kinds []string
	for _, p := range quotePairs() {
		if !slices.Contains(kinds, p.kind) {
			kinds = append(kinds, p.kind)
		}
	}
	return kinds
}

// NewQuoteScenario builds the full quote mix, interleaving pairs so that
// consecutive requests hit different providers.
func NewQuoteScenario() *QuoteScenario {
	q, _ := NewQuoteMix("quote", "/v1/quote") // every kind exists: cannot fail
	return q
}

// NewRoutesScenario is the quote mix sent to /v1/routes, which answers
// every candidate route instead of the best one.
func NewRoutesScenario() *QuoteScenario {
	q, _ := NewQuoteMix("routes", "/v1/routes")
	return q
}

// NewQuoteMix builds a mix called name of requests to endpoint (/v1/quote
// or /v1/routes) over the pairs of the given kinds, or of every kind when
// none is given. Pairs are interleaved so that consecutive requests hit
// different providers.
func NewQuoteMix(name, endpoint string, kinds ...string) (*QuoteScenario, error) {
	var pairs []quotePair
	for _, p := range quotePairs() {
		if len(kinds) == 0 || slices.Contains(kinds, p.kind) {
			pairs = append(pairs, p)
		}
	}
	for _, k := range kinds {
		if !slices.Contains(QuoteKinds(), k) {
			return nil, fmt.Errorf("unknown quote kind %q (want one of %v)", k, QuoteKinds())
		}
	}
	q := &QuoteScenario{name: name}
	for i := 0; ; i++ {
		added := false
		for _, p := range pairs {
			if i >= len(p.amounts) {
				continue
			}
			v := url.Values{}
			v.Set("fromChain", strconv.FormatInt(p.fromChain, 10))
			v.Set("toChain", strconv.FormatInt(p.toChain, 10))
			v.Set("fromToken", p.fromToken)
			v.Set("toToken", p.toToken)
			v.Set("fromAmount", p.amounts[i])
			v.Set("fromAddress", p.fromAddress)
			v.Set("toAddress", p.toAddress)
			q.paths = append(q.paths, endpoint+"?"+v.Encode())
			added = true
		}
		if !added {
			return q, nil
		}
	}
}

// Weights of the mixed scenario per cycle of mixedCycle requests: an
// integrator's day is mostly quotes and status polls around a steady trickle
// of reference reads (chains, tokens, gas prices) that fill its pickers.
const (
	mixedChains    = 1
	mixedTokens    = 3
	mixedGasPrices = 2
	mixedQuotes    = 8
	mixedStatus    = 6
	mixedCycle     = mixedChains + mixedTokens + mixedGasPrices + mixedQuotes + mixedStatus
)

// unknownTxHash is a transaction the service does not follow: its status
// poll answers 200 with status NOT_FOUND, as a poll racing POST /v1/execute
// does.
const unknownTxHash = "0x00000000000000000000000000000000000000000000000000000000000b3c00"

// MixedScenario is a weighted mix of an integrator's traffic: reference
// reads, quotes from the quote mix and status polls. Its order is fixed by
// seq, the kinds spread evenly over each cycle.
type MixedScenario struct {
	slots  []string
	counts map[string]int
	lists  map[string][]string
}

// NewMixedScenario builds the mix; its status polls cycle over txHashes
// (swaps reported with POST /v1/execute) and one hash the service does not
// follow.
func NewMixedScenario(txHashes []string) *MixedScenario {
	status := make([]string, 0, len(txHashes)+1)
	for _, h := range append(slices.Clone(txHashes), unknownTxHash) {
		status = append(status, "/v1/status?txHash="+url.QueryEscape(h))
	}
	m := &MixedScenario{
		counts: map[string]int{"chains": mixedChains, "tokens": mixedTokens, "gas": mixedGasPrices, "quote": mixedQuotes, "status": mixedStatus},
		lists: map[string][]string{
			"chains": {"/v1/chains"},
			"tokens": {"/v1/tokens?chains=1", "/v1/tokens?chains=8453", "/v1/tokens?chains=42161", "/v1/tokens?chains=1151111081099710"},
			"gas":    {"/v1/gas-prices?chainId=1", "/v1/gas-prices?chainId=8453", "/v1/gas-prices?chainId=42161,137"},
			"quote":  NewQuoteScenario().paths,
			"status": status,
		},
	}
	m.slots = spread(m.counts, []string{"quote", "status", "tokens", "gas", "chains"})
	return m
}

// spread lays out weights over one cycle so that each kind's slots are as
// evenly spaced as possible (smooth weighted round robin, as nginx balances
// upstreams).
func spread(weights map[string]int, order []string) []string {
	total := 0
	for _, w := range weights {
		total += w
	}
	current := make(map[string]int, len(weights))
	slots := make([]string, 0, total)
	for range total {
		best := ""
		for _, k := range order {
			current[k] += weights[k]
			if best == "" || current[k] > current[best] {
				best = k
			}
		}
		current[best] -= total
		slots = append(slots, best)
	}
	return slots
}

// Name implements Scenario.
func (m *MixedScenario) Name() string { return "mixed" }

// Path implements Scenario.
func (m *MixedScenario) Path(seq uint64) string {
	cycle, pos := seq/uint64(len(m.slots)), seq%uint64(len(m.slots))
	kind := m.slots[pos]
	rank := uint64(0)
	for _, k := range m.slots[:pos] {
		if k == kind {
			rank++
		}
	}
	list := m.lists[kind]
	return list[(cycle*uint64(m.counts[kind])+rank)%uint64(len(list))]
}

// Paths returns every distinct request of the mix once.
func (m *MixedScenario) Paths() []string {
	var out []string
	for _, k := range []string{"chains", "tokens", "gas", "quote", "status"} {
		out = append(out, m.lists[k]...)
	}
	return out
}

// builtin maps each name to its constructor; a function, so that the table
// cannot be changed at run time.
func builtin() map[string]func() Scenario {
	return map[string]func() Scenario{
		"ping":   func() Scenario { return staticScenario{"ping", "/v1/ping"} },
		"tokens": func() Scenario { return staticScenario{"tokens", "/v1/tokens?chains=1"} },
		"chains": func() Scenario { return staticScenario{"chains", "/v1/chains"} },
		"quote":  func() Scenario { return NewQuoteScenario() },
		"routes": func() Scenario { return NewRoutesScenario() },
		"mixed":  func() Scenario { return NewMixedScenario(nil) },
	}
}

// ScenarioNames lists the built-in scenarios, sorted.
func ScenarioNames() []string {
	names := make([]string, 0, 8)
	for n := range builtin() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewScenario returns the built-in scenario called name.
func NewScenario(name string) (Scenario, error) {
	mk, ok := builtin()[name]
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q (want one of %s)", name, strings.Join(ScenarioNames(), ", "))
	}
	return mk(), nil
}
