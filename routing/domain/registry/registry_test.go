package registry

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/swapgate/swapgate/routing/domain/address"
)

func load(t *testing.T) *Registry {
	t.Helper()
	r, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return r
}

// chainByKey finds a chain by its key (eth, arb, pls, ...) in any case, the
// way the data files and people name chains.
func chainByKey(r *Registry, key string) (*Chain, bool) {
	for _, c := range r.Chains() {
		if c.Key == strings.ToLower(key) {
			return c, true
		}
	}
	return nil, false
}

func TestLoadCounts(t *testing.T) {
	r := load(t)
	var evm int
	for _, c := range r.Chains() {
		if c.ChainType == EVM {
			evm++
		}
	}
	if evm < 30 {
		t.Errorf("EVM chains = %d, want at least 30", evm)
	}
	if !slices.IsSortedFunc(r.Chains(), func(a, b *Chain) int { return cmp.Compare(a.ID, b.ID) }) {
		t.Error("Chains() not ordered by id")
	}
}

func TestNonEVMChains(t *testing.T) {
	r := load(t)
	tests := []struct {
		id                        uint64
		chainType                 ChainType
		format, eco, intents, sym string
		decimals                  uint8
		native                    string
		providers                 []string
	}{
		{1151111081099710, SVM, "solana", "solana", "sol", "SOL", 9, "11111111111111111111111111111111", []string{ProviderAggregator, ProviderIntents}},
		{20000000000001, UTXO, "bitcoin", "bitcoin", "btc", "BTC", 8, "bitcoin", []string{ProviderIntents}},
		{9270000000000000, MVM, "sui", "sui", "sui", "SUI", 9, "0x2::sui::SUI", []string{ProviderAggregator, ProviderIntents}},
		{900000001, Intents, "near", "near", "near", "NEAR", 24, "native", []string{ProviderIntents}},
		{900000002, Intents, "ton", "near", "ton", "TON", 9, "native", []string{ProviderIntents}},
		{900000003, Intents, "tron", "near", "tron", "TRX", 6, "native", []string{ProviderIntents}},
		{900000004, Intents, "xrp", "near", "xrp", "XRP", 6, "native", []string{ProviderIntents}},
		{900000005, Intents, "doge", "near", "doge", "DOGE", 8, "native", []string{ProviderIntents}},
		{900000006, Intents, "stellar", "near", "stellar", "XLM", 7, "native", []string{ProviderIntents}},
		{900000007, Intents, "zec", "near", "zec", "ZEC", 8, "native", []string{ProviderIntents}},
		{900000008, Intents, "ltc", "near", "ltc", "LTC", 8, "native", []string{ProviderIntents}},
		{900000009, Intents, "aptos", "near", "aptos", "APT", 8, "native", []string{ProviderIntents}},
		{900000010, Intents, "cardano", "near", "cardano", "ADA", 6, "native", []string{ProviderIntents}},
	}
	for _, tt := range tests {
		c, ok := r.Chain(tt.id)
		if !ok {
			t.Errorf("chain %d missing", tt.id)
			continue
		}
		if c.ChainType != tt.chainType || c.AddressFormat != tt.format || c.FeeEcosystem != tt.eco || c.IntentsBlockchain != tt.intents {
			t.Errorf("chain %d = %s/%s/%s/%s, want %s/%s/%s/%s", tt.id, c.ChainType, c.AddressFormat, c.FeeEcosystem,
				c.IntentsBlockchain, tt.chainType, tt.format, tt.eco, tt.intents)
		}
		if !slices.Equal(c.Providers, tt.providers) {
			t.Errorf("chain %d providers = %v, want %v", tt.id, c.Providers, tt.providers)
		}
		n := c.NativeToken
		if n.Symbol != tt.sym || n.Decimals != tt.decimals || n.Address != tt.native {
			t.Errorf("chain %d native = %s/%d/%s, want %s/%d/%s", tt.id, n.Symbol, n.Decimals, n.Address, tt.sym, tt.decimals, tt.native)
		}
	}
	for id := uint64(900000001); id <= 900000015; id++ {
		c, ok := r.Chain(id)
		if !ok {
			t.Errorf("intents chain %d missing", id)
			continue
		}
		if c.ChainType != Intents || c.FeeEcosystem != "near" || c.IntentsBlockchain == "" || !slices.Equal(c.Providers, []string{ProviderIntents}) {
			t.Errorf("intents chain %d = %+v", id, c)
		}
	}
}

