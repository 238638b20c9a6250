package onramp

import (
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// QuoteBody is the body of POST /v1/onramp/quote with both of the
// specification's name sets: cryptoToken|cryptoAsset,
// cryptoChain|chainId, paymentMode|paymentMethod. Fields are pointers so
// that "absent" and "given" differ; the edge decodes it strictly (an
// unknown field or a wrong type is VALIDATION_ERROR before Resolve runs).
type QuoteBody struct {
	FiatAmount    *float64 `json:"fiatAmount"`
	FiatCurrency  *string  `json:"fiatCurrency"`
	CryptoToken   *string  `json:"cryptoToken"`
	CryptoAsset   *string  `json:"cryptoAsset"`
	CryptoChain   *string  `json:"cryptoChain"`
	ChainID       *uint64  `json:"chainId"`
	PaymentMode   *string  `json:"paymentMode"`
	PaymentMethod *string  `json:"paymentMethod"`
	WalletAddress *string  `json:"walletAddress"`
	UserCountry   *string  `json:"userCountry"`
}

// CheckoutBody is the body of POST /v1/onramp/checkout: the quote's fields
// and the order's own (returnUrl|redirectUrl is one more pair).
type CheckoutBody struct {
	QuoteBody
	Email       *string `json:"email"`
	ReturnURL   *string `json:"returnUrl"`
	RedirectURL *string `json:"redirectUrl"`
	ExternalID  *string `json:"externalId"`
}

// Request is a resolved on-ramp request: every name checked against the
// catalogue, the amount exact.
type Request struct {
	Currency *Currency
	Amount   Cents
	Asset    *Asset
	Method   *PaymentMethod
	// Wallet is the delivery address; empty on a quote that gave none.
	Wallet  string
	Country string
}

// CheckoutRequest is a resolved checkout: the purchase and the order's own
// fields.
type CheckoutRequest struct {
	Request
	Email       string
	RedirectURL string
	ExternalID  string
	// Scenario is the sandbox scenario the order plays (the
	// X-Sandbox-Scenario header), "" for none.
	Scenario scenario.Name
}

// Bounds of the order's own text fields.
const (
	maxExternalID = 128
	maxEmail      = 254
	maxURL        = 2048
)

// pick resolves one pair of alternative names: the value given under
// either, or a VALIDATION_ERROR naming both when they differ. Values are
// compared without regard to case, as every value of these pairs is.
func pick(aName string, a *string, bName string, b *string) (string, string, *apierr.Error) {
	switch {
	case a != nil && b != nil:
		if !strings.EqualFold(strings.TrimSpace(*a), strings.TrimSpace(*b)) {
			return "", "", conflict(aName, bName)
		}
		return strings.TrimSpace(*a), aName, nil
	case a != nil:
		return strings.TrimSpace(*a), aName, nil
	case b != nil:
		return strings.TrimSpace(*b), bName, nil
	}
	return "", aName, nil
}

func conflict(a, b string) *apierr.Error {
	return apierr.New(apierr.ValidationError, a+" and "+b+" name the same input and were given different values; give one").
		With("field", b).With("conflictsWith", a)
}

// Resolve checks a quote body against the catalogue. Every refusal names
// the field as the caller spelled it and, where the allowed values are a
// short list, gives them in details.allowed.
func (c *Catalogue) Resolve(b *QuoteBody) (*Request, *apierr.Error) {
	var r Request
	if b.FiatAmount == nil {
		return nil, apierr.Param("fiatAmount", "fiatAmount is required")
	}
	var code string
	if b.FiatCurrency != nil {
		code = strings.TrimSpace(*b.FiatCurrency)
	}
	if code == "" {
		return nil, apierr.Param("fiatCurrency", "fiatCurrency is required").With("allowed", c.Codes())
	}
	cur, ok := c.Currency(code)
	if !ok {
		return nil, apierr.Param("fiatCurrency", "fiatCurrency "+strconv.Quote(code)+" is not supported").With("allowed", c.Codes())
	}
	r.Currency = cur
	amount, ok := exactAmount(*b.FiatAmount)
	if !ok {
		return nil, apierr.Param("fiatAmount", "fiatAmount must be a positive amount with at most two decimals")
	}
	if amount < cur.Minimum || amount > cur.Maximum {
		return nil, apierr.Param("fiatAmount", "fiatAmount must be between "+cur.Minimum.String()+" and "+cur.Maximum.String()+" "+cur.Code).
			With("minimum", cur.Minimum.String()).With("maximum", cur.Maximum.String())
	}
	r.Amount = amount

	chainID, chainField, err := c.resolveChain(b)
	if err != nil {
		return nil, err
	}
	symbol, symbolField, err := pick("cryptoToken", b.CryptoToken, "cryptoAsset", b.CryptoAsset)
	if err != nil {
		return nil, err
	}
	if symbol == "" {
		return nil, apierr.Param("cryptoAsset", "cryptoAsset (or cryptoToken) is required").With("allowed", c.SymbolsOn(chainID))
	}
	if r.Asset, ok = c.Asset(symbol, chainID); !ok {
		return nil, apierr.Param(symbolField, symbolField+" "+strconv.Quote(symbol)+" is not offered on "+chainField+" "+strconv.FormatUint(chainID, 10)).
			With("allowed", c.SymbolsOn(chainID))
	}

	method, methodField, err := pick("paymentMethod", b.PaymentMethod, "paymentMode", b.PaymentMode)
	if err != nil {
		return nil, err
	}
	if method == "" {
		method = DefaultMethod
	}
	if r.Method, ok = c.Method(strings.ToLower(method)); !ok {
		return nil, apierr.Param(methodField, methodField+" "+strconv.Quote(method)+" is not supported").With("allowed", c.MethodIDs())
	}
	if !r.Method.Takes(cur.Code) {
		return nil, apierr.Param(methodField, r.Method.ID+" does not take "+cur.Code).With("allowed", r.Method.Currency)
	}

	if b.WalletAddress != nil {
		r.Wallet = strings.TrimSpace(*b.WalletAddress)
		if err := address.Validate("evm", r.Wallet); err != nil {
			return nil, apierr.Param("walletAddress", "walletAddress is not a valid address on chain "+strconv.FormatUint(chainID, 10)+": "+err.Error())
		}
	}
	if b.UserCountry != nil {
		r.Country = strings.ToUpper(strings.TrimSpace(*b.UserCountry))
		if !c.Serves(r.Country) {
			return nil, apierr.Param("userCountry", "userCountry "+strconv.Quote(*b.UserCountry)+" is not served (ISO 3166-1 alpha-2 codes)").
				With("allowed", c.Countries)
		}
	}
	return &r, nil
}

// resolveChain reads cryptoChain (a chain key or name) and chainId (an
// integer), which must agree when both are given.
func (c *Catalogue) resolveChain(b *QuoteBody) (uint64, string, *apierr.Error) {
	var byName uint64
	if b.CryptoChain != nil {
		id, ok := c.Chain(strings.TrimSpace(*b.CryptoChain))
		if !ok {
			return 0, "", apierr.Param("cryptoChain", "cryptoChain "+strconv.Quote(*b.CryptoChain)+" is not a chain the on-ramp delivers to (a chain key such as \"arb\" or a name such as \"Arbitrum\")")
		}
		byName = id
	}
	if b.ChainID != nil {
		if !c.hasChain(*b.ChainID) {
			return 0, "", apierr.Param("chainId", "chainId "+strconv.FormatUint(*b.ChainID, 10)+" is not a chain the on-ramp delivers to")
		}
		if b.CryptoChain != nil && byName != *b.ChainID {
			return 0, "", conflict("cryptoChain", "chainId")
		}
		return *b.ChainID, "chainId", nil
	}
	if b.CryptoChain == nil {
		return 0, "", apierr.Param("chainId", "chainId (or cryptoChain) is required")
	}
	return byName, "cryptoChain", nil
}

// exactAmount turns a JSON number into cents when it is positive and has at
// most two decimals. The decoder's float64 keeps every amount a person
// types (up to 15 significant digits) and its shortest decimal form is the
// typed one.
func exactAmount(f float64) (Cents, bool) {
	if !(f > 0) || f > 1e12 {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	if !ok {
		return 0, false
	}
	return centsOf(r)
}

// ResolveCheckout checks a checkout body: the purchase as a quote, then a
// wallet (required here), an http(s) redirect URL, an e-mail and the
// partner's external id.
func (c *Catalogue) ResolveCheckout(b *CheckoutBody) (*CheckoutRequest, *apierr.Error) {
	req, err := c.Resolve(&b.QuoteBody)
	if err != nil {
		return nil, err
	}
	if req.Wallet == "" {
		return nil, apierr.Param("walletAddress", "walletAddress is required: the crypto is delivered there")
	}
	out := &CheckoutRequest{Request: *req}
	redirect, field, err := pick("redirectUrl", b.RedirectURL, "returnUrl", b.ReturnURL)
	if err != nil {
		return nil, err
	}
	if redirect != "" {
		if aerr := checkRedirect(field, redirect); aerr != nil {
			return nil, aerr
		}
		out.RedirectURL = redirect
	}
	if b.Email != nil {
		out.Email = strings.TrimSpace(*b.Email)
		// One @ between a local part and a domain, neither empty: quoted
		// local parts, the only place a second @ may appear, are refused
		// with the quotes.
		if at := strings.IndexByte(out.Email, '@'); at < 1 || at == len(out.Email)-1 || strings.Count(out.Email, "@") != 1 ||
			len(out.Email) > maxEmail || strings.ContainsAny(out.Email, " <>\"") || !printable(out.Email) {
			return nil, apierr.Param("email", "email is not an e-mail address")
		}
	}
	if b.ExternalID != nil {
		out.ExternalID = *b.ExternalID
		if len(out.ExternalID) > maxExternalID || !printable(out.ExternalID) {
			return nil, apierr.Param("externalId", "externalId must be at most 128 printable characters")
		}
	}
	return out, nil
}

// checkRedirect accepts an absolute http or https URL with a host: the user
// lands there after paying, so anything else (javascript:, data:, a
// relative path) is refused.
func checkRedirect(field, raw string) *apierr.Error {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxURL || !printable(raw) || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return apierr.Param(field, field+" must be an absolute http or https URL")
	}
	return nil
}

// printable reports text a page or a header can carry as it is: valid
// UTF-8 without control characters (C0, DEL or C1).
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// Redirect is the URL the user lands on after paying: the placeholder UID
// replaced by the order's uid where the URL has it, else orderUid added as a
// query parameter. It is empty when the checkout gave no redirect URL.
func Redirect(redirectURL, orderUID string) string {
	if redirectURL == "" {
		return ""
	}
	if strings.Contains(redirectURL, "UID") {
		return strings.ReplaceAll(redirectURL, "UID", url.QueryEscape(orderUID))
	}
	u, err := url.Parse(redirectURL)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("orderUid", orderUID)
	u.RawQuery = q.Encode()
	return u.String()
}
