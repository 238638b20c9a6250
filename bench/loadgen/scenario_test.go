package loadgen

import (
	"net/url"
	"strings"
	"testing"
)

func TestNewScenario(t *testing.T) {
	for name, path := range map[string]string{
		"ping":   "/v1/ping",
		"tokens": "/v1/tokens?chains=1",
		"chains": "/v1/chains",
	} {
		s, err := NewScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != name || s.Path(0) != path || s.Path(12345) != path {
			t.Errorf("%s: name %q path %q", name, s.Name(), s.Path(0))
		}
	}
	if _, err := NewScenario("flood"); err == nil || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("unknown scenario: err = %v, want one listing the names", err)
	}
}

func TestQuoteScenarioRotates(t *testing.T) {
	s, err := NewScenario("quote")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	pairs := map[string]bool{}
	n := uint64(len(quotePairs()) * 5)
	for seq := range n {
		p := s.Path(seq)
		u, err := url.Parse(p)
		if err != nil || u.Path != "/v1/quote" {
			t.Fatalf("path %q: %v", p, err)
		}
		q := u.Query()
		for _, k := range []string{"fromChain", "toChain", "fromToken", "toToken", "fromAmount", "fromAddress", "toAddress"} {
			if q.Get(k) == "" {
				t.Fatalf("path %q lacks %s", p, k)
			}
		}
		if from := q.Get("fromAddress"); from != benchFromAddress && !(q.Get("fromChain") == "1151111081099710" && from == benchSolAddress) {
			t.Fatalf("path %q: fromAddress %q", p, q.Get("fromAddress"))
		}
		pair := q.Get("fromChain") + ">" + q.Get("toChain")
		if seq < uint64(len(quotePairs())) && pairs[pair] {
			t.Fatalf("pair %s repeats within the first %d requests", pair, len(quotePairs()))
		}
		pairs[pair] = true
		seen[p] = true
	}
	if len(seen) != int(n) || len(pairs) != len(quotePairs()) {
		t.Fatalf("%d distinct requests over %d pairs, want %d over %d", len(seen), len(pairs), n, len(quotePairs()))
	}
	if s.Path(0) != s.Path(n) {
		t.Fatal("mix does not wrap around")
	}
	ton := s.Path(3)
	if !strings.Contains(ton, "toChain=900000002") || !strings.Contains(ton, "toAddress="+tonRecipient) || !strings.Contains(ton, "toToken=native") {
		t.Fatalf("fourth request is not the TON pair: %s", ton)
	}
}

// TestQuoteMixCoversEveryProviderAndVariant pins the mix's reach: EVM to
// EVM, both ways to Solana, TON, and each pulseroute variant.
func TestQuoteMixCoversEveryProviderAndVariant(t *testing.T) {
	want := []string{QuoteEVMToEVM, QuotePulseInbound, QuoteToTON, QuoteEVMToSolana, QuotePulseOutbound, QuoteSolanaToEVM, QuotePulseMultiStep}
	if got := QuoteKinds(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	sol, err := NewQuoteMix("slow", "/v1/quote", QuoteEVMToSolana, QuoteSolanaToEVM)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Name() != "slow" || len(sol.Paths()) != 10 {
		t.Fatalf("two-kind mix: %q with %d paths", sol.Name(), len(sol.Paths()))
	}
	for _, p := range sol.Paths() {
		if !strings.Contains(p, "1151111081099710") {
			t.Fatalf("path %q is not to or from Solana", p)
		}
	}
	if _, err := NewQuoteMix("x", "/v1/quote", "to-mars"); err == nil {
		t.Fatal("unknown kind accepted")
	}
	r := NewRoutesScenario()
	if r.Name() != "routes" || !strings.HasPrefix(r.Path(0), "/v1/routes?") || len(r.Paths()) != len(NewQuoteScenario().Paths()) {
		t.Fatalf("routes: %q %q", r.Name(), r.Path(0))
	}
}

// TestMixedScenarioWeights checks that one cycle holds each kind as often
// as its weight says, spread out, and that status polls use the given
// hashes plus one the service does not follow.
func TestMixedScenarioWeights(t *testing.T) {
	m := NewMixedScenario([]string{"0xaa", "0xbb"})
	count := map[string]int{}
	statuses := map[string]bool{}
	for seq := range uint64(mixedCycle * 4) {
		p := m.Path(seq)
		switch {
		case strings.HasPrefix(p, "/v1/chains"):
			count["chains"]++
		case strings.HasPrefix(p, "/v1/tokens"):
			count["tokens"]++
		case strings.HasPrefix(p, "/v1/gas-prices"):
			count["gas"]++
		case strings.HasPrefix(p, "/v1/quote"):
			count["quote"]++
		case strings.HasPrefix(p, "/v1/status?txHash="):
			count["status"]++
			statuses[p] = true
		default:
			t.Fatalf("unexpected path %q", p)
		}
	}
	for k, w := range map[string]int{"chains": mixedChains, "tokens": mixedTokens, "gas": mixedGasPrices, "quote": mixedQuotes, "status": mixedStatus} {
		if count[k] != 4*w {
			t.Errorf("%s: %d in four cycles, want %d", k, count[k], 4*w)
		}
	}
	if len(statuses) != 3 || !statuses["/v1/status?txHash="+unknownTxHash] {
		t.Fatalf("status polls: %v", statuses)
	}
	// No kind takes two consecutive slots when its weight allows
	// otherwise: quotes (8 of 20) never run three in a row.
	for i := 2; i < len(m.slots); i++ {
		if m.slots[i] == m.slots[i-1] && m.slots[i] == m.slots[i-2] {
			t.Fatalf("slots bunch up: %v", m.slots)
		}
	}
	if len(m.Paths()) != 1+4+3+len(NewQuoteScenario().Paths())+3 {
		t.Fatalf("paths: %d", len(m.Paths()))
	}
}

func TestPostScenario(t *testing.T) {
	s := NewPostScenario("webhook", "/v1/partner/webhooks/wh_1/test")
	if r := s.Request(7); r.Method != "POST" || r.Path != "/v1/partner/webhooks/wh_1/test" || r.Body != nil || s.Path(7) != r.Path {
		t.Fatalf("request: %+v", r)
	}
}
