// Package registry holds Swapgate's reference data: the chains it routes on and
// the tokens it knows on each, loaded once from data files embedded in the
// binary. The registry is immutable after Load, so every reader may share it
// without locks; prices and gas, which move, live in the refdata caches.
package registry

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ChainType is the family of virtual machine a chain runs, as /v1/chains
// reports it.
type ChainType string

// The chain types: EVM, SVM (Solana), UTXO (Bitcoin), MVM (Sui), and
// INTENTS for every chain reached only through the intents provider.
const (
	EVM     ChainType = "EVM"
	SVM     ChainType = "SVM"
	UTXO    ChainType = "UTXO"
	MVM     ChainType = "MVM"
	Intents ChainType = "INTENTS"
)

// Providers named by the specification.
const (
	ProviderAggregator = "aggregator"
	ProviderIntents    = "intents"
	ProviderPulseroute = "pulseroute"
)

// NativeAddressEVM is the zero address, which stands for the native token on
// EVM chains.
const NativeAddressEVM = "0x0000000000000000000000000000000000000000"

// Native-token addresses outside EVM, as the reference data spells them: the
// Solana system program, the word "bitcoin", Sui's coin type, and the word
// "native" on chains reached only through the intents provider.
const (
	NativeAddressSolana  = "11111111111111111111111111111111"
	NativeAddressBitcoin = "bitcoin"
	NativeAddressSui     = "0x2::sui::SUI"
	NativeAddressWord    = "native"
)

// Chain is one network Swapgate can route on.
type Chain struct {
	ID        uint64    `json:"id"`
	Key       string    `json:"key"`
	Name      string    `json:"name"`
	ChainType ChainType `json:"chainType"`
	// AddressFormat names the address codec for accounts on this chain:
	// evm, solana, bitcoin, sui, near, ton, tron, xrp, doge, stellar, ...
	AddressFormat string `json:"addressFormat"`
	// FeeEcosystem is the fee-wallet ecosystem where a partner fee on a swap
	// from this chain settles: evm, solana, bitcoin, sui or near.
	FeeEcosystem string `json:"feeEcosystem"`
	// IntentsBlockchain is the 1Click blockchain code (eth, arb, ton, ...),
	// empty where the intents provider does not reach the chain.
	IntentsBlockchain string   `json:"intentsBlockchain,omitempty"`
	LogoURI           string   `json:"logoURI"`
	Mainnet           bool     `json:"mainnet"`
	Providers         []string `json:"providers"`
	// BlockTimeMs and BaseFeeGwei seed the sandbox gas oracle.
	BlockTimeMs int     `json:"blockTimeMs"`
	BaseFeeGwei float64 `json:"baseFeeGwei"`
	NativeToken Token   `json:"nativeToken"`
}

// Token is one asset on one chain. PriceUSD here is the reference price the
// sandbox price source starts from; live prices come from the refdata cache.
// LogoURI (and a chain's) in the embedded data names a host nobody runs and
// is never served: answers name the logos the edge draws itself, or a live
// source's image of the token.
type Token struct {
	ChainID  uint64 `json:"chainId"`
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Name     string `json:"name"`
	Decimals uint8  `json:"decimals"`
	LogoURI  string `json:"logoURI"`
	// CoinKey groups the same asset across chains (USDC on Base and on
	// Arbitrum share "USDC"); the sandbox prices by it.
	CoinKey  string `json:"coinKey"`
	PriceUSD string `json:"priceUSD"`
	// ApprovalReset marks an ERC-20 whose approve refuses to change a
	// non-zero allowance to another non-zero one (USDT on Ethereum: its
	// approve reverts unless the current allowance or the new one is
	// zero). A quote's approvals for such a token set the allowance to 0
	// first when it is not already 0, and the sandbox chain's token
	// reverts the same way.
	ApprovalReset bool `json:"approvalReset,omitempty"`
}

// IsNative reports whether the token is its chain's native coin.
// Each of these addresses names a native coin and nothing else, so the
// check needs no chain context.
func (t *Token) IsNative() bool {
	switch t.Address {
	case NativeAddressEVM, NativeAddressSolana, NativeAddressBitcoin, NativeAddressSui:
		return true
	}
	return strings.EqualFold(t.Address, NativeAddressWord)
}

//go:embed data/*.json
var dataFS embed.FS

// Registry is the immutable set of chains and tokens.
type Registry struct {
	chains   []*Chain
	byID     map[uint64]*Chain
	tokens   map[uint64][]*Token
	tokenIdx map[uint64]map[string]*Token // lower-case address → token
	// tokenExact holds addresses as written, so that the common lookup of
	// a correctly cased address needs no lower-case copy.
	tokenExact map[uint64]map[string]*Token
	byIntents  map[string]*Chain // 1Click blockchain code → chain
}

type fileChains struct {
	Chains []*Chain `json:"chains"`
}

type fileTokens struct {
	Tokens map[string][]*Token `json:"tokens"`
}

