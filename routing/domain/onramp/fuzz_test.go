package onramp

import (
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The fuzz targets of the on-ramp's quote and checkout bodies (see
// scripts/fuzz-targets). The bodies come already decoded (the edge's
// decoder has its own target): each field is present or not, with any
// value.

var fuzzCat = sync.OnceValue(func() *Catalogue {
	reg, err := registry.Load()
	if err != nil {
		panic(err)
	}
	return NewCatalogue(reg)
})

// opt is a present field's value, nil when the bit of present is clear.
func opt(present uint16, bit int, v string) *string {
	if present&(1<<bit) == 0 {
		return nil
	}
	return &v
}

// quoteBodyOf builds a QuoteBody from fuzzed fields; present's bits say
// which fields were given.
func quoteBodyOf(present uint16, amount float64, currency, token, asset, chainName string, chainID uint64,
	mode, method, wallet, country string) QuoteBody {
	b := QuoteBody{
		FiatCurrency: opt(present, 1, currency), CryptoToken: opt(present, 2, token), CryptoAsset: opt(present, 3, asset),
		CryptoChain: opt(present, 4, chainName), PaymentMode: opt(present, 6, mode), PaymentMethod: opt(present, 7, method),
		WalletAddress: opt(present, 8, wallet), UserCountry: opt(present, 9, country),
	}
	if present&1 != 0 {
		b.FiatAmount = &amount
	}
	if present&(1<<5) != 0 {
		b.ChainID = &chainID
	}
	return b
}

var quoteFields = map[string]bool{"fiatAmount": true, "fiatCurrency": true, "cryptoToken": true, "cryptoAsset": true,
	"cryptoChain": true, "chainId": true, "paymentMode": true, "paymentMethod": true, "walletAddress": true, "userCountry": true}

// checkRefusal holds a refusal to the contract: INVALID_PARAMS naming a
// field of the body, or VALIDATION_ERROR naming two given fields that
// disagree.
func checkRefusal(t *testing.T, err *apierr.Error, fields map[string]bool) {
	t.Helper()
	if err.HTTPStatus() != 400 {
		t.Fatalf("status %d for %s", err.HTTPStatus(), err.Code)
	}
	switch err.Code {
	case apierr.InvalidParams:
		if p, _ := err.Details["param"].(string); !fields[p] {
			t.Fatalf("INVALID_PARAMS names %q: %s", p, err.Message)
		}
	case apierr.ValidationError:
		f, _ := err.Details["field"].(string)
		c, _ := err.Details["conflictsWith"].(string)
		if !fields[f] || !fields[c] {
			t.Fatalf("VALIDATION_ERROR names %q and %q: %s", f, c, err.Message)
		}
	default:
		t.Fatalf("code %s: %s", err.Code, err.Message)
	}
}

// checkRequest holds an accepted purchase to the catalogue and reads it
// back from the body a client would send for it.
func checkRequest(t *testing.T, c *Catalogue, r *Request) {
	t.Helper()
	if r.Currency == nil || r.Asset == nil || r.Method == nil {
		t.Fatalf("accepted without currency, asset or method: %+v", r)
	}
	if r.Amount < r.Currency.Minimum || r.Amount > r.Currency.Maximum {
		t.Fatalf("accepted %s %s outside [%s, %s]", r.Amount, r.Currency.Code, r.Currency.Minimum, r.Currency.Maximum)
	}
	if !r.Method.Takes(r.Currency.Code) {
		t.Fatalf("accepted %s for %s", r.Method.ID, r.Currency.Code)
	}
	if r.Wallet != "" && address.Validate("evm", r.Wallet) != nil {
		t.Fatalf("accepted wallet %q", r.Wallet)
	}
	if r.Country != "" && !c.Serves(r.Country) {
		t.Fatalf("accepted country %q", r.Country)
	}
	amount, _ := strconv.ParseFloat(r.Amount.String(), 64)
	code, chain, symbol, method := r.Currency.Code, r.Asset.ChainID, r.Asset.Symbol, r.Method.ID
	b := QuoteBody{FiatAmount: &amount, FiatCurrency: &code, ChainID: &chain, CryptoAsset: &symbol, PaymentMethod: &method}
	if r.Wallet != "" {
		b.WalletAddress = &r.Wallet
	}
	if r.Country != "" {
		b.UserCountry = &r.Country
	}
	again, err := c.Resolve(&b)
	if err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("%+v written out again resolves to %+v, %v", r, again, err)
	}
}

