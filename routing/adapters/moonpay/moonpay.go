package moonpay

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// Name is the provider's id, kept on each order it serves.
const Name = "moonpay"

// Defaults of MoonPay's production addresses and of the adapter's bounds.
const (
	DefaultAPIURL    = "https://api.moonpay.com"
	DefaultWidgetURL = "https://buy.moonpay.com"
	DefaultTimeout   = 10 * time.Second
	// WebhookTolerance is how far a webhook's signed timestamp may be
	// from the service's clock, either way.
	WebhookTolerance = 5 * time.Minute
)

// upstream names MoonPay in the errors the adapter returns.
var upstream = httpjson.Upstream{Provider: Name, Prefix: "moonpay", Noun: "the on-ramp provider"}

// Config configures a Provider: MoonPay's two addresses and the account's
// three keys, all required but the addresses (MoonPay's production ones by
// default) and the timeout.
type Config struct {
	APIURL    string
	WidgetURL string
	// APIKey is the publishable key (pk_…), sent in quotes and widget URLs.
	APIKey string
	// SecretKey (sk_…) signs widget URLs and authenticates lookups.
	SecretKey string
	// WebhookKey (wk_…) verifies webhooks.
	WebhookKey string
	Timeout    time.Duration
}

// Provider is MoonPay behind onramp.Provider and onramp.Reporter. It is
// safe for concurrent use.
type Provider struct {
	cfg Config
	// quotes carries no credentials beyond the query's publishable key;
	// lookups carry the secret key in their Authorization header.
	quotes, lookups *httpjson.Client
	widget          string
}

var (
	_ onramp.Provider = (*Provider)(nil)
	_ onramp.Reporter = (*Provider)(nil)
)

// New checks the configuration and builds the provider.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" || cfg.SecretKey == "" || cfg.WebhookKey == "" {
		return nil, errors.New("moonpay: the API key, secret key and webhook key are all required")
	}
	if cfg.WidgetURL == "" {
		cfg.WidgetURL = DefaultWidgetURL
	}
	u, err := url.Parse(cfg.WidgetURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("moonpay: widget URL %q: want http(s)://host[/path] without a query", cfg.WidgetURL)
	}
	hc := httpjson.Config{BaseURL: cfg.APIURL, DefaultBaseURL: DefaultAPIURL, Timeout: cfg.Timeout, DefaultTimeout: DefaultTimeout, Upstream: upstream}
	quotes, err := httpjson.New(hc)
	if err != nil {
		return nil, fmt.Errorf("moonpay: %w", err)
	}
	hc.Auth = httpjson.HeaderAuth("Authorization", "Api-Key "+cfg.SecretKey)
	lookups, err := httpjson.New(hc)
	if err != nil {
		return nil, fmt.Errorf("moonpay: %w", err)
	}
	return &Provider{cfg: cfg, quotes: quotes, lookups: lookups, widget: strings.TrimRight(cfg.WidgetURL, "/")}, nil
}

// Name is "moonpay".
func (p *Provider) Name() string { return Name }

// buyQuote is the part of a buy quote the adapter reads.
type buyQuote struct {
	BaseCurrencyAmount  json.Number `json:"baseCurrencyAmount"`
	QuoteCurrencyAmount json.Number `json:"quoteCurrencyAmount"`
	QuoteCurrencyPrice  json.Number `json:"quoteCurrencyPrice"`
	FeeAmount           json.Number `json:"feeAmount"`
	ExtraFeeAmount      json.Number `json:"extraFeeAmount"`
	NetworkFeeAmount    json.Number `json:"networkFeeAmount"`
	TotalAmount         json.Number `json:"totalAmount"`
}

// moonpayError is the body of MoonPay's refusals.
type moonpayError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// Quote prices the request with MoonPay's buy quote, the partner's rate as
// MoonPay's extra fee (see the package comment).
func (p *Provider) Quote(ctx context.Context, r *onramp.Request, partnerFeeBps int, now time.Time, ttl time.Duration) (*onramp.Quote, error) {
	code, ok := CurrencyCode(r.Asset.ChainID, r.Asset.Symbol)
	if !ok {
		return nil, apierr.Param("cryptoAsset", fmt.Sprintf("%s on chain %d is not sold by the on-ramp provider", r.Asset.Symbol, r.Asset.ChainID)).
			With("provider", Name)
	}
	method, ok := paymentMethod(r.Method.ID, r.Currency.Code)
	if !ok {
		return nil, apierr.Param("paymentMethod", r.Method.ID+" is not offered in "+r.Currency.Code+" by the on-ramp provider").With("provider", Name)
	}
	q := url.Values{}
	q.Set("apiKey", p.cfg.APIKey)
	q.Set("baseCurrencyCode", strings.ToLower(r.Currency.Code))
	q.Set("baseCurrencyAmount", r.Amount.String())
	q.Set("paymentMethod", method)
	q.Set("areFeesIncluded", "false")
	q.Set("extraFeePercentage", new(big.Rat).SetFrac64(int64(partnerFeeBps), 100).FloatString(2))
	uri := p.quotes.BaseURL() + "/v3/currencies/" + url.PathEscape(code) + "/buy_quote?" + q.Encode()
	resp, err := p.quotes.Do(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	if resp.Status != http.StatusOK {
		return nil, failure(resp)
	}
	var bq buyQuote
	if err := decode(resp.Body, &bq); err != nil {
		return nil, upstream.BadAnswer("buy quote: %v", err)
	}
	f, err := bq.figures(r.Amount)
	if err != nil {
		return nil, upstream.BadAnswer("buy quote of %s %s in %s: %v", r.Amount, r.Currency.Code, code, err)
	}
	// The crypto bought is a token amount on a chain: in base units it
	// fits 256 bits, or the answer is not a real one.
	units := new(big.Rat).Mul(f.Crypto, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(r.Asset.Decimals)), nil)))
	if err := upstream.Uint256("quoteCurrencyAmount", new(big.Int).Quo(units.Num(), units.Denom())); err != nil {
		return nil, err
	}
	return onramp.Quoted(r, f, partnerFeeBps, now, ttl), nil
}

