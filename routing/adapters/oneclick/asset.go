package oneclick

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// ErrUnknownAsset is wrapped when a token has no derivable 1Click asset id.
var ErrUnknownAsset = errors.New("oneclick: no 1Click asset id for token")

// AssetID derives the 1Click asset id of a registry token from the chain's
// 1Click blockchain code, following the naming of the omft bridge tokens
// that 1Click lists at /v0/tokens:
//
//   - native coins are "nep141:<blockchain>.omft.near" (ETH on Ethereum is
//     "nep141:eth.omft.near", BTC "nep141:btc.omft.near", SOL
//     "nep141:sol.omft.near"), except NEAR, whose native coin trades as
//     wrapped NEAR, "nep141:wrap.near";
//   - tokens on NEAR are their own NEP-141 contracts, "nep141:<contract>";
//   - ERC-20 tokens on EVM chains are "nep141:<blockchain>-<lowercase
//     address>.omft.near" ("nep141:arb-0xaf88…5831.omft.near").
//
// Tokens on other chains (SPL, Jettons, TRC-20, Move coins) are bridged
// under ids that cannot be derived from their address; they need the
// /v0/tokens list (see AssetTable) and AssetID refuses them.
func AssetID(chain *registry.Chain, token *registry.Token) (string, error) {
	bc := chain.IntentsBlockchain
	if bc == "" {
		return "", fmt.Errorf("%w: chain %s is not reached by 1Click", ErrUnknownAsset, chain.Key)
	}
	if isNative(chain, token) {
		if bc == "near" {
			return "nep141:wrap.near", nil
		}
		return "nep141:" + bc + ".omft.near", nil
	}
	switch {
	case bc == "near":
		return "nep141:" + token.Address, nil
	case chain.ChainType == registry.EVM:
		return "nep141:" + bc + "-" + strings.ToLower(token.Address) + ".omft.near", nil
	}
	return "", fmt.Errorf("%w: %s on %s", ErrUnknownAsset, token.Symbol, chain.Key)
}

// isNative reports whether the token is the chain's native coin, whichever
// spelling the registry uses for it (zero address, "native", the chain's
// own native address such as Solana's system program).
func isNative(chain *registry.Chain, token *registry.Token) bool {
	return token.IsNative() || strings.EqualFold(token.Address, chain.NativeToken.Address)
}

// TokenInfo is one entry of 1Click's /v0/tokens list.
type TokenInfo struct {
	AssetID         string  `json:"assetId"`
	Decimals        uint8   `json:"decimals"`
	Blockchain      string  `json:"blockchain"`
	Symbol          string  `json:"symbol"`
	Price           float64 `json:"price"`
	PriceUpdatedAt  string  `json:"priceUpdatedAt"`
	ContractAddress string  `json:"contractAddress,omitempty"`
}

// nativeKey stands for "no contract address" in an AssetTable.
const nativeKey = "native"

// AssetTable maps (blockchain, contract address or native) to 1Click asset
// ids as /v0/tokens lists them. It is immutable once built.
type AssetTable struct {
	ids map[string]string
}

// NewAssetTable indexes a /v0/tokens list. Entries without a contract
// address are the chain's native coin. The first entry for a key wins.
func NewAssetTable(tokens []TokenInfo) *AssetTable {
	t := &AssetTable{ids: make(map[string]string, len(tokens))}
	for _, tok := range tokens {
		if tok.AssetID == "" || tok.Blockchain == "" {
			continue
		}
		k := tableKey(tok.Blockchain, tok.ContractAddress)
		if _, dup := t.ids[k]; !dup {
			t.ids[k] = tok.AssetID
		}
	}
	return t
}

// Lookup finds the asset id of a contract ("" for the native coin).
func (t *AssetTable) Lookup(blockchain, contract string) (string, bool) {
	id, ok := t.ids[tableKey(blockchain, contract)]
	return id, ok
}

// Len is the number of indexed assets.
func (t *AssetTable) Len() int { return len(t.ids) }

// tableKey folds case only for hex addresses: base58 and base64 addresses
// (Solana, TON, Tron) are case-sensitive.
func tableKey(blockchain, contract string) string {
	if contract == "" {
		contract = nativeKey
	} else if strings.HasPrefix(contract, "0x") || strings.HasPrefix(contract, "0X") {
		contract = strings.ToLower(contract)
	}
	return strings.ToLower(blockchain) + "|" + contract
}

// assetID resolves a token, preferring the loaded /v0/tokens table and
// falling back to the derivation rules of AssetID.
func (c *Client) assetID(chain *registry.Chain, token *registry.Token) (string, error) {
	if t := c.assets.Load(); t != nil && chain.IntentsBlockchain != "" {
		contract := token.Address
		if isNative(chain, token) {
			contract = ""
		}
		if id, ok := t.Lookup(chain.IntentsBlockchain, contract); ok {
			return id, nil
		}
	}
	return AssetID(chain, token)
}
