// Package moonpay is a stand-in for MoonPay's widget API, for end-to-end
// tests and the bench: the buy quote, the transaction lookup by external
// id, a widget page that checks its URL's signature, and transactions that
// a test moves from status to status, each move POSTed to a configured URL
// as MoonPay's signed webhook. It is written from MoonPay's documented
// protocol, apart from the service's adapter, so that a misreading in one
// is not mirrored in the other:
//
//   - GET /v3/currencies/{code}/buy_quote?apiKey&baseCurrencyCode&
//     baseCurrencyAmount&paymentMethod&areFeesIncluded=false&
//     extraFeePercentage answers baseCurrencyAmount, quoteCurrencyAmount,
//     quoteCurrencyPrice, feeAmount, extraFeeAmount, networkFeeAmount and
//     totalAmount (fees on top), 401 for another apiKey, 400 for what it
//     cannot price.
//   - GET /v1/transactions/ext/{id} with "Authorization: Api-Key <secret>"
//     answers the array of transactions under that external id, 404 when
//     there is none, 401 for another key.
//   - GET /widget?…&signature= answers 200 when the signature is the
//     base64 HMAC-SHA256, keyed with the secret key, of the search string
//     before "&signature=", and 401 otherwise.
//   - Webhooks: {type, data, externalCustomerId} signed in
//     "Moonpay-Signature-V2: t=<unix>,s=<hex HMAC-SHA256(webhook key,
//     t.body)>".
//
// Prices are fixed: each currency code's dollar price and the fiat
// currencies' rates per dollar are in Prices and Rates. Fees: a card pays
// 4.5 % with a minimum of 3.99, a bank transfer 1 %; the extra fee is
// extraFeePercentage of the amount; the network fee is fixed per code.
// Every figure is rounded to the cent, half up.
package moonpay

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config configures the stand-in: the account's keys, where webhooks go,
// and how long each API answer takes.
type Config struct {
	APIKey, SecretKey, WebhookKey string
	// WebhookURL receives the webhooks; it may also be set once the
	// receiving server listens (SetWebhookURL).
	WebhookURL string
	// Latency delays every API answer (quotes and lookups), as a distant
	// upstream would.
	Latency time.Duration
	// Now is the clock of transactions and webhook signatures; nil is
	// time.Now.
	Now func() time.Time
}

// Prices are the dollar prices of the currency codes it sells, and
// networkFees their network fees in dollars.
var (
	Prices = map[string]string{
		"eth": "3000", "eth_base": "3000", "eth_arbitrum": "3000", "eth_optimism": "3000",
		"usdc": "1", "usdc_base": "1", "usdc_arbitrum": "1", "usdc_polygon": "1", "usdc_optimism": "1",
		"usdt": "1", "usdt_polygon": "1", "usdt_arbitrum": "1", "pol_polygon": "0.5",
	}
	networkFees = map[string]string{"eth": "1.5", "usdc": "2.5", "usdt": "2.5"}
	// Rates are the fiat currencies' units per dollar.
	Rates = map[string]string{"usd": "1", "eur": "0.92", "gbp": "0.79", "cad": "1.37", "aud": "1.52", "chf": "0.88"}
)

// Transaction is a buy transaction as MoonPay answers it.
type Transaction struct {
	ID                    string  `json:"id"`
	CreatedAt             string  `json:"createdAt"`
	UpdatedAt             string  `json:"updatedAt"`
	Status                string  `json:"status"`
	FailureReason         *string `json:"failureReason"`
	WalletAddress         string  `json:"walletAddress"`
	CryptoTransactionID   *string `json:"cryptoTransactionId"`
	ExternalTransactionID string  `json:"externalTransactionId"`
}

// Server is a running stand-in.
type Server struct {
	cfg Config
	srv *httptest.Server

	mu     sync.Mutex
	txs    map[string][]*Transaction
	hook   string
	seq    int
	calls  map[string]int
	client *http.Client
}

// Start serves the stand-in on a loopback port.
func Start(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, txs: map[string][]*Transaction{}, hook: cfg.WebhookURL, calls: map[string]int{},
		client: &http.Client{Timeout: 10 * time.Second}}
	s.srv = httptest.NewServer(s)
	return s
}

