package lifi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Tool kinds as Tools reports them (the words of /v1/tools in Swapgate).
const (
	TypeBridge = "bridge"
	TypeDEX    = "dex"
)

// Tool is one LI.FI bridge or exchange.
type Tool struct {
	Key             string
	Name            string
	Type            string // TypeBridge or TypeDEX
	LogoURI         string
	SupportedChains []uint64
}

// Tools fetches LI.FI's bridges and exchanges. A bridge's supported chains
// are every chain it leaves from or arrives at, sorted.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+"/v1/tools", nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var wt wireTools
	if err := json.Unmarshal(r.Body, &wt); err != nil {
		return nil, upstream.BadAnswer("decode tools: %w", err)
	}
	out := make([]Tool, 0, len(wt.Bridges)+len(wt.Exchanges))
	for _, b := range wt.Bridges {
		seen := map[uint64]bool{}
		for _, p := range b.SupportedChains {
			seen[p.FromChainID], seen[p.ToChainID] = true, true
		}
		out = append(out, Tool{Key: b.Key, Name: b.Name, Type: TypeBridge, LogoURI: b.LogoURI, SupportedChains: sortedKeys(seen)})
	}
	for _, e := range wt.Exchanges {
		seen := map[uint64]bool{}
		for _, id := range e.SupportedChains {
			if v := id.Uint64(); v != 0 {
				seen[v] = true
			}
		}
		out = append(out, Tool{Key: e.Key, Name: e.Name, Type: TypeDEX, LogoURI: e.LogoURI, SupportedChains: sortedKeys(seen)})
	}
	return out, nil
}

// LoadTools fetches the tools and remembers which keys are bridges and
// which exchanges, so that tool filters go to the right LI.FI parameter.
func (c *Client) LoadTools(ctx context.Context) error {
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	c.SetTools(tools)
	return nil
}

// SetTools installs a tool list (as Tools returns it) for classifying tool
// filters.
func (c *Client) SetTools(tools []Tool) {
	kinds := make(map[string]string, len(tools))
	for _, t := range tools {
		kinds[t.Key] = t.Type
	}
	c.kinds.Store(&kinds)
}

// Tokens fetches LI.FI's tokens of the given chains (all chains when none
// are given), keyed by chain id.
func (c *Client) Tokens(ctx context.Context, chains []uint64) (map[uint64][]registry.Token, error) {
	uri := c.base + "/v1/tokens"
	if len(chains) > 0 {
		ids := make([]string, len(chains))
		for i, id := range chains {
			ids[i] = strconv.FormatUint(id, 10)
		}
		uri += "?" + url.Values{"chains": {strings.Join(ids, ",")}}.Encode()
	}
	r, err := c.hc.Do(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var wt wireTokens
	if err := json.Unmarshal(r.Body, &wt); err != nil {
		return nil, upstream.BadAnswer("decode tokens: %w", err)
	}
	out := make(map[uint64][]registry.Token, len(wt.Tokens))
	for key, list := range wt.Tokens {
		id, err := strconv.ParseUint(key, 10, 64)
		if err != nil {
			return nil, upstream.BadAnswer("tokens: chain key %q: %w", key, err)
		}
		toks := make([]registry.Token, 0, len(list))
		for _, t := range list {
			toks = append(toks, registry.Token{ChainID: id, Address: t.Address, Symbol: t.Symbol,
				Name: t.Name, Decimals: t.Decimals, LogoURI: t.LogoURI, CoinKey: t.CoinKey,
				PriceUSD: string(t.PriceUSD)})
		}
		out[id] = toks
	}
	return out, nil
}

func sortedKeys(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		if k != 0 {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