// FuzzResolve: Resolve never panics; a refusal names a field of the body;
// an accepted purchase is within the catalogue and reads back the same.
func FuzzResolve(f *testing.F) {
	const wallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	f.Add(uint16(0x3ff), 100.0, "EUR", "USDC", "USDC", "base", uint64(8453), "credit_card", "credit_card", wallet, "de")
	f.Add(uint16(0x0bb), 49.99, "usd", "", "eth", "", uint64(1), "", "bank_transfer", "", "")
	f.Add(uint16(0x01f), 1e308, "GBP", "USDT", "USDC", "Arbitrum", uint64(0), "", "", "", "")
	f.Add(uint16(0x3ff), math.Inf(1), "\x00", "", "", "", uint64(math.MaxUint64), "x", "y", "0x", "ZZ")
	f.Fuzz(func(t *testing.T, present uint16, amount float64, currency, token, asset, chainName string, chainID uint64,
		mode, method, wallet, country string) {
		c := fuzzCat()
		b := quoteBodyOf(present, amount, currency, token, asset, chainName, chainID, mode, method, wallet, country)
		r, err := c.Resolve(&b)
		if err != nil {
			checkRefusal(t, err, quoteFields)
			return
		}
		checkRequest(t, c, r)
	})
}

// FuzzResolveCheckout: the checkout's own fields on top of a purchase
// FuzzResolve accepts: a wallet, an absolute http(s) redirect, an e-mail
// address and an external id, each bounded and printable.
func FuzzResolveCheckout(f *testing.F) {
	const wallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	f.Add(uint16(0x3ff), wallet, "https://shop.example/done?order=UID", "", "buyer@shop.example", "order-42")
	f.Add(uint16(0x3ff), wallet, "", "javascript:alert(1)", "a@b", "x\x00")
	f.Add(uint16(0x0ff), "", "http://u:p@h/", "https://h/", "@", strings.Repeat("e", 129))
	f.Fuzz(func(t *testing.T, present uint16, wallet, redirect, ret, email, external string) {
		c := fuzzCat()
		amount, code, chain, asset := 100.0, "EUR", uint64(8453), "USDC"
		b := CheckoutBody{
			QuoteBody:   QuoteBody{FiatAmount: &amount, FiatCurrency: &code, ChainID: &chain, CryptoAsset: &asset, WalletAddress: opt(present, 0, wallet)},
			RedirectURL: opt(present, 1, redirect), ReturnURL: opt(present, 2, ret), Email: opt(present, 3, email),
			ExternalID: opt(present, 4, external),
		}
		r, err := c.ResolveCheckout(&b)
		if err != nil {
			checkRefusal(t, err, map[string]bool{"walletAddress": true, "redirectUrl": true, "returnUrl": true, "email": true, "externalId": true})
			return
		}
		checkRequest(t, c, &r.Request)
		if r.Wallet == "" {
			t.Fatal("a checkout accepted without a wallet")
		}
		if r.RedirectURL != "" {
			u, err := url.Parse(r.RedirectURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || len(r.RedirectURL) > maxURL {
				t.Fatalf("redirect %q accepted", r.RedirectURL)
			}
		}
		for name, v := range map[string]string{"email": r.Email, "externalId": r.ExternalID, "redirect": r.RedirectURL} {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
				t.Fatalf("%s %q accepted with a control character or invalid UTF-8", name, v)
			}
		}
		if r.Email != "" && (len(r.Email) > maxEmail || strings.Count(r.Email, "@") < 1 || strings.HasPrefix(r.Email, "@") || strings.HasSuffix(r.Email, "@")) {
			t.Fatalf("email %q accepted", r.Email)
		}
		if len(r.ExternalID) > maxExternalID {
			t.Fatalf("externalId of %d bytes accepted", len(r.ExternalID))
		}
	})
}

// FuzzExactAmount: a fiat amount is accepted exactly when it is a positive
// whole number of cents (up to a trillion units), and its cents read back
// the same when written as a JSON number.
func FuzzExactAmount(f *testing.F) {
	for _, v := range []float64{100, 0.01, 0.001, 49.99, 1e12, 1e12 + 0.01, -1, 0, math.NaN(), math.Inf(1), 0.1 + 0.2, 1.005, 123456789012.34} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		c, ok := exactAmount(v)
		if !ok {
			if v > 0 && v <= 1e12 {
				// Refused only when it is not a whole number of cents.
				if s := strconv.FormatFloat(v, 'f', -1, 64); !strings.Contains(s, ".") || len(s)-strings.IndexByte(s, '.') <= 3 {
					t.Fatalf("exactAmount(%v) refused", v)
				}
			}
			return
		}
		if c <= 0 || !(v > 0) || v > 1e12 {
			t.Fatalf("exactAmount(%v) = %d", v, c)
		}
		back, _ := strconv.ParseFloat(c.String(), 64)
		if back != v {
			t.Fatalf("exactAmount(%v) = %s, which reads back as %v", v, c, back)
		}
		if c2, ok := exactAmount(back); !ok || c2 != c {
			t.Fatalf("exactAmount(%v) = %d, then %d", v, c, c2)
		}
	})
}
