package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// The fiat on-ramp through the real server: orders opened with POST
// /v1/onramp/checkout, played on the hosted checkout page the way a
// browser's forms post (the page's CSRF token, a same-origin Origin and
// Sec-Fetch-Site, 303 back to the page), carried by the desk to each end,
// and heard by the partner whose key opened them at an HTTPS receiver that
// refuses any delivery whose HMAC signature does not verify
// (signedReceiver).

// onrampWallet is where the tests' purchases are delivered: an address
// nothing else in the sandbox touches, so its balance moves only by them.
const onrampWallet = "0x3333333333333333333333333333333333333333"

// onrampStep is the sandbox desk's pace from a payment to the crypto sent
// and from there to completion.
const onrampStep = 20 * time.Millisecond

// onrampServer is a sandbox server whose desk moves a paid order on every
// onrampStep and which delivers webhooks to rc through one worker, one
// delivery at a time in publishing order, so that the receiver gets an
// order's events in the order of its transitions.
func onrampServer(t *testing.T, rc *signedReceiver, mutate func(*app.Config)) *testServer {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	return startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
		c.WebhookPoolSize = 1
		c.SandboxOnrampStep = onrampStep
		if mutate != nil {
			mutate(c)
		}
	})
}

// onrampPartner provisions a partner whose on-ramp fee is feeBps, with a
// webhook at rc subscribed to every event, and returns the partner's id and
// key and the webhook's id.
func onrampPartner(t *testing.T, ts *testServer, rc *signedReceiver, name string, feeBps int) (id, key, hookID string) {
	t.Helper()
	id, key = ts.createPartner(name, "--onramp-fee-bps", strconv.Itoa(feeBps))
	env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", webhook.Events(), e2eSecret), withKey(key))
	if env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	var hook struct{ ID string }
	env.decode(t, &hook)
	return id, key, hook.ID
}

// onrampCheckoutBody is the checkout of 100 USD of USDC on Base for
// onrampWallet, with extra fields set over it and the drop fields removed.
func onrampCheckoutBody(externalID string, extra map[string]any, drop ...string) map[string]any {
	b := map[string]any{
		"fiatCurrency": "USD", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": 8453,
		"walletAddress": onrampWallet, "redirectUrl": "https://shop.example/done?order=UID", "externalId": externalID,
	}
	for k, v := range extra {
		b[k] = v
	}
	for _, k := range drop {
		delete(b, k)
	}
	return b
}

// onrampCheckoutAnswer is the part of a checkout's answer the tests read.
type onrampCheckoutAnswer struct {
	OrderUID              string  `json:"orderUid"`
	CheckoutURL           string  `json:"checkoutUrl"`
	CryptoAsset           string  `json:"cryptoAsset"`
	ChainID               uint64  `json:"chainId"`
	EstimatedCryptoAmount string  `json:"estimatedCryptoAmount"`
	WalletAddress         string  `json:"walletAddress"`
	ExpiresAt             int64   `json:"expiresAt"`
	Status                string  `json:"status"`
	ExternalID            *string `json:"externalId"`
	Quote                 struct {
		CryptoAmount string      `json:"cryptoAmount"`
		ExchangeRate json.Number `json:"exchangeRate"`
		Fees         struct {
			PartnerFee json.Number `json:"partnerFee"`
		} `json:"fees"`
	} `json:"quote"`
}

// onrampCheckout opens an order with key (empty: anonymously) and checks
// that it is CREATED with a checkout page on this server.
func (ts *testServer) onrampCheckout(t *testing.T, key string, body map[string]any) onrampCheckoutAnswer {
	t.Helper()
	var opts []reqOpt
	if key != "" {
		opts = append(opts, withKey(key))
	}
	var co onrampCheckoutAnswer
	ts.post("/v1/onramp/checkout", body, opts...).decode(t, &co)
	if !onramp.ValidUID(co.OrderUID) || co.Status != string(onramp.Created) || co.CheckoutURL != ts.base+onramp.CheckoutPath+co.OrderUID ||
		co.EstimatedCryptoAmount == "" || co.EstimatedCryptoAmount != co.Quote.CryptoAmount || co.WalletAddress != body["walletAddress"] {
		t.Fatalf("checkout answer %+v", co)
	}
	return co
}

