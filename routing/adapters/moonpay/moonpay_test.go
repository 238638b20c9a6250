package moonpay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

const (
	testAPIKey     = "pk_test_123"
	testSecretKey  = "sk_test_456"
	testWebhookKey = "wk_test_789"
)

// recorded serves one recorded answer with a status and keeps the requests
// it was sent.
type recorded struct {
	mu     sync.Mutex
	status int
	file   string
	reqs   []*http.Request
}

func (rec *recorded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, r.Clone(context.Background()))
	status, file := rec.status, rec.file
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if file != "" {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			panic(err)
		}
		w.Write(b)
	}
}

func newProvider(t *testing.T, h http.Handler) *Provider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p, err := New(Config{APIURL: srv.URL, WidgetURL: "https://buy-sandbox.moonpay.com", APIKey: testAPIKey, SecretKey: testSecretKey,
		WebhookKey: testWebhookKey, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(t *testing.T, cat *onramp.Catalogue, currency string, amount onramp.Cents, symbol string, chainID uint64, method string) *onramp.Request {
	t.Helper()
	cur, ok1 := cat.Currency(currency)
	m, ok2 := cat.Method(method)
	if !ok1 || !ok2 {
		t.Fatalf("catalogue lacks %s or %s", currency, method)
	}
	a, ok := cat.Asset(symbol, chainID)
	if !ok {
		// An asset the live catalogue leaves out, built from the full one.
		full := onramp.NewCatalogue(cat.Registry())
		if a, ok = full.Asset(symbol, chainID); !ok {
			t.Fatalf("no %s on %d", symbol, chainID)
		}
	}
	return &onramp.Request{Currency: cur, Amount: amount, Asset: a, Method: m, Wallet: "0x3333333333333333333333333333333333333333"}
}

func catalogue(t *testing.T) *onramp.Catalogue {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	return Catalogue(reg)
}

func TestQuote(t *testing.T) {
	cat := catalogue(t)
	now := time.Unix(1_800_000_000, 0)
	type want struct {
		path, query                  string
		crypto, rate                 string
		network, processing, partner onramp.Cents
		total                        onramp.Cents
	}
	tests := []struct {
		name     string
		status   int
		file     string
		currency string
		amount   onramp.Cents
		symbol   string
		chainID  uint64
		method   string
		bps      int
		want     *want
		// errCode and errParam describe a refusal; calls is how many
		// requests reach MoonPay.
		errCode, errParam string
		calls             int
	}{
		{name: "USDC on Base by card", status: 200, file: "buy_quote_usdc_base_usd.json", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, bps: 120, calls: 1, want: &want{
				path:   "/v3/currencies/usdc_base/buy_quote",
				query:  "apiKey=pk_test_123&areFeesIncluded=false&baseCurrencyAmount=100.00&baseCurrencyCode=usd&extraFeePercentage=1.20&paymentMethod=credit_debit_card",
				crypto: "99.871234", rate: "1.0012893", network: 5, processing: 399, partner: 120, total: 10_524}},
		{name: "ETH by SEPA, fees with a third decimal", status: 200, file: "buy_quote_eth_eur.json", currency: "EUR", amount: 25_000, symbol: "ETH",
			chainID: 1, method: onramp.BankTransfer, bps: 0, calls: 1, want: &want{
				path:   "/v3/currencies/eth/buy_quote",
				query:  "apiKey=pk_test_123&areFeesIncluded=false&baseCurrencyAmount=250.00&baseCurrencyCode=eur&extraFeePercentage=0.00&paymentMethod=sepa_bank_transfer",
				crypto: "0.08123456", rate: "3077.5123", network: 158, processing: 250, partner: 0, total: 25_408}},
		{name: "a total that does not add up", status: 200, file: "buy_quote_bad_total.json", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, bps: 120, calls: 1, errCode: apierr.UpstreamError},
		{name: "another amount than asked", status: 200, file: "buy_quote_other_amount.json", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, bps: 120, calls: 1, errCode: apierr.UpstreamError},
		{name: "refused amount", status: 400, file: "error_400_amount.json", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, calls: 1, errCode: apierr.UpstreamError},
		{name: "refused key", status: 401, file: "error_401.json", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, calls: 1, errCode: apierr.UpstreamError},
		{name: "an answer that is not JSON", status: 200, file: "README.md", currency: "USD", amount: 10_000, symbol: "USDC",
			chainID: 8453, method: onramp.CreditCard, calls: 1, errCode: apierr.UpstreamError},
		{name: "an asset without a code", currency: "USD", amount: 10_000, symbol: "CRO", chainID: 25, method: onramp.CreditCard,
			errCode: apierr.InvalidParams, errParam: "cryptoAsset"},
		{name: "a bank transfer in a currency without one", currency: "CAD", amount: 10_000, symbol: "ETH", chainID: 1,
			method: onramp.BankTransfer, errCode: apierr.InvalidParams, errParam: "paymentMethod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorded{status: tt.status, file: tt.file}
			p := newProvider(t, rec)
			r := request(t, cat, tt.currency, tt.amount, tt.symbol, tt.chainID, tt.method)
			q, err := p.Quote(context.Background(), r, tt.bps, now, onramp.QuoteTTL)
			if len(rec.reqs) != tt.calls {
				t.Fatalf("%d calls, want %d", len(rec.reqs), tt.calls)
			}
			if tt.errCode != "" {
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Code != tt.errCode || (tt.errParam != "" && ae.Details["param"] != tt.errParam) {
					t.Fatalf("err %v, want %s naming %q", err, tt.errCode, tt.errParam)
				}
				if tt.errCode == apierr.UpstreamError && ae.Details["provider"] != Name {
					t.Fatalf("details %v", ae.Details)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req := rec.reqs[0]
			if req.Method != http.MethodGet || req.URL.Path != tt.want.path || req.URL.RawQuery != tt.want.query || req.Header.Get("Authorization") != "" {
				t.Fatalf("sent %s %s?%s (Authorization %q)", req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Get("Authorization"))
			}
			w := tt.want
			if q.CryptoAmount != w.crypto || q.ExchangeRate != w.rate || q.Fees.Network != w.network || q.Fees.Processing != w.processing ||
				q.Fees.Partner != w.partner || q.Fees.Total != w.network+w.processing+w.partner || q.Total != w.total || q.Amount != tt.amount ||
				q.Method != tt.method || q.PartnerFeeBps != tt.bps || q.ChainID != tt.chainID || q.Symbol != r.Asset.Symbol ||
				!q.ExpiresAt.Equal(now.Add(onramp.QuoteTTL)) {
				t.Fatalf("quote %+v", q)
			}
		})
	}
}

// The widget URL carries the order's fields in a fixed order and the
// signature last: the base64 HMAC-SHA256 of the search string, computed
// here with crypto/hmac over the string written out by hand.
func TestOpenSignsWidgetURL(t *testing.T) {
	p := newProvider(t, http.NotFoundHandler())
	o := &onramp.Order{UID: "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", Wallet: "0x3333333333333333333333333333333333333333",
		Email: "a b+c@example.com", RedirectURL: "https://shop.example/done?order=UID&x=1",
		Quote: onramp.Quote{Currency: "USD", Amount: 10_000, Symbol: "USDC", ChainID: 8453, Method: onramp.CreditCard}}
	got, err := p.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	const search = "?apiKey=pk_test_123&currencyCode=usdc_base&walletAddress=0x3333333333333333333333333333333333333333" +
		"&baseCurrencyCode=usd&baseCurrencyAmount=100.00&externalTransactionId=ord_aaaaaaaaaaaaaaaaaaaaaaaaaa" +
		"&paymentMethod=credit_debit_card&email=a%20b%2Bc%40example.com" +
		"&redirectURL=https%3A%2F%2Fshop.example%2Fdone%3Forder%3Dord_aaaaaaaaaaaaaaaaaaaaaaaaaa%26x%3D1"
	m := hmac.New(sha256.New, []byte(testSecretKey))
	m.Write([]byte(search))
	sig := base64.StdEncoding.EncodeToString(m.Sum(nil))
	want := "https://buy-sandbox.moonpay.com" + search + "&signature=" + url.QueryEscape(sig)
	if got != want {
		t.Fatalf("widget URL\n%s\nwant\n%s", got, want)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("signature") != sig || u.Query().Get("redirectURL") != "https://shop.example/done?order=ord_aaaaaaaaaaaaaaaaaaaaaaaaaa&x=1" {
		t.Fatalf("decoded query %v", u.Query())
	}
	// The signature is over the search string as sent: any change of a
	// value changes it.
	if Sign(testSecretKey, strings.Replace(search, "100.00", "200.00", 1)) == sig {
		t.Fatal("the signature does not cover the amount")
	}
}

func TestLookup(t *testing.T) {
	const uid = "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	tests := []struct {
		name    string
		status  int
		file    string
		want    *onramp.Update
		errCode string
	}{
		{"no transaction yet", 404, "", nil, ""},
		{"an empty list", 200, "transactions_none.json", nil, ""},
		{"waiting for 3-D Secure", 200, "transactions_waiting.json", &onramp.Update{UID: uid, State: onramp.Created}, ""},
		{"paid", 200, "transactions_pending.json", &onramp.Update{UID: uid, State: onramp.PaymentReceived}, ""},
		{"sent", 200, "transactions_sent.json", &onramp.Update{UID: uid, State: onramp.CryptoSent,
			TxHash: "0x5e1c2b8f0b3f5b6f8a3c0d9e2f1a4b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"}, ""},
		{"a completed retry after a declined attempt", 200, "transactions_completed.json", &onramp.Update{UID: uid, State: onramp.Completed,
			TxHash: "0x5e1c2b8f0b3f5b6f8a3c0d9e2f1a4b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"}, ""},
		{"failed", 200, "transactions_failed.json", &onramp.Update{UID: uid, State: onramp.Failed,
			Reason: "the on-ramp provider failed the transaction: card declined"}, ""},
		{"the secret refused", 401, "error_401.json", nil, apierr.UpstreamError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorded{status: tt.status, file: tt.file}
			p := newProvider(t, rec)
			u, err := p.Lookup(context.Background(), &onramp.Order{UID: uid})
			if len(rec.reqs) != 1 {
				t.Fatalf("%d calls", len(rec.reqs))
			}
			req := rec.reqs[0]
			if req.URL.Path != "/v1/transactions/ext/"+uid || req.URL.RawQuery != "" || req.Header.Get("Authorization") != "Api-Key "+testSecretKey {
				t.Fatalf("sent %s?%s with Authorization %q", req.URL.Path, req.URL.RawQuery, req.Header.Get("Authorization"))
			}
			if tt.errCode != "" {
				var ae *apierr.Error
				if !errors.As(err, &ae) || ae.Code != tt.errCode {
					t.Fatalf("err %v, want %s", err, tt.errCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (u == nil) != (tt.want == nil) {
				t.Fatalf("update %+v, want %+v", u, tt.want)
			}
			if u != nil && (u.UID != tt.want.UID || u.State != tt.want.State || u.TxHash != tt.want.TxHash || u.Reason != tt.want.Reason || u.At.IsZero()) {
				t.Fatalf("update %+v, want %+v", u, tt.want)
			}
		})
	}
}

// independentSignature is the Moonpay-Signature-V2 value computed here
// with crypto/hmac, apart from the adapter's SignWebhook.
func independentSignature(key string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(itoa(ts) + "." + string(body)))
	return "t=" + itoa(ts) + ",s=" + hex.EncodeToString(m.Sum(nil))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestWebhook(t *testing.T) {
	p := newProvider(t, http.NotFoundHandler())
	updated, err := os.ReadFile("testdata/webhook_transaction_updated.json")
	if err != nil {
		t.Fatal(err)
	}
	failed, err := os.ReadFile("testdata/webhook_transaction_failed.json")
	if err != nil {
		t.Fatal(err)
	}
	other := []byte(`{"type":"sell_transaction_updated","data":{"id":"x","status":"completed","externalTransactionId":"ord_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}`)
	const at = int64(1_800_000_000)
	now := time.Unix(at, 0).Add(90 * time.Second)
	good := independentSignature(testWebhookKey, at, updated)
	if got := SignWebhook(testWebhookKey, time.Unix(at, 0), updated); got != good {
		t.Fatalf("SignWebhook %s, the independent computation %s", got, good)
	}
	tests := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		want   *onramp.Update
		bad    bool
	}{
		{"signed: paid", good, updated, now, &onramp.Update{UID: "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", State: onramp.PaymentReceived}, false},
		{"signed: failed", independentSignature(testWebhookKey, at, failed), failed, now,
			&onramp.Update{UID: "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", State: onramp.Failed, Reason: "the on-ramp provider failed the transaction: card declined"}, false},
		{"signed: another kind of event", independentSignature(testWebhookKey, at, other), other, now, nil, false},
		{"a second s= value, one of which matches", "t=" + itoa(at) + ",s=00ff," + strings.Split(good, ",")[1], updated, now,
			&onramp.Update{UID: "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", State: onramp.PaymentReceived}, false},
		{"another key", independentSignature("wk_test_other", at, updated), updated, now, nil, true},
		{"a body changed after signing", good, append([]byte(" "), updated...), now, nil, true},
		{"a timestamp changed after signing", strings.Replace(good, itoa(at), itoa(at+1), 1), updated, now, nil, true},
		{"stale: signed six minutes ago", good, updated, time.Unix(at, 0).Add(6 * time.Minute), nil, true},
		{"from the future", good, updated, time.Unix(at, 0).Add(-6 * time.Minute), nil, true},
		{"no header", "", updated, now, nil, true},
		{"no timestamp", "s=" + strings.Split(good, "s=")[1], updated, now, nil, true},
		{"a signature that is not hex", "t=" + itoa(at) + ",s=zz", updated, now, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := p.Webhook(tt.header, tt.body, tt.now)
			if tt.bad {
				if !errors.Is(err, onramp.ErrBadSignature) || u != nil {
					t.Fatalf("update %+v, err %v; want ErrBadSignature", u, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (u == nil) != (tt.want == nil) || (u != nil && (u.UID != tt.want.UID || u.State != tt.want.State || u.Reason != tt.want.Reason)) {
				t.Fatalf("update %+v, want %+v", u, tt.want)
			}
		})
	}
	// A signed body that is not JSON is refused, but not as a bad signature.
	junk := []byte("not json")
	if _, err := p.Webhook(independentSignature(testWebhookKey, at, junk), junk, now); !errors.Is(err, onramp.ErrMalformedWebhook) || errors.Is(err, onramp.ErrBadSignature) {
		t.Fatalf("unreadable body: %v", err)
	}
	// So is a signed transaction without its id, or whose delivery
	// transaction id is none.
	for _, body := range []string{
		`{"type":"transaction_updated","data":{"status":"pending","externalTransactionId":"ord_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}`,
		`{"type":"transaction_updated","data":{"id":"a6c8","status":"pending","cryptoTransactionId":"javascript:alert(1)","externalTransactionId":"ord_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}`,
	} {
		b := []byte(body)
		if u, err := p.Webhook(independentSignature(testWebhookKey, at, b), b, now); !errors.Is(err, onramp.ErrMalformedWebhook) || u != nil {
			t.Fatalf("%s: update %+v, err %v", body, u, err)
		}
	}
}

func TestCurrencyCodesAndCatalogue(t *testing.T) {
	tests := []struct {
		chainID uint64
		symbol  string
		code    string
	}{
		{1, "ETH", "eth"}, {1, "usdc", "usdc"}, {137, "USDC", "usdc_polygon"}, {42161, "USDC", "usdc_arbitrum"},
		{8453, "USDC", "usdc_base"}, {solanaID, "SOL", "sol"}, {bitcoinID, "BTC", "btc"}, {25, "CRO", ""}, {8453, "USDT", ""},
	}
	for _, tt := range tests {
		if code, ok := CurrencyCode(tt.chainID, tt.symbol); code != tt.code || ok != (tt.code != "") {
			t.Errorf("CurrencyCode(%d, %s) = %q, %v; want %q", tt.chainID, tt.symbol, code, ok, tt.code)
		}
	}
	cat := catalogue(t)
	if len(cat.Assets) == 0 {
		t.Fatal("no assets")
	}
	for _, a := range cat.Assets {
		if _, ok := CurrencyCode(a.ChainID, a.Symbol); !ok {
			t.Errorf("%s on %d has no code but is in the live catalogue", a.Symbol, a.ChainID)
		}
	}
	if _, ok := cat.Asset("CRO", 25); ok {
		t.Error("CRO on 25 is offered")
	}
	if _, ok := cat.Asset("USDC", 8453); !ok {
		t.Error("USDC on Base is not offered")
	}
}

func TestNewRefusesMissingKeys(t *testing.T) {
	tests := []Config{
		{SecretKey: "s", WebhookKey: "w"},
		{APIKey: "a", WebhookKey: "w"},
		{APIKey: "a", SecretKey: "s"},
		{APIKey: "a", SecretKey: "s", WebhookKey: "w", WidgetURL: "https://buy.moonpay.com?x=1"},
		{APIKey: "a", SecretKey: "s", WebhookKey: "w", APIURL: "ftp://api"},
	}
	for _, cfg := range tests {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