// URL is the API's base URL; WidgetURL the widget's.
func (s *Server) URL() string       { return s.srv.URL }
func (s *Server) WidgetURL() string { return s.srv.URL + "/widget" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetWebhookURL sets where webhooks go.
func (s *Server) SetWebhookURL(u string) {
	s.mu.Lock()
	s.hook = u
	s.mu.Unlock()
}

// Calls is how many requests each endpoint ("quote", "lookup", "widget")
// has answered.
func (s *Server) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

func (s *Server) count(endpoint string) {
	s.mu.Lock()
	s.calls[endpoint]++
	s.mu.Unlock()
}

// ServeHTTP routes the stand-in's endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v3/currencies/") && strings.HasSuffix(r.URL.Path, "/buy_quote"):
		s.count("quote")
		s.wait(r.Context())
		s.buyQuote(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v3/currencies/"), "/buy_quote"))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/transactions/ext/"):
		s.count("lookup")
		s.wait(r.Context())
		s.lookup(w, r, strings.TrimPrefix(r.URL.Path, "/v1/transactions/ext/"))
	case r.Method == http.MethodGet && r.URL.Path == "/widget":
		s.count("widget")
		if err := s.VerifyWidgetURL(s.WidgetURL() + "?" + r.URL.RawQuery); err != nil {
			refuse(w, http.StatusUnauthorized, "UnauthorizedError", err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "MoonPay stand-in: buy %s for %s\n", r.URL.Query().Get("currencyCode"), r.URL.Query().Get("externalTransactionId"))
	default:
		refuse(w, http.StatusNotFound, "NotFoundError", "no such endpoint")
	}
}

func (s *Server) wait(ctx context.Context) {
	if s.cfg.Latency <= 0 {
		return
	}
	t := time.NewTimer(s.cfg.Latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func refuse(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg, "type": typ})
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("standin/moonpay: bad decimal " + s)
	}
	return r
}

// cents rounds half up to two places and writes the JSON number.
func cents(r *big.Rat) json.Number {
	scaled := new(big.Rat).Mul(r, big.NewRat(100, 1))
	q, m := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(scaled.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return json.Number(new(big.Rat).SetFrac(q, big.NewInt(100)).FloatString(2))
}

func (s *Server) buyQuote(w http.ResponseWriter, r *http.Request, code string) {
	q := r.URL.Query()
	if q.Get("apiKey") != s.cfg.APIKey {
		refuse(w, http.StatusUnauthorized, "UnauthorizedError", "Invalid API key")
		return
	}
	usd, ok := Prices[code]
	if !ok {
		refuse(w, http.StatusBadRequest, "BadRequestError", "Invalid currency code "+code)
		return
	}
	rate, ok := Rates[q.Get("baseCurrencyCode")]
	if !ok {
		refuse(w, http.StatusBadRequest, "BadRequestError", "Invalid baseCurrencyCode")
		return
	}
	base, ok := new(big.Rat).SetString(q.Get("baseCurrencyAmount"))
	if !ok || base.Sign() <= 0 {
		refuse(w, http.StatusBadRequest, "BadRequestError", "Invalid baseCurrencyAmount")
		return
	}
	if q.Get("areFeesIncluded") != "false" {
		refuse(w, http.StatusBadRequest, "BadRequestError", "the stand-in prices fees on top only")
		return
	}
	extra := rat("0")
	if v := q.Get("extraFeePercentage"); v != "" {
		if extra, ok = new(big.Rat).SetString(v); !ok || extra.Sign() < 0 || extra.Cmp(rat("10")) > 0 {
			refuse(w, http.StatusBadRequest, "BadRequestError", "Invalid extraFeePercentage")
			return
		}
	}
	var fee *big.Rat
	switch q.Get("paymentMethod") {
	case "credit_debit_card":
		fee = new(big.Rat).Mul(base, rat("0.045"))
		if fee.Cmp(rat("3.99")) < 0 {
			fee = rat("3.99")
		}
	case "ach_bank_transfer", "sepa_bank_transfer", "gbp_bank_transfer":
		fee = new(big.Rat).Mul(base, rat("0.01"))
	default:
		refuse(w, http.StatusBadRequest, "BadRequestError", "Invalid paymentMethod")
		return
	}
	network := rat("0.05")
	if v, ok := networkFees[code]; ok {
		network = rat(v)
	}
	network.Mul(network, rat(rate))
	price := new(big.Rat).Mul(rat(usd), rat(rate))
	crypto := new(big.Rat).Quo(base, price)
	extraAmount := new(big.Rat).Mul(base, new(big.Rat).Quo(extra, big.NewRat(100, 1)))
	feeN, extraN, netN := cents(fee), cents(extraAmount), cents(network)
	total := new(big.Rat).Set(base)
	for _, n := range []json.Number{feeN, extraN, netN} {
		total.Add(total, rat(string(n)))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"baseCurrencyCode": q.Get("baseCurrencyCode"), "baseCurrencyAmount": json.Number(base.FloatString(2)),
		"quoteCurrencyCode": code, "quoteCurrencyAmount": json.Number(crypto.FloatString(8)),
		"quoteCurrencyPrice": json.Number(price.FloatString(8)), "paymentMethod": q.Get("paymentMethod"),
		"feeAmount": feeN, "extraFeePercentage": json.Number(extra.FloatString(2)), "extraFeeAmount": extraN,
		"networkFeeAmount": netN, "totalAmount": json.Number(total.FloatString(2)),
	})
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request, ext string) {
	if r.Header.Get("Authorization") != "Api-Key "+s.cfg.SecretKey {
		refuse(w, http.StatusUnauthorized, "UnauthorizedError", "Invalid secret key")
		return
	}
	s.mu.Lock()
	txs := make([]Transaction, 0, len(s.txs[ext]))
	for _, t := range s.txs[ext] {
		txs = append(txs, *t)
	}
	s.mu.Unlock()
	if len(txs) == 0 {
		refuse(w, http.StatusNotFound, "NotFoundError", "Transaction not found")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(txs)
}

// VerifyWidgetURL checks a widget URL as MoonPay does: its own widget
// address, the account's apiKey, and a signature, last, that is the base64
// HMAC-SHA256 of the search string before it.
func (s *Server) VerifyWidgetURL(raw string) error {
	rest, ok := strings.CutPrefix(raw, s.WidgetURL()+"?")
	if !ok {
		return fmt.Errorf("not a widget URL of this stand-in: %s", raw)
	}
	i := strings.LastIndex(rest, "&signature=")
	if i < 0 {
		return errors.New("no signature")
	}
	search, sig := "?"+rest[:i], rest[i+len("&signature="):]
	got, err := url.QueryUnescape(sig)
	if err != nil {
		return fmt.Errorf("signature %q: %w", sig, err)
	}
	m := hmac.New(sha256.New, []byte(s.cfg.SecretKey))
	m.Write([]byte(search))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(got), []byte(want)) {
		return errors.New("the signature does not match the URL")
	}
	q, err := url.ParseQuery(rest[:i])
	if err != nil {
		return err
	}
	if q.Get("apiKey") != s.cfg.APIKey {
		return errors.New("another apiKey")
	}
	return nil
}