// onrampHistoryStep is one entry of an order's history in GET
// /v1/onramp/status.
type onrampHistoryStep struct {
	Status onramp.State `json:"status"`
	At     int64        `json:"at"`
	TxHash *string      `json:"txHash"`
	Reason *string      `json:"reason"`
}

// onrampOrderStatus is the part of GET /v1/onramp/status the tests read;
// Raw is its whole data, to see that a refused move changed nothing.
type onrampOrderStatus struct {
	OrderUID      string              `json:"orderUid"`
	ExternalID    *string             `json:"externalId"`
	Status        onramp.State        `json:"status"`
	CryptoAmount  string              `json:"cryptoAmount"`
	WalletAddress string              `json:"walletAddress"`
	ChainID       uint64              `json:"chainId"`
	TxHash        *string             `json:"txHash"`
	CreatedAt     int64               `json:"createdAt"`
	ExpiresAt     int64               `json:"expiresAt"`
	History       []onrampHistoryStep `json:"history"`
	Raw           json.RawMessage     `json:"-"`
}

func (ts *testServer) onrampStatus(t *testing.T, uid string) onrampOrderStatus {
	t.Helper()
	env := ts.get("/v1/onramp/status?orderUid=" + uid)
	var st onrampOrderStatus
	env.decode(t, &st)
	st.Raw = env.Data
	return st
}

// onrampStates are the states of an order's history, in order.
func onrampStates(st onrampOrderStatus) []onramp.State {
	var out []onramp.State
	for _, h := range st.History {
		out = append(out, h.Status)
	}
	return out
}

// onrampPageAnswer is a checkout page's answer: HTML, or a redirect.
type onrampPageAnswer struct {
	status   int
	location string
	body     string
}

// onrampPageClient does not follow redirects, so that a form's 303 is seen.
var onrampPageClient = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// onrampPage requests a checkout page; a form is posted as the page's own
// forms are, from a page of the same origin.
func (ts *testServer) onrampPage(t *testing.T, method, path string, form url.Values) onrampPageAnswer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, ts.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", ts.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := onrampPageClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return onrampPageAnswer{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(b)}
}

var onrampCSRFField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// onrampCSRF opens the order's checkout page and reads its forms' token.
func (ts *testServer) onrampCSRF(t *testing.T, uid string) string {
	t.Helper()
	p := ts.onrampPage(t, http.MethodGet, onramp.CheckoutPath+uid, nil)
	m := onrampCSRFField.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil {
		t.Fatalf("checkout page of %s: %d without a csrf field\n%s", uid, p.status, p.body)
	}
	return m[1]
}

// onrampAct presses one of the checkout page's buttons.
func (ts *testServer) onrampAct(t *testing.T, uid, csrf string, a onramp.Action) onrampPageAnswer {
	t.Helper()
	return ts.onrampPage(t, http.MethodPost, onramp.CheckoutPath+uid+"/"+string(a), url.Values{"csrf": {csrf}})
}

// onrampDeliveries are the events enqueued for the webhook, sorted. An
// event's delivery is recorded in the batch that stores the transition
// publishing it, so once a state shows in the status, so do its
// deliveries.
func (ts *testServer) onrampDeliveries(t *testing.T, key, hookID string) []string {
	t.Helper()
	var d struct {
		Deliveries []struct{ Event string }
	}
	ts.get("/v1/partner/webhooks/"+hookID+"/deliveries", withKey(key)).decode(t, &d)
	var out []string
	for _, x := range d.Deliveries {
		out = append(out, x.Event)
	}
	slices.Sort(out)
	return out
}

