package onramp

import (
	"math/big"
	"slices"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Currency is a fiat currency the on-ramp takes: its rate against the US
// dollar (units of the currency per dollar, an exact decimal) and the
// smallest and largest fiatAmount one order may have.
type Currency struct {
	Code    string
	PerUSD  *big.Rat
	Minimum Cents
	Maximum Cents
}

// PaymentMethod is a way to pay, with its processing fee in basis points of
// fiatAmount.
type PaymentMethod struct {
	ID       string
	Name     string
	FeeBps   int
	Currency []string // the currencies it takes; all when empty
}

// Asset is a crypto asset the on-ramp delivers: one registry token on one
// EVM chain. Delivery is an ERC-20 transfer, or a plain send for the native
// coin, which is what the network fee prices.
type Asset struct {
	Symbol   string
	ChainID  uint64
	Chain    string // the chain's key
	Token    *registry.Token
	Decimals uint8
	// Ecosystem is where a partner fee on this asset settles (the chain's
	// fee ecosystem).
	Ecosystem string
}

// Gas of the transfer that delivers an asset: a plain send of the native
// coin, or an ERC-20 transfer to an address that may not hold the token yet.
const (
	nativeTransferGas = 21_000
	tokenTransferGas  = 65_000
)

// TransferGas is the gas of the transfer that delivers the asset.
func (a *Asset) TransferGas() int64 {
	if a.Token.IsNative() {
		return nativeTransferGas
	}
	return tokenTransferGas
}

// Places is how many decimals cryptoAmount shows: the token's own, at most 8,
// the precision hosted-checkout providers quote in.
func (a *Asset) Places() int { return min(int(a.Decimals), 8) }

// Catalogue is everything an on-ramp request is checked against. It is built
// once at start and read-only after.
type Catalogue struct {
	Currencies []Currency
	Methods    []PaymentMethod
	// Countries are the ISO 3166-1 alpha-2 codes of the countries served.
	Countries []string
	Assets    []Asset
	reg       *registry.Registry
}

// Payment method ids of the specification.
const (
	CreditCard   = "credit_card"
	DebitCard    = "debit_card"
	BankTransfer = "bank_transfer"
)

// DefaultMethod is the payment method of a request that names none: cards
// are what most first purchases use.
const DefaultMethod = CreditCard

// assetSymbols are the tokens offered besides each chain's native coin: the
// two dollar stablecoins, by their exact registry symbol, where the chain
// has them.
var assetSymbols = []string{"USDC", "USDT"}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("onramp: bad decimal literal " + s)
	}
	return r
}

// NewCatalogue is the sandbox catalogue: six currencies at fixed rates with
// their limits, the three payment methods of the specification, the
// countries served, and every mainnet EVM chain's native coin, USDC and
// USDT from the registry (the chains the sandbox chain simulates, so a
// delivery shows in the wallet's balances).
func NewCatalogue(reg *registry.Registry) *Catalogue {
	c := &Catalogue{
		Currencies: []Currency{
			{Code: "USD", PerUSD: rat("1"), Minimum: 2_000, Maximum: 1_000_000},
			{Code: "EUR", PerUSD: rat("0.92"), Minimum: 2_000, Maximum: 900_000},
			{Code: "GBP", PerUSD: rat("0.79"), Minimum: 1_500, Maximum: 800_000},
			{Code: "CAD", PerUSD: rat("1.37"), Minimum: 2_500, Maximum: 1_300_000},
			{Code: "AUD", PerUSD: rat("1.52"), Minimum: 3_000, Maximum: 1_500_000},
			{Code: "CHF", PerUSD: rat("0.88"), Minimum: 2_000, Maximum: 900_000},
		},
		Methods: []PaymentMethod{
			{ID: CreditCard, Name: "Credit card", FeeBps: 299},
			{ID: DebitCard, Name: "Debit card", FeeBps: 149},
			{ID: BankTransfer, Name: "Bank transfer", FeeBps: 50, Currency: []string{"USD", "EUR", "GBP"}},
		},
		Countries: []string{"AT", "AU", "BE", "BR", "CA", "CH", "DE", "DK", "ES", "FI", "FR", "GB", "IE", "IT",
			"JP", "MX", "NL", "NO", "NZ", "PL", "PT", "SE", "SG", "US"},
		reg: reg,
	}
	for _, ch := range reg.Chains() {
		if ch.ChainType != registry.EVM || !ch.Mainnet {
			continue
		}
		native := ch.NativeToken
		c.Assets = append(c.Assets, Asset{Symbol: native.Symbol, ChainID: ch.ID, Chain: ch.Key, Token: &native, Decimals: native.Decimals, Ecosystem: ch.FeeEcosystem})
		for _, sym := range assetSymbols {
			if t, ok := reg.TokenBySymbol(ch.ID, sym); ok && t.Symbol == sym {
				c.Assets = append(c.Assets, Asset{Symbol: t.Symbol, ChainID: ch.ID, Chain: ch.Key, Token: t, Decimals: t.Decimals, Ecosystem: ch.FeeEcosystem})
			}
		}
	}
	return c
}

