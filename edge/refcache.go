package edge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// RefData is the live part of the reference data: prices and gas, refreshed
// by the per-chain actors. Versions rise only when a value changed (a price
// growing too old to serve counts: it is gone), which is what lets the edge
// serve pre-encoded bytes in between.
type RefData interface {
	Prices(chainID uint64) (prices.Snapshot, bool)
	Gas(chainID uint64) (gas.Record, bool)
	GasVersion(chainID uint64) uint64
}

// refCache holds the encoded forms of the read endpoints' payloads. Static
// payloads (tools, the connection list) are encoded once; price- and
// gas-dependent ones are re-encoded when their version moves.
type refCache struct {
	reg   *registry.Registry
	tools *tools.Catalog
	ref   RefData
	// logos names each answer's logoURI (see logos.go).
	logos logoNamer

	// toolObjects are the tools of GET /v1/tools, each encoded without its
	// closing brace, which the status of the moment follows. They are
	// encoded at the first request, when the public URL their logos name is
	// known.
	toolsOnce   sync.Once
	toolObjects []toolObject
	toolsErr    error
	connections []connection
	connByPair  sync.Map // [2]uint64 (0 = any) → []byte

	tokenArrays map[uint64]*atomic.Pointer[versioned]
	gasRecords  map[uint64]*atomic.Pointer[versioned]
	chainsJSON  atomic.Pointer[versioned]

	// Hits (answered from encoded bytes) and misses (encoded anew) of each
	// kind of answer, for metrics.
	tokenStats, gasStats, chainStats, connStats hitCounter
}

// hitCounter counts a cache's hits and misses.
type hitCounter struct{ hits, misses atomic.Uint64 }

func (h *hitCounter) count(hit bool) {
	if hit {
		h.hits.Add(1)
	} else {
		h.misses.Add(1)
	}
}

type versioned struct {
	version uint64
	b       []byte
}

type tokenJSON struct {
	ChainID  uint64 `json:"chainId"`
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Name     string `json:"name"`
	Decimals uint8  `json:"decimals"`
	LogoURI  string `json:"logoURI"`
	CoinKey  string `json:"coinKey"`
	// PriceUSD is the live price, absent when there is none fresh enough.
	PriceUSD string `json:"priceUSD,omitempty"`
}

type tokenRef struct {
	Address string `json:"address"`
	Symbol  string `json:"symbol"`
}

type connection struct {
	FromChainID uint64     `json:"fromChainId"`
	ToChainID   uint64     `json:"toChainId"`
	FromTokens  []tokenRef `json:"fromTokens"`
	ToTokens    []tokenRef `json:"toTokens"`
	Tools       []string   `json:"tools"`
}

// toolObject is one tool of GET /v1/tools, encoded but for its status.
type toolObject struct {
	provider, key string
	open          []byte
}

type toolJSON struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	LogoURI         string   `json:"logoURI"`
	SupportedChains []uint64 `json:"supportedChains"`
}

// logoNamer gives the logoURI of a token (with the live source's images of
// its chain), a chain and a tool.
type logoNamer interface {
	tokenLogo(t *registry.Token, logos map[string]string) string
	chainLogo(id uint64) string
	toolLogo(key string) string
}

func newRefCache(reg *registry.Registry, cat *tools.Catalog, ref RefData, logos logoNamer) (*refCache, error) {
	c := &refCache{
		reg: reg, tools: cat, ref: ref, logos: logos,
		tokenArrays: make(map[uint64]*atomic.Pointer[versioned]),
		gasRecords:  make(map[uint64]*atomic.Pointer[versioned]),
	}
	refs := make(map[uint64][]tokenRef)
	for _, ch := range reg.Chains() {
		c.tokenArrays[ch.ID] = new(atomic.Pointer[versioned])
		c.gasRecords[ch.ID] = new(atomic.Pointer[versioned])
		for _, t := range reg.Tokens(ch.ID) {
			refs[ch.ID] = append(refs[ch.ID], tokenRef{Address: t.Address, Symbol: t.Symbol})
		}
	}
	for _, from := range reg.Chains() {
		for _, to := range reg.Chains() {
			keys := cat.Connecting(from.ID, to.ID)
			if len(keys) == 0 {
				continue
			}
			c.connections = append(c.connections, connection{
				FromChainID: from.ID, ToChainID: to.ID,
				FromTokens: refs[from.ID], ToTokens: refs[to.ID], Tools: keys,
			})
		}
	}
	return c, nil
}

// toolList returns the tools of GET /v1/tools, encoded at the first call.
func (c *refCache) toolList() ([]toolObject, error) {
	c.toolsOnce.Do(func() {
		for _, t := range c.tools.All() {
			b, err := json.Marshal(toolJSON{Key: t.Key, Name: t.Name, Type: t.Type, LogoURI: c.logos.toolLogo(t.Key), SupportedChains: t.SupportedChains})
			if err != nil {
				c.toolsErr = fmt.Errorf("edge: encode tools: %w", err)
				return
			}
			c.toolObjects = append(c.toolObjects, toolObject{provider: t.Provider, key: t.Key, open: b[:len(b)-1]})
		}
	})
	return c.toolObjects, c.toolsErr
}

