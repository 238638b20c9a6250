package onramp

import (
	"testing"
)

// TestResolveRefusals: every bad input is refused with the contract's code
// naming the field as the caller spelled it.
func TestResolveRefusals(t *testing.T) {
	c := testCatalogue(t)
	good := func() QuoteBody {
		return QuoteBody{FiatAmount: f(100), FiatCurrency: s("USD"), CryptoAsset: s("USDC"), ChainID: u(8453),
			WalletAddress: s("0x8ba1f109551bD432803012645Ac136ddd64DBA72")}
	}
	cases := []struct {
		name      string
		edit      func(*QuoteBody)
		code, key string
		field     string
	}{
		{"no amount", func(b *QuoteBody) { b.FiatAmount = nil }, "INVALID_PARAMS", "param", "fiatAmount"},
		{"negative amount", func(b *QuoteBody) { b.FiatAmount = f(-5) }, "INVALID_PARAMS", "param", "fiatAmount"},
		{"three decimals", func(b *QuoteBody) { b.FiatAmount = f(100.005) }, "INVALID_PARAMS", "param", "fiatAmount"},
		{"under the minimum", func(b *QuoteBody) { b.FiatAmount = f(19.99) }, "INVALID_PARAMS", "param", "fiatAmount"},
		{"over the maximum", func(b *QuoteBody) { b.FiatAmount = f(10_000.01) }, "INVALID_PARAMS", "param", "fiatAmount"},
		{"unknown currency", func(b *QuoteBody) { b.FiatCurrency = s("XYZ") }, "INVALID_PARAMS", "param", "fiatCurrency"},
		{"no currency", func(b *QuoteBody) { b.FiatCurrency = nil }, "INVALID_PARAMS", "param", "fiatCurrency"},
		{"unknown asset", func(b *QuoteBody) { b.CryptoAsset = s("DOGE") }, "INVALID_PARAMS", "param", "cryptoAsset"},
		{"unknown asset by its other name", func(b *QuoteBody) { b.CryptoAsset, b.CryptoToken = nil, s("DOGE") }, "INVALID_PARAMS", "param", "cryptoToken"},
		{"no asset", func(b *QuoteBody) { b.CryptoAsset = nil }, "INVALID_PARAMS", "param", "cryptoAsset"},
		{"unknown chain id", func(b *QuoteBody) { b.ChainID = u(999) }, "INVALID_PARAMS", "param", "chainId"},
		{"a chain the on-ramp does not serve", func(b *QuoteBody) { b.ChainID = u(1151111081099710) }, "INVALID_PARAMS", "param", "chainId"},
		{"unknown chain name", func(b *QuoteBody) { b.ChainID, b.CryptoChain = nil, s("narnia") }, "INVALID_PARAMS", "param", "cryptoChain"},
		{"no chain", func(b *QuoteBody) { b.ChainID = nil }, "INVALID_PARAMS", "param", "chainId"},
		{"unknown payment method", func(b *QuoteBody) { b.PaymentMethod = s("cash") }, "INVALID_PARAMS", "param", "paymentMethod"},
		{"unknown payment mode", func(b *QuoteBody) { b.PaymentMode = s("cash") }, "INVALID_PARAMS", "param", "paymentMode"},
		{"a method that does not take the currency", func(b *QuoteBody) { b.FiatCurrency, b.PaymentMethod = s("CAD"), s("bank_transfer") }, "INVALID_PARAMS", "param", "paymentMethod"},
		{"invalid wallet", func(b *QuoteBody) { b.WalletAddress = s("0x123") }, "INVALID_PARAMS", "param", "walletAddress"},
		{"bad EIP-55 wallet", func(b *QuoteBody) { b.WalletAddress = s("0x8Ba1f109551bD432803012645Ac136ddd64DBA72") }, "INVALID_PARAMS", "param", "walletAddress"},
		{"a Solana wallet for an EVM chain", func(b *QuoteBody) { b.WalletAddress = s("7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV") }, "INVALID_PARAMS", "param", "walletAddress"},
		{"unsupported country", func(b *QuoteBody) { b.UserCountry = s("KP") }, "INVALID_PARAMS", "param", "userCountry"},
		{"both asset names, different", func(b *QuoteBody) { b.CryptoToken = s("ETH") }, "VALIDATION_ERROR", "field", "cryptoAsset"},
		{"both chain names, different", func(b *QuoteBody) { b.CryptoChain = s("arb") }, "VALIDATION_ERROR", "field", "chainId"},
		{"both method names, different", func(b *QuoteBody) { b.PaymentMethod, b.PaymentMode = s("credit_card"), s("debit_card") }, "VALIDATION_ERROR", "field", "paymentMode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := good()
			tc.edit(&b)
			_, err := c.Resolve(&b)
			if err == nil {
				t.Fatal("accepted")
			}
			if err.Code != tc.code || err.Details[tc.key] != tc.field {
				t.Fatalf("got %s %v (%s), want %s naming %s", err.Code, err.Details, err.Message, tc.code, tc.field)
			}
		})
	}
}

