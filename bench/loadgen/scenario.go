package loadgen

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// Scenario names the request a worker sends next. Path returns the path and
// query (without the base URL's prefix) of the seq-th request of a run, so
// that a run's request mix is deterministic and spread evenly over workers.
type Scenario interface {
	Name() string
	Path(seq uint64) string
}

// staticScenario sends the same GET every time.
type staticScenario struct{ name, path string }

func (s staticScenario) Name() string       { return s.name }
func (s staticScenario) Path(uint64) string { return s.path }

// QuoteScenario rotates through realistic /v1/quote requests, each pair with
// a handful of amounts, so that caches keyed by request see a mix rather
// than one hot key.
type QuoteScenario struct {
	paths []string
}

// Name implements Scenario.
func (q *QuoteScenario) Name() string { return "quote" }

// Path implements Scenario.
func (q *QuoteScenario) Path(seq uint64) string { return q.paths[seq%uint64(len(q.paths))] }

// quotePair is one route of the quote mix; amounts are in the source token's
// smallest unit, each worth more than the $10 the bridges quote at least.
type quotePair struct {
	fromChain, toChain int64
	fromToken, toToken string
	toAddress          string
	amounts            []string
}

const (
	benchFromAddress = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	usdcArbitrum     = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase         = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	usdcEthereum     = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
	usdchPulse       = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
	evmNative        = "0x0000000000000000000000000000000000000000"
	tonRecipient     = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
)

// quotePairs is the mix: a same-asset bridge through the aggregator, a
// native-to-stable cross-chain swap, the pulseroute inbound to chain 369 and
// an intents swap to TON.
var quotePairs = []quotePair{
	{42161, 8453, usdcArbitrum, usdcBase, benchFromAddress,
		[]string{"12000000", "25000000", "250000000", "1500000000", "9875432100"}},
	{1, 8453, evmNative, usdcBase, benchFromAddress,
		[]string{"10000000000000000", "50000000000000000", "250000000000000000", "1000000000000000000", "3141592653589793238"}},
	{1, 369, usdcEthereum, usdchPulse, benchFromAddress,
		[]string{"50000000", "100000000", "750000000", "2000000000", "12345678901"}},
	{1, 900000002, usdcEthereum, "native", tonRecipient,
		[]string{"20000000", "150000000", "500000000", "3000000000", "8000000000"}},
}

// NewQuoteScenario builds the quote mix, interleaving pairs so that
// consecutive requests hit different providers.
func NewQuoteScenario() *QuoteScenario {
	q := &QuoteScenario{}
	for i := 0; ; i++ {
		added := false
		for _, p := range quotePairs {
			if i >= len(p.amounts) {
				continue
			}
			v := url.Values{}
			v.Set("fromChain", strconv.FormatInt(p.fromChain, 10))
			v.Set("toChain", strconv.FormatInt(p.toChain, 10))
			v.Set("fromToken", p.fromToken)
			v.Set("toToken", p.toToken)
			v.Set("fromAmount", p.amounts[i])
			v.Set("fromAddress", benchFromAddress)
			v.Set("toAddress", p.toAddress)
			q.paths = append(q.paths, "/v1/quote?"+v.Encode())
			added = true
		}
		if !added {
			return q
		}
	}
}

// scenarios maps each name to its constructor.
var scenarios = map[string]func() Scenario{
	"ping":   func() Scenario { return staticScenario{"ping", "/v1/ping"} },
	"tokens": func() Scenario { return staticScenario{"tokens", "/v1/tokens?chains=1"} },
	"chains": func() Scenario { return staticScenario{"chains", "/v1/chains"} },
	"quote":  func() Scenario { return NewQuoteScenario() },
}

// ScenarioNames lists the built-in scenarios, sorted.
func ScenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewScenario returns the built-in scenario called name.
func NewScenario(name string) (Scenario, error) {
	mk, ok := scenarios[name]
	if !ok {
		return nil, fmt.Errorf("unknown scenario %q (want one of %v)", name, ScenarioNames())
	}
	return mk(), nil
}