// Set puts the transaction of an external id in a status, creating it on
// first use, without a webhook: what a missed webhook leaves for the
// lookup to find. cryptoTx is the delivery's hash ("" for none yet) and
// reason a failure's.
func (s *Server) Set(ext, status, cryptoTx, reason string) Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now().UTC().Format(time.RFC3339Nano)
	list := s.txs[ext]
	var t *Transaction
	if len(list) > 0 {
		t = list[len(list)-1]
	} else {
		s.seq++
		t = &Transaction{ID: fmt.Sprintf("mp-tx-%06d", s.seq), CreatedAt: now, ExternalTransactionID: ext}
		s.txs[ext] = append(list, t)
	}
	t.Status, t.UpdatedAt = status, now
	t.CryptoTransactionID, t.FailureReason = nil, nil
	if cryptoTx != "" {
		t.CryptoTransactionID = &cryptoTx
	}
	if reason != "" {
		t.FailureReason = &reason
	}
	return *t
}

// Move is Set followed by the signed webhook of the change, POSTed to the
// webhook URL; it returns the receiver's status.
func (s *Server) Move(ctx context.Context, ext, status, cryptoTx, reason string) (int, error) {
	s.mu.Lock()
	created := len(s.txs[ext]) == 0
	s.mu.Unlock()
	t := s.Set(ext, status, cryptoTx, reason)
	typ := "transaction_updated"
	switch {
	case created:
		typ = "transaction_created"
	case status == "failed":
		typ = "transaction_failed"
	}
	body, err := json.Marshal(map[string]any{"type": typ, "data": t, "externalCustomerId": nil})
	if err != nil {
		return 0, err
	}
	return s.Post(ctx, body, s.cfg.WebhookKey)
}

// Post sends a webhook body signed with key (the account's webhook key, or
// another to forge one) at the stand-in's clock.
func (s *Server) Post(ctx context.Context, body []byte, key string) (int, error) {
	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	if hook == "" {
		return 0, errors.New("standin/moonpay: no webhook URL")
	}
	ts := strconv.FormatInt(s.cfg.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + "." + string(body)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Moonpay-Signature-V2", "t="+ts+",s="+hex.EncodeToString(m.Sum(nil)))
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("standin/moonpay: webhook: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