// figures reads a buy quote's numbers exactly and checks that they are the
// purchase asked for and add up.
func (bq *buyQuote) figures(amount onramp.Cents) (onramp.Figures, error) {
	var f onramp.Figures
	fields := []struct {
		name string
		v    json.Number
		out  *onramp.Cents
	}{
		{"baseCurrencyAmount", bq.BaseCurrencyAmount, &f.Amount},
		{"feeAmount", bq.FeeAmount, &f.Processing},
		{"extraFeeAmount", bq.ExtraFeeAmount, &f.Partner},
		{"networkFeeAmount", bq.NetworkFeeAmount, &f.Network},
	}
	for _, x := range fields {
		r, err := amountOf(x.name, x.v)
		if err != nil {
			return f, err
		}
		*x.out = onramp.RoundCents(r)
	}
	if f.Amount != amount {
		return f, fmt.Errorf("baseCurrencyAmount %s is not the %s asked for", bq.BaseCurrencyAmount, amount)
	}
	total, err := amountOf("totalAmount", bq.TotalAmount)
	if err != nil {
		return f, err
	}
	sum := f.Amount + f.Processing + f.Partner + f.Network
	if d := onramp.RoundCents(total) - sum; d > 2 || d < -2 {
		return f, fmt.Errorf("totalAmount %s is not the amount plus the fees (%s)", bq.TotalAmount, sum)
	}
	if f.Crypto, err = amountOf("quoteCurrencyAmount", bq.QuoteCurrencyAmount); err != nil {
		return f, err
	}
	if f.Price, err = amountOf("quoteCurrencyPrice", bq.QuoteCurrencyPrice); err != nil {
		return f, err
	}
	if f.Crypto.Sign() == 0 || f.Price.Sign() == 0 {
		return f, errors.New("quoteCurrencyAmount and quoteCurrencyPrice must be positive")
	}
	return f, nil
}

// amountOf reads a non-negative JSON number exactly.
func amountOf(name string, n json.Number) (*big.Rat, error) {
	if n == "" {
		return nil, fmt.Errorf("%s is missing", name)
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || r.Sign() < 0 {
		return nil, fmt.Errorf("%s %q is not a non-negative number", name, n)
	}
	return r, nil
}

// decode reads a JSON answer with its numbers kept exact.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// failure maps a MoonPay refusal onto the service's errors.
func failure(resp *httpjson.Response) error {
	var e moonpayError
	_ = json.Unmarshal(resp.Body, &e)
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(resp.Status)
	}
	f := &httpjson.Failure{Response: resp, Message: msg, Cause: fmt.Errorf("moonpay: %d %s: %s", resp.Status, e.Type, msg)}
	if e.Type != "" {
		f.Details = map[string]any{"upstreamType": e.Type}
	}
	return upstream.StatusError(f, httpjson.Classify(resp.Status, resp.Body))
}

// Open returns the order's signed widget URL.
func (p *Provider) Open(_ context.Context, o *onramp.Order) (string, error) {
	code, ok := CurrencyCode(o.Quote.ChainID, o.Quote.Symbol)
	if !ok {
		return "", apierr.Param("cryptoAsset", fmt.Sprintf("%s on chain %d is not sold by the on-ramp provider", o.Quote.Symbol, o.Quote.ChainID)).
			With("provider", Name)
	}
	params := [][2]string{
		{"apiKey", p.cfg.APIKey},
		{"currencyCode", code},
		{"walletAddress", o.Wallet},
		{"baseCurrencyCode", strings.ToLower(o.Quote.Currency)},
		{"baseCurrencyAmount", o.Quote.Amount.String()},
		{"externalTransactionId", o.UID},
	}
	if m, ok := paymentMethod(o.Quote.Method, o.Quote.Currency); ok {
		params = append(params, [2]string{"paymentMethod", m})
	}
	if o.Email != "" {
		params = append(params, [2]string{"email", o.Email})
	}
	if redirect := onramp.Redirect(o.RedirectURL, o.UID); redirect != "" {
		params = append(params, [2]string{"redirectURL", redirect})
	}
	var search strings.Builder
	for i, kv := range params {
		if i == 0 {
			search.WriteByte('?')
		} else {
			search.WriteByte('&')
		}
		search.WriteString(kv[0] + "=" + escape(kv[1]))
	}
	s := search.String()
	return p.widget + s + "&signature=" + url.QueryEscape(Sign(p.cfg.SecretKey, s)), nil
}

