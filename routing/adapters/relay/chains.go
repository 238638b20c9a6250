package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Chains fetches Relay's chains (GET /chains) and returns the ids of the
// registry's EVM chains among them that Relay has not disabled, sorted:
// the service quotes no other chain, and the adapter speaks Relay's EVM
// side only.
func (c *Client) Chains(ctx context.Context) ([]uint64, error) {
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+"/chains", nil)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, responseError(r)
	}
	var w wireChains
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return nil, upstream.BadAnswer("decode chains: %w", err)
	}
	if w.Chains == nil {
		return nil, upstream.BadAnswer("chains: missing")
	}
	var out []uint64
	for _, ch := range *w.Chains {
		if ch.Disabled || (ch.VMType != "" && ch.VMType != "evm") {
			continue
		}
		id := ch.ID.Uint64()
		if rc, ok := c.reg.Chain(id); ok && rc.ChainType == registry.EVM && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// LoadChains fetches the chains and remembers them for Serves and Tools;
// a failed fetch leaves what was loaded before.
func (c *Client) LoadChains(ctx context.Context) error {
	ids, err := c.Chains(ctx)
	if err != nil {
		return err
	}
	set := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	c.chains.Store(&set)
	return nil
}

// Serves reports whether Relay can carry a swap from one chain to another
// (the two may be one: Relay swaps within a chain too). Until LoadChains
// has run, every EVM chain of the registry is taken as served, so that a
// Relay that could not be asked at start is still raced, its legs failing
// with their reason, rather than silently left out.
func (c *Client) Serves(fromChain, toChain uint64) bool {
	return c.servesChain(fromChain) && c.servesChain(toChain)
}

func (c *Client) servesChain(id uint64) bool {
	if set := c.chains.Load(); set != nil {
		return (*set)[id]
	}
	ch, ok := c.reg.Chain(id)
	return ok && ch.ChainType == registry.EVM
}

// Tools is Relay's one tool for the catalog: a bridge, keyed Tool, on the
// chains it serves (Serves).
func (c *Client) Tools() []tools.Tool {
	var chains []uint64
	for _, ch := range c.reg.Chains() {
		if c.servesChain(ch.ID) {
			chains = append(chains, ch.ID)
		}
	}
	slices.Sort(chains)
	return []tools.Tool{{Key: Tool, Name: ToolName, Type: tools.TypeBridge, Provider: registry.ProviderAggregator,
		SupportedChains: chains}}
}
