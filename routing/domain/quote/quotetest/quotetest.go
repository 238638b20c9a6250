// Package quotetest builds the parsed quote requests that tests of the
// providers hand to a leg, so that each provider's tests do not write their
// own token lookup and unit arithmetic.
package quotetest

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Issued is when every request of these tests is issued.
var Issued = time.Unix(1_800_000_000, 0)

// Request is a request for whole (a decimal string) units of a token of
// one chain into a token of another, each named by symbol ("" for the
// native coin), from fromAddr to toAddr, as a provider receives it parsed:
// id "q-test-1", 0.5% slippage, RECOMMENDED, issued at Issued. A token or
// amount the registry cannot give fails the test.
func Request(t testing.TB, reg *registry.Registry, from uint64, fromSym string, to uint64, toSym, whole, fromAddr, toAddr string) *quote.Request {
	t.Helper()
	token := func(chain uint64, sym string) *registry.Token {
		if sym == "" {
			sym = "native"
			tok, ok := reg.Token(chain, sym)
			if !ok {
				t.Fatalf("no native coin on chain %d", chain)
			}
			return tok
		}
		tok, ok := reg.TokenBySymbol(chain, sym)
		if !ok {
			t.Fatalf("no %s on chain %d", sym, chain)
		}
		return tok
	}
	fc, ok1 := reg.Chain(from)
	tc, ok2 := reg.Chain(to)
	if !ok1 || !ok2 {
		t.Fatalf("chains %d and %d are not both in the registry", from, to)
	}
	ft, tt := token(from, fromSym), token(to, toSym)
	amt, ok := new(big.Float).SetPrec(256).SetString(whole)
	if !ok {
		t.Fatalf("amount %q", whole)
	}
	amt.Mul(amt, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ft.Decimals)), nil)))
	units, _ := amt.Int(nil)
	return &quote.Request{ID: "q-test-1", From: fc, To: tc, FromToken: ft, ToToken: tt, FromAmount: units,
		FromAddress: fromAddr, ToAddress: toAddr, Slippage: 0.005, Order: quote.Recommended, Now: Issued}
}

// ReferencePrices prices every registry token at its reference price,
// keyed as the reference-data cache is (chain, lower-case address).
func ReferencePrices(reg *registry.Registry) func(chainID uint64, token string) (float64, bool) {
	prices := map[uint64]map[string]float64{}
	for _, c := range reg.Chains() {
		prices[c.ID] = map[string]float64{}
		for _, t := range reg.Tokens(c.ID) {
			if p, err := strconv.ParseFloat(t.PriceUSD, 64); err == nil {
				prices[c.ID][strings.ToLower(t.Address)] = p
			}
		}
	}
	return func(chainID uint64, token string) (float64, bool) {
		p, ok := prices[chainID][token]
		return p, ok
	}
}

// GasOnMainnet is 10 gwei on chain 1 and "no figure" elsewhere, so that a
// provider's gas function and its registry fallback are both exercised.
func GasOnMainnet(chainID uint64) (*big.Int, bool) {
	if chainID == 1 {
		return big.NewInt(10e9), true
	}
	return nil, false
}
