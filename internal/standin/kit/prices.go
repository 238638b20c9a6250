package kit

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Token is one row of a stand-in's price table: an asset on a chain and its
// USD price.
type Token struct {
	ChainID  uint64
	Address  string
	Symbol   string
	Name     string
	Decimals uint8
	CoinKey  string
	PriceUSD float64
}

// Table is an immutable price table, looked up by chain and address (hex
// addresses case-insensitively, others as written).
type Table struct {
	list []Token
	idx  map[string]int
}

// NewTable indexes tokens; the first row of a (chain, address) wins.
func NewTable(tokens []Token) *Table {
	t := &Table{idx: make(map[string]int, len(tokens))}
	for _, tok := range tokens {
		k := key(tok.ChainID, tok.Address)
		if _, dup := t.idx[k]; dup {
			continue
		}
		t.idx[k] = len(t.list)
		t.list = append(t.list, tok)
	}
	return t
}

// DefaultPriceScale is what RegistryTable multiplies the registry's
// reference prices by: the stand-ins' prices then differ from the sandbox's
// own (which start at the reference), so that a test can tell which source
// a figure came from.
const DefaultPriceScale = 1.01

// RegistryTable prices every token of the registry at its reference price
// times scale; tokens without a usable reference price are left out.
func RegistryTable(reg *registry.Registry, scale float64) *Table {
	var rows []Token
	for _, c := range reg.Chains() {
		for _, t := range reg.Tokens(c.ID) {
			p, err := strconv.ParseFloat(t.PriceUSD, 64)
			if err != nil || p <= 0 {
				continue
			}
			rows = append(rows, Token{ChainID: c.ID, Address: t.Address, Symbol: t.Symbol, Name: t.Name,
				Decimals: t.Decimals, CoinKey: t.CoinKey, PriceUSD: p * scale})
		}
	}
	return NewTable(rows)
}

// DefaultTable is RegistryTable of the embedded registry at
// DefaultPriceScale.
func DefaultTable() (*Table, error) {
	reg, err := registry.Load()
	if err != nil {
		return nil, fmt.Errorf("standin: %w", err)
	}
	return RegistryTable(reg, DefaultPriceScale), nil
}

func key(chain uint64, addr string) string {
	if strings.HasPrefix(addr, "0x") || strings.HasPrefix(addr, "0X") {
		addr = strings.ToLower(addr)
	}
	return strconv.FormatUint(chain, 10) + "|" + addr
}

// Lookup finds a token.
func (t *Table) Lookup(chain uint64, addr string) (Token, bool) {
	i, ok := t.idx[key(chain, addr)]
	if !ok {
		return Token{}, false
	}
	return t.list[i], true
}

// Tokens lists the table in its order; the slice must not be modified.
func (t *Table) Tokens() []Token { return t.list }

// Chains lists the chains the table prices, in first-seen order.
func (t *Table) Chains() []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, tok := range t.list {
		if !seen[tok.ChainID] {
			seen[tok.ChainID] = true
			out = append(out, tok.ChainID)
		}
	}
	return out
}

// USD values amount base units of tok in dollars.
func USD(tok Token, amount *big.Int) float64 {
	f, _ := new(big.Float).Quo(new(big.Float).SetInt(amount), pow10(tok.Decimals)).Float64()
	return f * tok.PriceUSD
}

// Exchange returns what amount base units of from buy of to at the table's
// prices, rounded down, computed exactly on the prices' shortest decimal
// spelling (so 99.6 dollars of a 1-dollar token is 99.6 tokens, not a hair
// less); zero when either has no price.
func Exchange(from, to Token, amount *big.Int) *big.Int {
	pf, pt := decimalRat(from.PriceUSD), decimalRat(to.PriceUSD)
	if pf.Sign() <= 0 || pt.Sign() <= 0 {
		return new(big.Int)
	}
	r := new(big.Rat).SetInt(amount)
	r.Mul(r, pf)
	r.Mul(r, new(big.Rat).SetInt(pow10Int(to.Decimals)))
	r.Quo(r, pt)
	r.Quo(r, new(big.Rat).SetInt(pow10Int(from.Decimals)))
	return new(big.Int).Quo(r.Num(), r.Denom())
}

func decimalRat(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return new(big.Rat)
	}
	return r
}

func pow10Int(n uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// Shave returns amount × (1 − bps/10000), rounded down.
func Shave(amount *big.Int, bps int64) *big.Int {
	out := new(big.Int).Mul(amount, big.NewInt(10_000-bps))
	return out.Quo(out, big.NewInt(10_000))
}

func pow10(n uint8) *big.Float {
	return new(big.Float).SetPrec(200).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil))
}

// FormatUSD writes a dollar figure as the upstreams do, four decimals.
func FormatUSD(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// FormatUnits writes base units as a decimal number of whole tokens
// ("100.5"), as 1Click's *Formatted fields do.
func FormatUnits(amount *big.Int, decimals uint8) string {
	s := new(big.Rat).SetFrac(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)).FloatString(int(decimals))
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