// escape URL-encodes a query value as browsers' encodeURIComponent does
// (a space as %20), the form MoonPay's own examples sign.
func escape(v string) string { return strings.ReplaceAll(url.QueryEscape(v), "+", "%20") }

// Sign is a widget URL's signature: the base64 HMAC-SHA256 of its search
// string (from the '?' on, values URL-encoded) keyed with the secret key.
func Sign(secretKey, search string) string {
	m := hmac.New(sha256.New, []byte(secretKey))
	m.Write([]byte(search))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Transaction is the part of a MoonPay transaction the adapter reads, in a
// lookup's answer and a webhook's data.
type Transaction struct {
	ID                    string `json:"id"`
	Status                string `json:"status"`
	ExternalTransactionID string `json:"externalTransactionId"`
	CryptoTransactionID   string `json:"cryptoTransactionId"`
	FailureReason         string `json:"failureReason"`
	UpdatedAt             string `json:"updatedAt"`
}

// MoonPay's buy statuses.
const (
	StatusWaitingPayment       = "waitingPayment"
	StatusWaitingAuthorization = "waitingAuthorization"
	StatusPending              = "pending"
	StatusFailed               = "failed"
	StatusCompleted            = "completed"
)

// check refuses a transaction the adapter cannot trust: one without its
// id, or whose delivery transaction id (shown to the buyer) is no
// transaction id on any chain (httpjson's TxHash).
func (t *Transaction) check() *apierr.Error {
	if err := upstream.Required("id", t.ID); err != nil {
		return err
	}
	if t.CryptoTransactionID != "" {
		if err := upstream.TxHash("cryptoTransactionId", t.CryptoTransactionID); err != nil {
			return err
		}
	}
	return nil
}

// update maps a transaction onto an order update; nil for a status the
// adapter does not know (ignored rather than guessed at).
func (t *Transaction) update() *onramp.Update {
	u := &onramp.Update{UID: t.ExternalTransactionID, TxHash: t.CryptoTransactionID}
	if at, err := time.Parse(time.RFC3339Nano, t.UpdatedAt); err == nil {
		u.At = at
	}
	switch t.Status {
	case StatusWaitingPayment, StatusWaitingAuthorization:
		u.State = onramp.Created
	case StatusPending:
		u.State = onramp.PaymentReceived
		if t.CryptoTransactionID != "" {
			u.State = onramp.CryptoSent
		}
	case StatusCompleted:
		u.State = onramp.Completed
	case StatusFailed:
		u.State = onramp.Failed
		u.Reason = "the on-ramp provider failed the transaction"
		if t.FailureReason != "" {
			u.Reason += ": " + t.FailureReason
		}
	default:
		return nil
	}
	return u
}

// progress orders a transaction's standing, to pick the one that speaks
// for an order among several: completed over pending over waiting over
// failed.
func progress(s string) int {
	switch s {
	case StatusCompleted:
		return 4
	case StatusPending:
		return 3
	case StatusWaitingAuthorization, StatusWaitingPayment:
		return 2
	case StatusFailed:
		return 1
	}
	return 0
}

// Lookup reads the order's transactions and reports the most advanced.
func (p *Provider) Lookup(ctx context.Context, o *onramp.Order) (*onramp.Update, error) {
	uri := p.lookups.BaseURL() + "/v1/transactions/ext/" + url.PathEscape(o.UID)
	resp, err := p.lookups.Do(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	if resp.Status == http.StatusNotFound {
		return nil, nil
	}
	if resp.Status != http.StatusOK {
		return nil, failure(resp)
	}
	var txs []Transaction
	if err := json.Unmarshal(resp.Body, &txs); err != nil {
		return nil, upstream.BadAnswer("transactions of %s: %v", o.UID, err)
	}
	var best *Transaction
	for i := range txs {
		t := &txs[i]
		if t.ExternalTransactionID != o.UID {
			return nil, upstream.BadAnswer("transactions of %s: one is %q's", o.UID, t.ExternalTransactionID)
		}
		if err := t.check(); err != nil {
			return nil, err
		}
		if best == nil || progress(t.Status) > progress(best.Status) ||
			(progress(t.Status) == progress(best.Status) && t.Status == StatusPending && t.CryptoTransactionID != "") {
			best = t
		}
	}
	if best == nil {
		return nil, nil
	}
	return best.update(), nil
}

// Unix seconds of a signature header, read strictly.
func parseUnix(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