func TestChainInvariants(t *testing.T) {
	r := load(t)
	ecosystems := map[string]bool{"evm": true, "solana": true, "bitcoin": true, "sui": true, "near": true}
	for _, c := range r.Chains() {
		if c.Key == "" || c.Name == "" || !c.Mainnet || c.BlockTimeMs <= 0 || c.BaseFeeGwei < 0 {
			t.Errorf("chain %d: incomplete %+v", c.ID, c)
		}
		if !strings.HasPrefix(c.LogoURI, "https://assets.swapgate.dev/") || !strings.HasPrefix(c.NativeToken.LogoURI, "https://assets.swapgate.dev/") {
			t.Errorf("chain %d: logo outside the asset host", c.ID)
		}
		if !ecosystems[c.FeeEcosystem] {
			t.Errorf("chain %d: fee ecosystem %q", c.ID, c.FeeEcosystem)
		}
		if len(c.Providers) == 0 {
			t.Errorf("chain %d: no providers", c.ID)
		}
		if (c.IntentsBlockchain != "") != slices.Contains(c.Providers, ProviderIntents) {
			t.Errorf("chain %d: intentsBlockchain %q disagrees with providers %v", c.ID, c.IntentsBlockchain, c.Providers)
		}
		if c.ChainType == EVM {
			if c.AddressFormat != "evm" || c.FeeEcosystem != "evm" || c.NativeToken.Address != NativeAddressEVM || c.NativeToken.Decimals != 18 {
				t.Errorf("EVM chain %d: %s/%s native %s/%d", c.ID, c.AddressFormat, c.FeeEcosystem, c.NativeToken.Address, c.NativeToken.Decimals)
			}
			if c.ID != 369 && !slices.Contains(c.Providers, ProviderAggregator) {
				t.Errorf("EVM chain %d lacks the aggregator", c.ID)
			}
		}
		if got, ok := chainByKey(r, strings.ToUpper(c.Key)); !ok || got != c {
			t.Errorf("ChainByKey(%q) = %v, %v", c.Key, got, ok)
		}
	}
}

func TestPulserouteChains(t *testing.T) {
	r := load(t)
	pls, ok := chainByKey(r, "pls")
	if !ok || pls.ID != 369 || !slices.Equal(pls.Providers, []string{ProviderPulseroute}) {
		t.Fatalf("PulseChain = %+v", pls)
	}
	want := map[uint64]bool{1: true, 10: true, 130: true, 137: true, 369: true, 8453: true, 42161: true, 43114: true}
	for _, c := range r.Chains() {
		if got := slices.Contains(c.Providers, ProviderPulseroute); got != want[c.ID] {
			t.Errorf("chain %d pulseroute = %v, want %v", c.ID, got, want[c.ID])
		}
	}
}

func TestKnownChainIDs(t *testing.T) {
	r := load(t)
	tests := map[string]uint64{
		"eth": 1, "opt": 10, "bsc": 56, "gno": 100, "pol": 137, "pls": 369, "bas": 8453, "arb": 42161,
		"ava": 43114, "lna": 59144, "scl": 534352, "era": 324, "bls": 81457, "mnt": 5000, "cel": 42220,
		"ftm": 250, "moo": 1284, "cro": 25, "mam": 1088, "mod": 34443, "frl": 252, "kai": 8217, "son": 146,
		"uni": 130, "ber": 80094, "sei": 1329, "tai": 167000, "abs": 2741, "pze": 1101, "boa": 288,
		"aur": 1313161554, "ink": 57073, "soe": 1868, "lsk": 1135, "wcc": 480, "opb": 204, "grv": 1625,
		"sol": 1151111081099710, "btc": 20000000000001, "sui": 9270000000000000, "near": 900000001,
	}
	for key, id := range tests {
		c, ok := chainByKey(r, key)
		if !ok || c.ID != id {
			t.Errorf("ChainByKey(%q) = %v, %v; want id %d", key, c, ok, id)
		}
	}
	if _, ok := chainByKey(r, "nope"); ok {
		t.Error("ChainByKey found an unknown key")
	}
}