func TestResolveAcceptsBothNameSets(t *testing.T) {
	c := testCatalogue(t)
	for _, b := range []QuoteBody{
		{FiatAmount: f(50), FiatCurrency: s("eur"), CryptoToken: s("usdc"), CryptoChain: s("base"), PaymentMode: s("debit_card")},
		{FiatAmount: f(50), FiatCurrency: s("EUR"), CryptoAsset: s("USDC"), ChainID: u(8453), PaymentMethod: s("debit_card")},
		{FiatAmount: f(50), FiatCurrency: s("EUR"), CryptoAsset: s("USDC"), CryptoToken: s("usdc"), ChainID: u(8453), CryptoChain: s("bas"),
			PaymentMethod: s("debit_card"), PaymentMode: s("debit_card"), UserCountry: s("de")},
	} {
		r, err := c.Resolve(&b)
		if err != nil {
			t.Fatalf("%+v: %v", b, err)
		}
		if r.Currency.Code != "EUR" || r.Amount != 5_000 || r.Asset.Symbol != "USDC" || r.Asset.ChainID != 8453 || r.Method.ID != DebitCard {
			t.Fatalf("resolved %+v", r)
		}
	}
	r, err := c.Resolve(&QuoteBody{FiatAmount: f(50), FiatCurrency: s("USD"), CryptoAsset: s("ETH"), ChainID: u(1)})
	if err != nil || r.Method.ID != DefaultMethod {
		t.Fatalf("default method: %+v %v", r, err)
	}
}

func TestResolveCheckout(t *testing.T) {
	c := testCatalogue(t)
	base := func() CheckoutBody {
		return CheckoutBody{QuoteBody: QuoteBody{FiatAmount: f(100), FiatCurrency: s("USD"), CryptoAsset: s("USDC"), ChainID: u(8453),
			WalletAddress: s("0x8ba1f109551bD432803012645Ac136ddd64DBA72")}}
	}
	cases := []struct {
		name  string
		edit  func(*CheckoutBody)
		field string // "" accepted
	}{
		{"minimal", func(*CheckoutBody) {}, ""},
		{"no wallet", func(b *CheckoutBody) { b.WalletAddress = nil }, "walletAddress"},
		{"https redirect", func(b *CheckoutBody) { b.RedirectURL = s("https://shop.example/done?o=UID") }, ""},
		{"javascript redirect", func(b *CheckoutBody) { b.RedirectURL = s("javascript:alert(1)") }, "redirectUrl"},
		{"relative return url", func(b *CheckoutBody) { b.ReturnURL = s("/done") }, "returnUrl"},
		{"ftp redirect", func(b *CheckoutBody) { b.RedirectURL = s("ftp://shop.example/") }, "redirectUrl"},
		{"credentials in the redirect", func(b *CheckoutBody) { b.RedirectURL = s("https://u:p@shop.example/") }, "redirectUrl"},
		{"both redirect names, different", func(b *CheckoutBody) {
			b.RedirectURL, b.ReturnURL = s("https://a.example/"), s("https://b.example/")
		}, "returnUrl"},
		{"bad email", func(b *CheckoutBody) { b.Email = s("not-an-email") }, "email"},
		{"good email", func(b *CheckoutBody) { b.Email = s("user@example.com") }, ""},
		{"external id with a newline", func(b *CheckoutBody) { b.ExternalID = s("a\nb") }, "externalId"},
		{"external id with invalid UTF-8", func(b *CheckoutBody) { b.ExternalID = s("a\xffb") }, "externalId"},
		{"external id with a C1 control", func(b *CheckoutBody) { b.ExternalID = s("a\u0085b") }, "externalId"},
		{"external id in Unicode", func(b *CheckoutBody) { b.ExternalID = s("commande-été") }, ""},
		{"email with two @", func(b *CheckoutBody) { b.Email = s("0@@") }, "email"},
		{"email with an @ in the domain", func(b *CheckoutBody) { b.Email = s("a@b@example.com") }, "email"},
		{"email with NUL", func(b *CheckoutBody) { b.Email = s("a\x00@example.com") }, "email"},
		{"email with a tab", func(b *CheckoutBody) { b.Email = s("a@exa\tmple.com") }, "email"},
		{"email with invalid UTF-8", func(b *CheckoutBody) { b.Email = s("a@\xffexample.com") }, "email"},
		{"redirect host of invalid UTF-8", func(b *CheckoutBody) { b.RedirectURL = s("http://\xe4") }, "redirectUrl"},
		{"redirect to an IDN host", func(b *CheckoutBody) { b.RedirectURL = s("https://bücher.example/") }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.edit(&b)
			_, err := c.ResolveCheckout(&b)
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && err == nil:
				t.Fatal("accepted")
			case tc.field != "" && err.Details["param"] != tc.field && err.Details["field"] != tc.field:
				t.Fatalf("refusal names %v, want %s", err.Details, tc.field)
			}
		})
	}
}

func TestRedirect(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", ""},
		{"https://shop.example/done/UID", "https://shop.example/done/ord_x"},
		{"https://shop.example/done?order=UID&x=1", "https://shop.example/done?order=ord_x&x=1"},
		{"https://shop.example/done", "https://shop.example/done?orderUid=ord_x"},
		{"https://shop.example/done?a=1", "https://shop.example/done?a=1&orderUid=ord_x"},
	} {
		if got := Redirect(tc.url, "ord_x"); got != tc.want {
			t.Errorf("Redirect(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
