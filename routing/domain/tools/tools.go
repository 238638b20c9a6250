// Package tools is the catalog of swap and bridge tools Swapgate can route
// through. In sandbox mode the catalog is the embedded set of sandbox venues
// (keys start with "sbx-" so that no one mistakes them for live ones); in
// live mode it is what the configured upstreams list (New); the
// catalog also answers which tools connect two chains, which /v1/connections
// and the quote engine's tool filters rely on.
package tools

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Tool types as /v1/tools reports them.
const (
	TypeBridge  = "bridge"
	TypeDEX     = "dex"
	TypeIntents = "intents"
)

// Tool is one venue. The sandbox market reads FeeBps, DurationSec and
// GasUnits; /v1/tools shows Key, Name, Type and SupportedChains.
type Tool struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	Provider        string   `json:"provider"`
	LogoURI         string   `json:"logoURI"` // never served: the edge draws each tool's logo
	FeeBps          int      `json:"feeBps"`
	DurationSec     int      `json:"durationSec"`
	GasUnits        uint64   `json:"gasUnits"`
	StableOnly      bool     `json:"stableOnly"`
	SupportedChains []uint64 `json:"-"`

	chains map[uint64]bool
}

// Supports reports whether the tool operates on the chain.
func (t *Tool) Supports(chainID uint64) bool { return t.chains[chainID] }

// Connects reports whether the tool can carry value from one chain to
// another: DEXes work within one chain, bridges and intents across two.
func (t *Tool) Connects(from, to uint64) bool {
	if !t.chains[from] || !t.chains[to] {
		return false
	}
	if t.Type == TypeDEX {
		return from == to
	}
	return from != to || t.Type == TypeIntents
}

// Catalog is the immutable set of tools.
type Catalog struct {
	list  []*Tool
	byKey map[string]*Tool
}

//go:embed tools.json
var toolsJSON []byte

type fileTool struct {
	Tool
	Chains []json.RawMessage `json:"chains"`
}

// Load builds the sandbox catalog against the registry. A chain selector is
// a chain id, a chain type ("evm" for every EVM chain, "SVM", "MVM"),
// "intents" (every chain the intents provider reaches) or "pulseroute" (every
// chain that lists the pulseroute provider).
func Load(reg *registry.Registry) (*Catalog, error) {
	var f struct {
		Tools []fileTool `json:"tools"`
	}
	if err := json.Unmarshal(toolsJSON, &f); err != nil {
		return nil, fmt.Errorf("tools: decode catalog: %w", err)
	}
	list := make([]Tool, len(f.Tools))
	for i := range f.Tools {
		t := f.Tools[i].Tool
		chains := make(map[uint64]bool)
		for _, raw := range f.Tools[i].Chains {
			if err := selectChains(reg, raw, chains); err != nil {
				return nil, fmt.Errorf("tools: %s: %w", t.Key, err)
			}
		}
		for id := range chains {
			t.SupportedChains = append(t.SupportedChains, id)
		}
		list[i] = t
	}
	return New(list)
}

// New builds a catalog of the given tools, each with its SupportedChains
// set, in the order given: the live catalog, made of what the configured
// upstreams list. Keys must be unique.
func New(list []Tool) (*Catalog, error) {
	c := &Catalog{byKey: make(map[string]*Tool, len(list))}
	for i := range list {
		t := list[i]
		t.SupportedChains = append([]uint64(nil), t.SupportedChains...)
		sort.Slice(t.SupportedChains, func(i, j int) bool { return t.SupportedChains[i] < t.SupportedChains[j] })
		t.chains = make(map[uint64]bool, len(t.SupportedChains))
		for _, id := range t.SupportedChains {
			t.chains[id] = true
		}
		if _, dup := c.byKey[t.Key]; dup {
			return nil, fmt.Errorf("tools: duplicate key %q", t.Key)
		}
		tp := &t
		c.byKey[t.Key] = tp
		c.list = append(c.list, tp)
	}
	return c, nil
}

func selectChains(reg *registry.Registry, raw json.RawMessage, into map[uint64]bool) error {
	var id uint64
	if err := json.Unmarshal(raw, &id); err == nil {
		if _, ok := reg.Chain(id); !ok {
			return fmt.Errorf("unknown chain %d", id)
		}
		into[id] = true
		return nil
	}
	var sel string
	if err := json.Unmarshal(raw, &sel); err != nil {
		return fmt.Errorf("chain selector %s: %w", raw, err)
	}
	for _, ch := range reg.Chains() {
		var ok bool
		switch sel {
		case "evm":
			ok = ch.ChainType == registry.EVM && ch.ID != 369
		case "intents":
			ok = ch.IntentsBlockchain != ""
		case "pulseroute":
			ok = hasProvider(ch, registry.ProviderPulseroute)
		default:
			ok = string(ch.ChainType) == sel
		}
		if ok {
			into[ch.ID] = true
		}
	}
	return nil
}

func hasProvider(ch *registry.Chain, p string) bool {
	for _, q := range ch.Providers {
		if q == p {
			return true
		}
	}
	return false
}

// All returns every tool in catalog order. The slice must not be modified.
func (c *Catalog) All() []*Tool { return c.list }

// Tool returns the tool with the given key.
func (c *Catalog) Tool(key string) (*Tool, bool) {
	t, ok := c.byKey[key]
	return t, ok
}

// Connecting returns the keys of the tools that connect two chains, in
// catalog order.
func (c *Catalog) Connecting(from, to uint64) []string {
	var keys []string
	for _, t := range c.list {
		if t.Connects(from, to) {
			keys = append(keys, t.Key)
		}
	}
	return keys
}