// onrampRefused presses a button the order's state does not allow and
// checks the refusal page's status and that the order and the partner's
// deliveries are as they were.
func (ts *testServer) onrampRefused(t *testing.T, key, hookID, uid, csrf string, a onramp.Action, status int) {
	t.Helper()
	before, sent := ts.onrampStatus(t, uid), ts.onrampDeliveries(t, key, hookID)
	p := ts.onrampAct(t, uid, csrf, a)
	want := "the order is " + string(before.Status)
	if status == http.StatusGone {
		want = "This checkout has expired"
	}
	if p.status != status || p.location != "" || !strings.Contains(p.body, want) {
		t.Fatalf("%s on a %s order: %d (Location %q), want %d saying %q\n%s", a, before.Status, p.status, p.location, status, want, p.body)
	}
	after := ts.onrampStatus(t, uid)
	if !bytes.Equal(after.Raw, before.Raw) {
		t.Fatalf("the refused %s changed the order:\n%s\n→ %s", a, before.Raw, after.Raw)
	}
	if got := ts.onrampDeliveries(t, key, hookID); !slices.Equal(got, sent) {
		t.Fatalf("the refused %s published: deliveries %v → %v", a, sent, got)
	}
}

// onrampCheckHistory checks the status's history against the path: its
// states, times in order from the creation, the delivery's transaction on
// CRYPTO_SENT, a reason on every end but COMPLETED.
func onrampCheckHistory(t *testing.T, st onrampOrderStatus, want []onramp.State) {
	t.Helper()
	if got := onrampStates(st); !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if st.History[0].At/1000 != st.CreatedAt {
		t.Fatalf("history starts at %d ms, the order was created at %d s", st.History[0].At, st.CreatedAt)
	}
	for i, h := range st.History {
		if i > 0 && h.At < st.History[i-1].At {
			t.Fatalf("history out of order: %+v", st.History)
		}
		switch h.Status {
		case onramp.CryptoSent:
			if h.TxHash == nil || st.TxHash == nil || *h.TxHash != *st.TxHash || !strings.HasPrefix(*h.TxHash, "0x") {
				t.Fatalf("CRYPTO_SENT step %+v, order txHash %v", h, st.TxHash)
			}
		case onramp.Failed, onramp.Refunded, onramp.Expired:
			if h.Reason == nil || *h.Reason == "" {
				t.Fatalf("%s step without a reason: %+v", h.Status, h)
			}
		}
	}
	if sent := slices.Contains(want, onramp.CryptoSent); sent != (st.TxHash != nil) {
		t.Fatalf("order txHash %v after %v", st.TxHash, want)
	}
}