// Currency finds a currency by code, in any case.
func (c *Catalogue) Currency(code string) (*Currency, bool) {
	for i := range c.Currencies {
		if strings.EqualFold(c.Currencies[i].Code, code) {
			return &c.Currencies[i], true
		}
	}
	return nil, false
}

// Method finds a payment method by id.
func (c *Catalogue) Method(id string) (*PaymentMethod, bool) {
	for i := range c.Methods {
		if c.Methods[i].ID == id {
			return &c.Methods[i], true
		}
	}
	return nil, false
}

// Takes reports whether the method accepts the currency.
func (m *PaymentMethod) Takes(currency string) bool {
	return len(m.Currency) == 0 || slices.Contains(m.Currency, currency)
}

// Serves reports whether the country (alpha-2, any case) is served.
func (c *Catalogue) Serves(country string) bool {
	return slices.Contains(c.Countries, strings.ToUpper(country))
}

// Chain resolves a chain given by key or name (any case) among the chains
// that have on-ramp assets.
func (c *Catalogue) Chain(keyOrName string) (uint64, bool) {
	for _, ch := range c.reg.Chains() {
		if strings.EqualFold(ch.Key, keyOrName) || strings.EqualFold(ch.Name, keyOrName) {
			return ch.ID, c.hasChain(ch.ID)
		}
	}
	return 0, false
}

func (c *Catalogue) hasChain(id uint64) bool {
	return slices.ContainsFunc(c.Assets, func(a Asset) bool { return a.ChainID == id })
}

// Asset finds the asset with the symbol (any case) on the chain.
func (c *Catalogue) Asset(symbol string, chainID uint64) (*Asset, bool) {
	for i := range c.Assets {
		if a := &c.Assets[i]; a.ChainID == chainID && strings.EqualFold(a.Symbol, symbol) {
			return a, true
		}
	}
	return nil, false
}

// SymbolsOn lists the asset symbols offered on a chain, for the details of a
// refusal.
func (c *Catalogue) SymbolsOn(chainID uint64) []string {
	var out []string
	for _, a := range c.Assets {
		if a.ChainID == chainID {
			out = append(out, a.Symbol)
		}
	}
	return out
}

// Codes lists the currency codes, for the details of a refusal.
func (c *Catalogue) Codes() []string {
	out := make([]string, len(c.Currencies))
	for i, cur := range c.Currencies {
		out[i] = cur.Code
	}
	return out
}

// MethodIDs lists the payment method ids, for the details of a refusal.
func (c *Catalogue) MethodIDs() []string {
	out := make([]string, len(c.Methods))
	for i, m := range c.Methods {
		out[i] = m.ID
	}
	return out
}

// Registry is the registry the catalogue was built from.
func (c *Catalogue) Registry() *registry.Registry { return c.reg }