func TestTokensValid(t *testing.T) {
	r := load(t)
	for _, c := range r.Chains() {
		toks := r.Tokens(c.ID)
		if len(toks) == 0 || !toks[0].IsNative() && c.AddressFormat == "evm" {
			t.Errorf("chain %d: native token not first", c.ID)
		}
		for i, tok := range toks {
			if tok.ChainID != c.ID {
				t.Errorf("%s on %d: chainId %d", tok.Symbol, c.ID, tok.ChainID)
			}
			if tok.Symbol == "" || tok.Name == "" || tok.CoinKey == "" || tok.LogoURI == "" {
				t.Errorf("%s on %d: incomplete %+v", tok.Address, c.ID, tok)
			}
			if tok.Decimals == 0 || tok.Decimals > 24 {
				t.Errorf("%s on %d: decimals %d", tok.Symbol, c.ID, tok.Decimals)
			}
			if p, err := decimal.NewFromString(tok.PriceUSD); err != nil || !p.IsPositive() {
				t.Errorf("%s on %d: priceUSD %q", tok.Symbol, c.ID, tok.PriceUSD)
			}
			if i == 0 {
				continue // native addresses are conventions, checked in TestNonEVMChains
			}
			if c.AddressFormat == "evm" {
				checkEIP55(t, c.ID, tok)
			}
			if err := address.ValidateToken(c.AddressFormat, tok.Address); err != nil {
				t.Errorf("%s on %d: %v", tok.Symbol, c.ID, err)
			}
		}
	}
}

func checkEIP55(t *testing.T, chainID uint64, tok *Token) {
	t.Helper()
	if !common.IsHexAddress(tok.Address) || !strings.HasPrefix(tok.Address, "0x") {
		t.Errorf("%s on %d: %q is not an EVM address", tok.Symbol, chainID, tok.Address)
		return
	}
	if want := common.HexToAddress(tok.Address).Hex(); tok.Address != want {
		t.Errorf("%s on %d: %s is not spelled in EIP-55 form %s", tok.Symbol, chainID, tok.Address, want)
		return
	}
	body := tok.Address[2:]
	if body == strings.ToLower(body) || body == strings.ToUpper(body) {
		return // no mixed case, so nothing for ValidChecksum to check
	}
	m, err := common.NewMixedcaseAddressFromString(tok.Address)
	if err != nil || !m.ValidChecksum() {
		t.Errorf("%s on %d: %s fails EIP-55", tok.Symbol, chainID, tok.Address)
	}
}

func TestWarpRouteUSDC(t *testing.T) {
	r := load(t)
	// The Hyperlane USDC warp route: collateral USDC per chain and
	// the synthetic USDCh on PulseChain.
	tests := map[uint64]string{
		1:     "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
		42161: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
		8453:  "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		10:    "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
		137:   "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
		43114: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
		130:   "0x078D782b760474a361dDA0AF3839290b0EF57AD6",
		369:   "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D",
	}
	for id, addr := range tests {
		tok, ok := r.Token(id, addr)
		if !ok {
			t.Errorf("chain %d: warp-route USDC %s missing", id, addr)
			continue
		}
		if tok.Address != addr || tok.Decimals != 6 || tok.CoinKey != "USDC" {
			t.Errorf("chain %d: %+v", id, tok)
		}
	}
	usdch, _ := r.TokenBySymbol(369, "USDCh")
	if usdch == nil || usdch.Name != "USD Coin (Hyperlane)" {
		t.Errorf("USDCh = %+v", usdch)
	}
	bsc, ok := r.Token(56, "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d")
	if !ok || bsc.Decimals != 18 {
		t.Errorf("BNB Chain USDC = %+v", bsc)
	}
}