// Each path of an order to each of its ends, through the checkout page:
// paid (the desk sends the crypto, then completes), the payment failed,
// paid then refunded (the desk's step is long enough that the order waits
// in PAYMENT_RECEIVED), and never paid (the desk's clock runs nearly a
// checkout's lifetime ahead of the edge's, so its own timer expires the
// order a few seconds after it opened, while the service runs). The status
// history follows the path; the partner hears one signed event per
// transition, in order, and none for the expiry; and every move the order's
// state does not allow, before and after the end, is refused with a page
// and changes nothing.
func TestOnrampOrderPathsToEachEnd(t *testing.T) {
	type refusal struct {
		action onramp.Action
		status int
	}
	tests := []struct {
		name   string
		mutate func(*app.Config)
		// actions are the buttons pressed, each answered 303 back to the
		// page.
		actions []onramp.Action
		history []onramp.State
		events  []string
		// refused are tried once the order has ended.
		refused []refusal
	}{
		{
			name:    "paid: COMPLETED",
			actions: []onramp.Action{onramp.Pay},
			history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed},
			events:  []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted},
			refused: []refusal{{onramp.Pay, http.StatusConflict}, {onramp.Refund, http.StatusConflict}, {onramp.Fail, http.StatusConflict}},
		},
		{
			name:    "the payment failed: FAILED",
			actions: []onramp.Action{onramp.Fail},
			history: []onramp.State{onramp.Created, onramp.Failed},
			events:  []string{webhook.OnrampFailed},
			refused: []refusal{{onramp.Pay, http.StatusConflict}, {onramp.Refund, http.StatusConflict}},
		},
		{
			name:    "paid then refunded: REFUNDED",
			mutate:  func(c *app.Config) { c.SandboxOnrampStep = time.Hour },
			actions: []onramp.Action{onramp.Pay, onramp.Refund},
			history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			events:  []string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded},
			refused: []refusal{{onramp.Pay, http.StatusConflict}, {onramp.Refund, http.StatusConflict}, {onramp.Fail, http.StatusConflict}},
		},
		{
			// The order expires 4 to 5 s after it opened: time to read its
			// page's token first.
			name: "never paid: EXPIRED",
			mutate: func(c *app.Config) {
				c.Now = func() time.Time { return time.Now().Add(onramp.CheckoutTTL - 5*time.Second) }
			},
			history: []onramp.State{onramp.Created, onramp.Expired},
			refused: []refusal{{onramp.Pay, http.StatusGone}, {onramp.Fail, http.StatusGone}},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newSignedReceiver(t)
			ts := onrampServer(t, rc, tt.mutate)
			_, key, hookID := onrampPartner(t, ts, rc, "Ramp", 120)
			ext := "shop-order-" + strconv.Itoa(i)
			co := ts.onrampCheckout(t, key, onrampCheckoutBody(ext, nil))
			uid := co.OrderUID
			csrf := ts.onrampCSRF(t, uid)
			if len(tt.actions) > 0 {
				// Nothing was paid, so there is nothing to refund.
				ts.onrampRefused(t, key, hookID, uid, csrf, onramp.Refund, http.StatusConflict)
			}
			for _, a := range tt.actions {
				if p := ts.onrampAct(t, uid, csrf, a); p.status != http.StatusSeeOther || p.location != "../"+uid {
					t.Fatalf("%s: %d, Location %q, want 303 to ../%s\n%s", a, p.status, p.location, uid, p.body)
				}
			}
			end := tt.history[len(tt.history)-1]
			var st onrampOrderStatus
			waitUntil(t, "the order is "+string(end), func() bool {
				st = ts.onrampStatus(t, uid)
				return st.Status == end
			})
			onrampCheckHistory(t, st, tt.history)
			if st.OrderUID != uid || st.ExternalID == nil || *st.ExternalID != ext || st.CryptoAmount != co.EstimatedCryptoAmount ||
				st.ChainID != 8453 || st.WalletAddress != onrampWallet || st.ExpiresAt != co.ExpiresAt {
				t.Fatalf("status %s", st.Raw)
			}
			if end == onramp.Expired {
				// The desk's clock, not the edge's, decided the expiry.
				if at := st.History[1].At; at < co.ExpiresAt*1000 {
					t.Fatalf("expired at %d ms, before expiresAt %d s", at, co.ExpiresAt)
				}
				if p := ts.onrampPage(t, http.MethodGet, onramp.CheckoutPath+uid, nil); p.status != http.StatusGone {
					t.Fatalf("the expired order's page: %d", p.status)
				}
			}

			// The events: one per transition that publishes, all enqueued
			// by the time the end shows, delivered one at a time.
			want := slices.Sorted(slices.Values(tt.events))
			if got := ts.onrampDeliveries(t, key, hookID); !slices.Equal(got, want) {
				t.Fatalf("deliveries %v, want %v", got, want)
			}
			waitUntil(t, "the partner hears every event", func() bool { return rc.count() >= len(tt.events) })
			events := rc.events(t)
			if got := eventNames(events); !slices.Equal(got, tt.events) {
				t.Fatalf("events %v, want %v in this order", got, tt.events)
			}
			for j, p := range events {
				step := st.History[j+1]
				d := p.Data.(map[string]any)
				txHash := ""
				if slices.Contains(tt.history[:j+2], onramp.CryptoSent) {
					txHash = *st.TxHash
				}
				reason := ""
				if step.Reason != nil {
					reason = *step.Reason
				}
				if d["orderUid"] != uid || d["externalId"] != ext || d["status"] != string(step.Status) ||
					d["fiatCurrency"] != "USD" || d["fiatAmount"] != 100.0 || d["partnerFee"] != 1.2 ||
					d["cryptoAsset"] != "USDC" || d["chainId"] != 8453.0 || d["cryptoAmount"] != co.EstimatedCryptoAmount ||
					d["walletAddress"] != onrampWallet || d["txHash"] != txHash || d["reason"] != reason ||
					d["updatedAt"] != float64(step.At/1000) || p.Timestamp != step.At/1000 {
					t.Fatalf("%s data %v (timestamp %d), want the order at its step %+v", p.Event, d, p.Timestamp, step)
				}
			}

			for _, r := range tt.refused {
				ts.onrampRefused(t, key, hookID, uid, csrf, r.action, r.status)
			}
			if rc.count() != len(tt.events) {
				t.Fatalf("the partner heard %v", eventNames(rc.events(t)))
			}
		})
	}
}

