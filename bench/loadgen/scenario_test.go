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
	n := uint64(len(quotePairs) * 5)
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
		if q.Get("fromAddress") != benchFromAddress {
			t.Fatalf("path %q: fromAddress %q", p, q.Get("fromAddress"))
		}
		pair := q.Get("fromChain") + ">" + q.Get("toChain")
		if seq < uint64(len(quotePairs)) && pairs[pair] {
			t.Fatalf("pair %s repeats within the first %d requests", pair, len(quotePairs))
		}
		pairs[pair] = true
		seen[p] = true
	}
	if len(seen) != int(n) || len(pairs) != len(quotePairs) {
		t.Fatalf("%d distinct requests over %d pairs, want %d over %d", len(seen), len(pairs), n, len(quotePairs))
	}
	if s.Path(0) != s.Path(n) {
		t.Fatal("mix does not wrap around")
	}
	ton := s.Path(3)
	if !strings.Contains(ton, "toChain=900000002") || !strings.Contains(ton, "toAddress="+tonRecipient) || !strings.Contains(ton, "toToken=native") {
		t.Fatalf("fourth request is not the TON pair: %s", ton)
	}
}