func TestTokenLookup(t *testing.T) {
	r := load(t)
	tests := []struct {
		name    string
		chain   uint64
		addr    string
		wantSym string
	}{
		{"native word", 1, "native", "ETH"},
		{"native word any case", 137, "NATIVE", "POL"},
		{"zero address", 8453, NativeAddressEVM, "ETH"},
		{"PulseChain native", 369, NativeAddressEVM, "PLS"},
		{"lower case", 1, "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USDC"},
		{"upper case", 1, "0XA0B86991C6218B36C1D19D4A2E9EB0CE3606EB48", "USDC"},
		{"WPLS", 369, "0xa1077a294dde1b09bb078844df40758a5d0f9a27", "WPLS"},
		{"Solana native word", 1151111081099710, "native", "SOL"},
		{"Solana USDC", 1151111081099710, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC"},
		{"Sui USDC", 9270000000000000, "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC", "USDC"},
		{"Tron USDT", 900000003, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "USDT"},
		{"NEAR native", 900000001, "native", "NEAR"},
		{"unknown token", 1, "0x0000000000000000000000000000000000000001", ""},
		{"unknown chain", 7, "native", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, ok := r.Token(tt.chain, tt.addr)
			if tt.wantSym == "" {
				if ok {
					t.Fatalf("found %+v, want none", tok)
				}
				return
			}
			if !ok || tok.Symbol != tt.wantSym {
				t.Fatalf("Token(%d, %q) = %+v, %v; want %s", tt.chain, tt.addr, tok, ok, tt.wantSym)
			}
		})
	}
}

func TestTokensOnPulseChain(t *testing.T) {
	r := load(t)
	for _, sym := range []string{"PLS", "USDCh", "WPLS", "PLSX", "HEX", "DAI", "USDC", "USDT", "WETH"} {
		if _, ok := r.TokenBySymbol(369, sym); !ok {
			t.Errorf("PulseChain lacks %s", sym)
		}
	}
}

func TestIsNative(t *testing.T) {
	r := load(t)
	for _, c := range r.Chains() {
		toks := r.Tokens(c.ID)
		if !toks[0].IsNative() {
			t.Errorf("chain %d: native %s not IsNative", c.ID, toks[0].Address)
		}
		for _, tok := range toks[1:] {
			if tok.IsNative() {
				t.Errorf("chain %d: token %s %s reported native", c.ID, tok.Symbol, tok.Address)
			}
		}
	}
}

func TestChainByIntentsBlockchain(t *testing.T) {
	r := load(t)
	tests := map[string]uint64{
		"eth": 1, "arb": 42161, "base": 8453, "bsc": 56, "pol": 137, "op": 10, "avax": 43114, "gnosis": 100,
		"bera": 80094, "sol": 1151111081099710, "btc": 20000000000001, "sui": 9270000000000000,
		"near": 900000001, "ton": 900000002, "tron": 900000003, "xrp": 900000004, "doge": 900000005,
		"stellar": 900000006, "zec": 900000007, "ltc": 900000008, "aptos": 900000009, "cardano": 900000010,
	}
	for code, id := range tests {
		c, ok := r.ChainByIntentsBlockchain(code)
		if !ok || c.ID != id {
			t.Errorf("ChainByIntentsBlockchain(%q) = %v, %v; want %d", code, c, ok, id)
		}
	}
	if _, ok := r.ChainByIntentsBlockchain("pls"); ok {
		t.Error("PulseChain is not reached by intents")
	}
}

// TestApprovalResetTokens: USDT on Ethereum is marked as a token whose
// allowance must go through zero (quotes' approvals and the sandbox chain
// read the mark), and a token without the rule, USDC, is not.
func TestApprovalResetTokens(t *testing.T) {
	r := load(t)
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"0xdAC17F958D2ee523a2206206994597C13D831ec7", true},
		{"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", false},
	} {
		tok, ok := r.Token(1, c.addr)
		if !ok || tok.ApprovalReset != c.want {
			t.Errorf("token %s on Ethereum: found %v, approvalReset %v, want %v", c.addr, ok, ok && tok.ApprovalReset, c.want)
		}
	}
}