// Load reads the embedded data files and checks them for consistency.
func Load() (*Registry, error) {
	var fc fileChains
	if err := readJSON("data/chains.json", &fc); err != nil {
		return nil, err
	}
	var ft fileTokens
	if err := readJSON("data/tokens.json", &ft); err != nil {
		return nil, err
	}
	return build(fc.Chains, ft.Tokens)
}

func readJSON(name string, v any) error {
	b, err := dataFS.ReadFile(name)
	if err != nil {
		return fmt.Errorf("registry: read %s: %w", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("registry: decode %s: %w", name, err)
	}
	return nil
}

func build(chains []*Chain, tokens map[string][]*Token) (*Registry, error) {
	r := &Registry{
		byID:       make(map[uint64]*Chain, len(chains)),
		tokens:     make(map[uint64][]*Token, len(chains)),
		tokenIdx:   make(map[uint64]map[string]*Token, len(chains)),
		tokenExact: make(map[uint64]map[string]*Token, len(chains)),
		byIntents:  make(map[string]*Chain, len(chains)),
	}
	// A chain key is shown to clients (/v1/chains) and in messages, so it
	// must name one chain.
	keys := make(map[string]bool, len(chains))
	for _, c := range chains {
		if _, dup := r.byID[c.ID]; dup {
			return nil, fmt.Errorf("registry: duplicate chain id %d", c.ID)
		}
		if keys[c.Key] {
			return nil, fmt.Errorf("registry: duplicate chain key %q", c.Key)
		}
		if c.IntentsBlockchain != "" {
			if _, dup := r.byIntents[c.IntentsBlockchain]; dup {
				return nil, fmt.Errorf("registry: duplicate intents blockchain %q", c.IntentsBlockchain)
			}
			r.byIntents[c.IntentsBlockchain] = c
		}
		c.NativeToken.ChainID = c.ID
		r.byID[c.ID] = c
		keys[c.Key] = true
		r.chains = append(r.chains, c)
		nt := c.NativeToken
		r.tokens[c.ID] = []*Token{&nt}
		r.tokenIdx[c.ID] = map[string]*Token{strings.ToLower(nt.Address): &nt}
		r.tokenExact[c.ID] = map[string]*Token{nt.Address: &nt}
	}
	sort.Slice(r.chains, func(i, j int) bool { return r.chains[i].ID < r.chains[j].ID })
	for idStr, list := range tokens {
		var id uint64
		if _, err := fmt.Sscan(idStr, &id); err != nil {
			return nil, fmt.Errorf("registry: token chain id %q: %w", idStr, err)
		}
		if _, ok := r.byID[id]; !ok {
			return nil, fmt.Errorf("registry: tokens for unknown chain %d", id)
		}
		for _, t := range list {
			t.ChainID = id
			k := strings.ToLower(t.Address)
			if _, dup := r.tokenIdx[id][k]; dup {
				return nil, fmt.Errorf("registry: duplicate token %s on chain %d", t.Address, id)
			}
			r.tokenIdx[id][k] = t
			r.tokenExact[id][t.Address] = t
			r.tokens[id] = append(r.tokens[id], t)
		}
	}
	return r, nil
}

// Chains returns every chain, ordered by id. The slice must not be modified.
func (r *Registry) Chains() []*Chain { return r.chains }

// Chain returns the chain with the given id.
func (r *Registry) Chain(id uint64) (*Chain, bool) {
	c, ok := r.byID[id]
	return c, ok
}

// ChainByIntentsBlockchain returns the chain the intents provider calls by
// the given 1Click blockchain code (eth, arb, ton, ...), so that assets in
// 1Click answers map back to Swapgate chains.
func (r *Registry) ChainByIntentsBlockchain(code string) (*Chain, bool) {
	c, ok := r.byIntents[strings.ToLower(code)]
	return c, ok
}

// Tokens returns the tokens of one chain, native first. The slice must not be
// modified.
func (r *Registry) Tokens(chainID uint64) []*Token { return r.tokens[chainID] }

// Token finds a token by chain and address, case-insensitively; the word
// "native" and the EVM zero address both find the native token.
func (r *Registry) Token(chainID uint64, address string) (*Token, bool) {
	if strings.EqualFold(address, "native") {
		c, ok := r.byID[chainID]
		if !ok {
			return nil, false
		}
		return r.tokens[c.ID][0], true
	}
	if t, ok := r.tokenExact[chainID][address]; ok {
		return t, true
	}
	t, ok := r.tokenIdx[chainID][strings.ToLower(address)]
	return t, ok
}

// TokenBySymbol finds the first token with that symbol on a chain.
func (r *Registry) TokenBySymbol(chainID uint64, symbol string) (*Token, bool) {
	for _, t := range r.tokens[chainID] {
		if strings.EqualFold(t.Symbol, symbol) {
			return t, true
		}
	}
	return nil, false
}