// onrampBaseUnits is a decimal amount of a token in its base units.
func onrampBaseUnits(t *testing.T, amount string, decimals uint8) *big.Int {
	t.Helper()
	r, ok := new(big.Rat).SetString(amount)
	if !ok {
		t.Fatalf("amount %q", amount)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	if !r.IsInt() {
		t.Fatalf("%s has more than %d decimals", amount, decimals)
	}
	return r.Num()
}

func onrampRat(t *testing.T, s json.Number) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(string(s))
	if !ok {
		t.Fatalf("number %q", s)
	}
	return r
}

// onrampTransaction is a line of GET /v1/partner/transactions.
type onrampTransaction struct {
	ID, Kind, Status, Provider               string
	ToChain                                  uint64
	FromToken, ToToken, FromAmount, ToAmount string
	FeeUSD                                   string `json:"feeUsd"`
	VolumeUSD                                string `json:"volumeUsd"`
}

func (ts *testServer) onrampTransactions(t *testing.T, key string) []onrampTransaction {
	t.Helper()
	var txs struct{ Transactions []onrampTransaction }
	ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
	return txs.Transactions
}

// A partner's completed order: the partner fee (120 bps of 100 USD) is in
// the partner's earnings, pending on evm, in the delivered USDC's base
// units at the quote's rate; the order is a transaction of kind onramp and
// counts in the stats; the wallet received exactly the order's crypto
// amount on Base. Before the order completed it was a line without a fee
// and no earning. An anonymous checkout of the same purchase is charged the
// anonymous tier's 150 bps.
func TestOnrampCompletedOrderInPartnerLedger(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, nil)
	id, key, _ := onrampPartner(t, ts, rc, "Ledger", 120)

	type asset struct {
		Symbol, Address string
		ChainID         uint64
		Decimals        uint8
	}
	var assets struct{ Assets []asset }
	ts.get("/v1/onramp/assets?chainId=8453").decode(t, &assets)
	i := slices.IndexFunc(assets.Assets, func(a asset) bool { return a.Symbol == "USDC" })
	if i < 0 || !strings.EqualFold(assets.Assets[i].Address, usdcBase) || assets.Assets[i].ChainID != 8453 {
		t.Fatalf("USDC on Base among the on-ramp's assets: %+v", assets)
	}
	usdc := assets.Assets[i]
	for _, bad := range []string{"0", "-1", "base", "1e400"} {
		ts.get("/v1/onramp/assets?chainId="+bad).wantError(t, 400, "INVALID_PARAMS", "chainId")
	}

	anon := ts.onrampCheckout(t, "", onrampCheckoutBody("anonymous", nil))
	if anon.Quote.Fees.PartnerFee != "1.50" {
		t.Fatalf("anonymous partner fee %s, want 1.50 (150 bps)", anon.Quote.Fees.PartnerFee)
	}

	before := ts.balance(t, 8453, onrampWallet, usdc.Address)
	co := ts.onrampCheckout(t, key, onrampCheckoutBody("ledger-1", nil))
	if co.Quote.Fees.PartnerFee != "1.20" {
		t.Fatalf("partner fee %s, want 1.20 (120 bps)", co.Quote.Fees.PartnerFee)
	}
	amount := onrampBaseUnits(t, co.EstimatedCryptoAmount, usdc.Decimals)

	// Opened, not completed: a line with its volume and no fee; nothing
	// earned.
	if txs := ts.onrampTransactions(t, key); len(txs) != 1 || txs[0].ID != co.OrderUID || txs[0].Kind != "onramp" ||
		txs[0].Status != string(onramp.Created) || txs[0].FeeUSD != "0.00" || txs[0].VolumeUSD != "100.00" {
		t.Fatalf("transactions of the open order %+v", txs)
	}
	var e earningsView
	ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &e)
	if e.summary() != "pending: settled:" {
		t.Fatalf("earnings before completion: %s", e.summary())
	}

	if p := ts.onrampAct(t, co.OrderUID, ts.onrampCSRF(t, co.OrderUID), onramp.Pay); p.status != http.StatusSeeOther {
		t.Fatalf("pay: %d\n%s", p.status, p.body)
	}
	var st onrampOrderStatus
	waitUntil(t, "the order completes", func() bool {
		st = ts.onrampStatus(t, co.OrderUID)
		return st.Status == onramp.Completed
	})

	ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &e)
	if e.PartnerID != id || e.summary() != "pending: evm=1.20/1 settled:" {
		t.Fatalf("earnings after completion: %s", e.summary())
	}
	txs := ts.onrampTransactions(t, key)
	if len(txs) != 1 || txs[0] != (onrampTransaction{ID: co.OrderUID, Kind: "onramp", Status: string(onramp.Completed), Provider: "sandbox",
		ToChain: 8453, FromToken: "USD", ToToken: usdc.Address, FromAmount: "100.00", ToAmount: amount.String(),
		FeeUSD: "1.20", VolumeUSD: "100.00"}) {
		t.Fatalf("transactions %+v", txs)
	}
	type figures struct {
		Quotes    int64
		VolumeUSD string `json:"volumeUsd"`
		FeesUSD   string `json:"feesUsd"`
	}
	var stats struct {
		Totals     figures
		ByProvider []struct {
			Provider string
			figures
		}
	}
	ts.get("/v1/partner/stats", withKey(key)).decode(t, &stats)
	want := figures{Quotes: 1, VolumeUSD: "100.00", FeesUSD: "1.20"}
	if stats.Totals != want || len(stats.ByProvider) != 1 || stats.ByProvider[0].Provider != "sandbox" || stats.ByProvider[0].figures != want {
		t.Fatalf("stats %+v", stats)
	}

	// The wallet got exactly the order's amount, in the transaction the
	// order names.
	if got := new(big.Int).Sub(ts.balance(t, 8453, onrampWallet, usdc.Address), before); got.Cmp(amount) != 0 {
		t.Fatalf("the wallet received %s, the order delivers %s (%s USDC)", got, amount, co.EstimatedCryptoAmount)
	}
	if r := ts.receipt(t, *st.TxHash); r.Status != "success" || r.ChainID != 8453 {
		t.Fatalf("delivery receipt %+v", r)
	}

	// Settlement would pay it like a quote's fee: 1.20 USD on evm.
	if env := ts.putWallet(key, "evm", wallet); env.Error != nil {
		t.Fatalf("fee wallet: %s", env.Raw)
	}
	var dry settleOut
	cli(t, &dry, "settle", "--data", ts.dir, "--ecosystem", "evm", "--dry-run")
	if len(dry.Payouts) != 1 || dry.Payouts[0].PartnerID != id || dry.Payouts[0].RowCount != 1 || dry.Payouts[0].TotalMicroUSD != 1_200_000 {
		t.Fatalf("settlement dry run %+v", dry)
	}

	// The ledger row, read from the store once the server is down: the fee
	// in the delivered token's base units, partnerFee ÷ exchangeRate,
	// truncated.
	fee := new(big.Rat).Quo(onrampRat(t, co.Quote.Fees.PartnerFee), onrampRat(t, co.Quote.ExchangeRate))
	fee.Mul(fee, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(usdc.Decimals)), nil)))
	feeUnits := new(big.Int).Quo(fee.Num(), fee.Denom())
	if feeUnits.Sign() <= 0 {
		t.Fatalf("fee of %s at %s is no base unit", co.Quote.Fees.PartnerFee, co.Quote.ExchangeRate)
	}
	dir := ts.dir
	ts.stop()
	acts := storeActivities(t, dir, id)
	if len(acts) != 1 || acts[0].ID != co.OrderUID || acts[0].FeeMicroUSD != 1_200_000 {
		t.Fatalf("ledger %+v", acts)
	}
	if e := acts[0].Earning; e == nil || *e != (account.Earning{Ecosystem: "evm", FeeToken: usdc.Address, FeeAmount: feeUnits.String(),
		State: account.EarningPending}) {
		t.Fatalf("earning %+v, want %s base units of %s pending on evm", e, feeUnits, usdc.Address)
	}
}

