package sandbox

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

type legsCase struct {
	Name      string   `json:"name"`
	Provider  string   `json:"provider"`
	From      uint64   `json:"from"`
	FromToken string   `json:"fromToken"`
	To        uint64   `json:"to"`
	ToToken   string   `json:"toToken"`
	Allow     []string `json:"allow"`
	Deny      []string `json:"deny"`
	Want      []string `json:"want"`
}

func set(keys []string) map[string]bool {
	if keys == nil {
		return nil
	}
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func TestLegs(t *testing.T) {
	raw, err := os.ReadFile("testdata/legs.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []legsCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	f := loadFixture(t)
	m := f.market(t, Config{})
	providers := map[string]quote.Provider{"aggregator": m.Aggregator(), "intents": m.Intents()}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := f.req(t, c.From, c.FromToken, c.To, c.ToToken, "100")
			r.AllowTools, r.DenyTools = set(c.Allow), set(c.Deny)
			p := providers[c.Provider]
			if p.Name() != c.Provider {
				t.Fatalf("Name() = %q", p.Name())
			}
			got := p.Legs(r)
			if !slices.Equal(got, c.Want) && !(len(got) == 0 && len(c.Want) == 0) {
				t.Errorf("Legs = %v, want %v", got, c.Want)
			}
		})
	}
}