// tokenJSON renders one token with its live price, and none (never the
// registry's reference figure) when the snapshot has no fresh one.
func (c *refCache) tokenJSON(t *registry.Token, snap prices.Snapshot) tokenJSON {
	tj := tokenJSON{ChainID: t.ChainID, Address: t.Address, Symbol: t.Symbol, Name: t.Name,
		Decimals: t.Decimals, LogoURI: c.logos.tokenLogo(t, snap.Logos), CoinKey: t.CoinKey}
	if p, ok := snap.ByAddress[lowerASCII(t.Address)]; ok {
		tj.PriceUSD = formatUSD(p)
	}
	return tj
}

// tokenArray returns the encoded token array of one chain at the current
// price version.
func (c *refCache) tokenArray(chainID uint64) ([]byte, error) {
	snap, _ := c.ref.Prices(chainID)
	slot := c.tokenArrays[chainID]
	if v := slot.Load(); v != nil && v.version == snap.Version && v.b != nil {
		c.tokenStats.count(true)
		return v.b, nil
	}
	c.tokenStats.count(false)
	toks := c.reg.Tokens(chainID)
	list := make([]tokenJSON, 0, len(toks))
	for _, t := range toks {
		list = append(list, c.tokenJSON(t, snap))
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("edge: encode tokens of chain %d: %w", chainID, err)
	}
	slot.Store(&versioned{version: snap.Version, b: b})
	return b, nil
}

// gasRecord returns the encoded gas record of one chain, or nil when there
// is none.
func (c *refCache) gasRecord(chainID uint64) ([]byte, error) {
	ver := c.ref.GasVersion(chainID)
	slot := c.gasRecords[chainID]
	if v := slot.Load(); v != nil && v.version == ver && v.b != nil {
		c.gasStats.count(true)
		return v.b, nil
	}
	rec, ok := c.ref.Gas(chainID)
	if !ok {
		return nil, nil // no record to cache: neither a hit nor a miss
	}
	c.gasStats.count(false)
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("edge: encode gas of chain %d: %w", chainID, err)
	}
	slot.Store(&versioned{version: ver, b: b})
	return b, nil
}

type chainJSON struct {
	ID        uint64             `json:"id"`
	Key       string             `json:"key"`
	Name      string             `json:"name"`
	ChainType registry.ChainType `json:"chainType"`
	Coin      string             `json:"coin"`
	LogoURI   string             `json:"logoURI"`
	Mainnet   bool               `json:"mainnet"`
	Providers []string           `json:"providers"`
	Native    tokenJSON          `json:"nativeToken"`
}

// chains returns the encoded chain list; it depends on native-token prices,
// so it is re-encoded when any chain's price version moves (versions only
// rise, so their sum changes exactly when one of them does).
func (c *refCache) chains() ([]byte, error) {
	var sum uint64
	for _, ch := range c.reg.Chains() {
		s, _ := c.ref.Prices(ch.ID)
		sum += s.Version
	}
	if v := c.chainsJSON.Load(); v != nil && v.version == sum {
		c.chainStats.count(true)
		return v.b, nil
	}
	c.chainStats.count(false)
	list := make([]chainJSON, 0, len(c.reg.Chains()))
	for _, ch := range c.reg.Chains() {
		snap, _ := c.ref.Prices(ch.ID)
		list = append(list, chainJSON{ID: ch.ID, Key: ch.Key, Name: ch.Name, ChainType: ch.ChainType,
			Coin: ch.NativeToken.Symbol, LogoURI: c.logos.chainLogo(ch.ID), Mainnet: ch.Mainnet, Providers: ch.Providers,
			Native: c.tokenJSON(c.reg.Tokens(ch.ID)[0], snap)})
	}
	b, err := json.Marshal(map[string]any{"chains": list})
	if err != nil {
		return nil, fmt.Errorf("edge: encode chains: %w", err)
	}
	c.chainsJSON.Store(&versioned{version: sum, b: b})
	return b, nil
}

// cacheStats reports each kind of pre-encoded answer as a cache.
func (c *refCache) cacheStats(visit func(cache string, hits, misses uint64)) {
	for _, k := range []struct {
		name string
		h    *hitCounter
	}{{"ref_tokens", &c.tokenStats}, {"ref_gas", &c.gasStats}, {"ref_chains", &c.chainStats}, {"ref_connections", &c.connStats}} {
		visit(k.name, k.h.hits.Load(), k.h.misses.Load())
	}
}

// formatUSD renders a price with the shortest decimal that round-trips.
func formatUSD(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