// An order still waiting for its payment when the service stops, restarted
// on the same data directory with a clock past the order's expiry: the desk
// applies the expiry as it starts, the partner hears nothing of it, and the
// page no longer takes a payment.
func TestOnrampExpiryWhileDownIsAppliedAtStart(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, nil)
	_, key, hookID := onrampPartner(t, ts, rc, "Restart", 120)
	co := ts.onrampCheckout(t, key, onrampCheckoutBody("restart-1", nil))
	csrf := ts.onrampCSRF(t, co.OrderUID)
	dir := ts.dir
	ts.stop()

	later := time.Until(time.Unix(co.ExpiresAt, 0).Add(time.Minute))
	ts = onrampServer(t, rc, func(c *app.Config) {
		c.DataDir = dir
		c.Now = func() time.Time { return time.Now().Add(later) }
	})
	var st onrampOrderStatus
	waitUntil(t, "the order is EXPIRED", func() bool {
		st = ts.onrampStatus(t, co.OrderUID)
		return st.Status == onramp.Expired
	})
	onrampCheckHistory(t, st, []onramp.State{onramp.Created, onramp.Expired})
	if at := st.History[1].At; at < (co.ExpiresAt+60)*1000 {
		t.Fatalf("expired at %d ms; the desk restarted a minute after expiresAt %d s", at, co.ExpiresAt)
	}
	if got := ts.onrampDeliveries(t, key, hookID); len(got) != 0 {
		t.Fatalf("the expiry published %v", got)
	}
	if p := ts.onrampPage(t, http.MethodGet, onramp.CheckoutPath+co.OrderUID, nil); p.status != http.StatusGone {
		t.Fatalf("the expired order's page: %d", p.status)
	}
	ts.onrampRefused(t, key, hookID, co.OrderUID, csrf, onramp.Pay, http.StatusGone)
	if rc.count() != 0 {
		t.Fatalf("the partner heard %v", eventNames(rc.events(t)))
	}
}

// Checkouts the server refuses, each before an order exists: a redirect
// that is not an absolute http(s) URL (INVALID_PARAMS naming the field as
// the caller spelled it), the two names of a pair with different values
// (VALIDATION_ERROR naming both), an unknown field (VALIDATION_ERROR
// naming it). A checkout repeated with its Idempotency-Key is the same
// order, and the key with another body is refused.
func TestOnrampCheckoutRefusals(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000 })
	_, key := ts.createPartner("Refusals", "--heavy", "1000", "--read", "1000")
	tests := []struct {
		name  string
		extra map[string]any
		drop  []string
		code  string
		// param is details.param of INVALID_PARAMS; field and conflictsWith
		// are the details of VALIDATION_ERROR.
		param, field, conflictsWith string
	}{
		{name: "javascript: redirect", extra: map[string]any{"redirectUrl": "javascript:alert(document.cookie)"}, code: "INVALID_PARAMS", param: "redirectUrl"},
		{name: "data: redirect", extra: map[string]any{"redirectUrl": "data:text/html,<script>alert(1)</script>"}, code: "INVALID_PARAMS", param: "redirectUrl"},
		{name: "relative redirect", extra: map[string]any{"redirectUrl": "/done?order=UID"}, code: "INVALID_PARAMS", param: "redirectUrl"},
		{name: "ftp returnUrl", extra: map[string]any{"returnUrl": "ftp://shop.example/done"}, drop: []string{"redirectUrl"}, code: "INVALID_PARAMS", param: "returnUrl"},
		{name: "redirectUrl and returnUrl differ", extra: map[string]any{"returnUrl": "https://other.example/"},
			code: "VALIDATION_ERROR", field: "returnUrl", conflictsWith: "redirectUrl"},
		{name: "cryptoAsset and cryptoToken differ", extra: map[string]any{"cryptoToken": "USDT"},
			code: "VALIDATION_ERROR", field: "cryptoAsset", conflictsWith: "cryptoToken"},
		{name: "chainId and cryptoChain differ", extra: map[string]any{"cryptoChain": "arb"},
			code: "VALIDATION_ERROR", field: "chainId", conflictsWith: "cryptoChain"},
		{name: "paymentMethod and paymentMode differ", extra: map[string]any{"paymentMethod": "credit_card", "paymentMode": "bank_transfer"},
			code: "VALIDATION_ERROR", field: "paymentMode", conflictsWith: "paymentMethod"},
		{name: "unknown field", extra: map[string]any{"fiatAmt": 100}, code: "VALIDATION_ERROR", field: "fiatAmt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := ts.post("/v1/onramp/checkout", onrampCheckoutBody("refused", tt.extra, tt.drop...), withKey(key))
			env.wantError(t, http.StatusBadRequest, tt.code, tt.param)
			if tt.field != "" && env.Error.Details["field"] != tt.field {
				t.Fatalf("details %v, want field %s", env.Error.Details, tt.field)
			}
			if tt.conflictsWith != "" && env.Error.Details["conflictsWith"] != tt.conflictsWith {
				t.Fatalf("details %v, want conflictsWith %s", env.Error.Details, tt.conflictsWith)
			}
		})
	}
	if txs := ts.onrampTransactions(t, key); len(txs) != 0 {
		t.Fatalf("refused checkouts opened orders: %+v", txs)
	}

	body, err := json.Marshal(onrampCheckoutBody("idempotent", nil))
	if err != nil {
		t.Fatal(err)
	}
	checkout := func(b []byte) *envelope {
		return ts.do(http.MethodPost, "/v1/onramp/checkout", b, withKey(key), withHeader("Idempotency-Key", "onramp-checkout-1"))
	}
	first, again := checkout(body), checkout(body)
	var a, b onrampCheckoutAnswer
	first.decode(t, &a)
	again.decode(t, &b)
	if first.Header.Get("Idempotent-Replayed") != "" || again.Header.Get("Idempotent-Replayed") != "true" ||
		!bytes.Equal(again.Raw, first.Raw) || b.OrderUID != a.OrderUID || !onramp.ValidUID(a.OrderUID) {
		t.Fatalf("replay: %s\nfirst: %s", again.Raw, first.Raw)
	}
	other, err := json.Marshal(onrampCheckoutBody("idempotent", map[string]any{"fiatAmount": 200}))
	if err != nil {
		t.Fatal(err)
	}
	checkout(other).wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "Idempotency-Key")
	if txs := ts.onrampTransactions(t, key); len(txs) != 1 || txs[0].ID != a.OrderUID {
		t.Fatalf("transactions after the replay %+v", txs)
	}
}
