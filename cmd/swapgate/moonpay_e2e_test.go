package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	standin "github.com/swapgate/swapgate/internal/standin/moonpay"
	"github.com/swapgate/swapgate/routing/adapters/moonpay"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// The on-ramp in live mode on MoonPay, through the real server against the
// MoonPay stand-in: the quote is MoonPay's buy quote with the partner's fee
// as MoonPay's extra fee; the checkout URL is MoonPay's widget URL with the
// order's fields, correctly signed (the stand-in's widget accepts it); the
// stand-in's signed webhooks move the order to COMPLETED, through every
// state, and the partner hears each onramp.* event in order; a forged
// webhook is refused with 400 and changes nothing, a replayed one is
// accepted and changes nothing; and an order whose webhook never came is
// caught up by the lookup.
func TestMoonPayOnrampEndToEnd(t *testing.T) {
	const (
		apiKey, secretKey, webhookKey = "pk_test_e2e", "sk_test_e2e", "wk_test_e2e"
		txHash                        = "0x7d3c1a2b4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
	)
	mp := standin.Start(standin.Config{APIKey: apiKey, SecretKey: secretKey, WebhookKey: webhookKey})
	t.Cleanup(mp.Close)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, func(c *app.Config) {
		c.Mode = app.ModeLive
		c.Quote.AggregatorURL = lifiToolsOnly(t)
		c.OnrampProvider = app.OnrampMoonPay
		c.MoonPay = moonpay.Config{APIURL: mp.URL(), WidgetURL: mp.WidgetURL(), APIKey: apiKey, SecretKey: secretKey, WebhookKey: webhookKey}
		c.OnrampLookupInterval = 200 * time.Millisecond
	})
	mp.SetWebhookURL(ts.base + app.MoonPayWebhookPath)
	_, key, hookID := onrampPartner(t, ts, rc, "MoonRamp", 120)
	ctx := context.Background()

	// The quote: 100 USD of USDC on Base by card is MoonPay's 4.50 fee,
	// the partner's 1.2 % (1.20) and a 0.05 network fee on top.
	var q struct {
		CryptoAmount string      `json:"cryptoAmount"`
		ExchangeRate json.Number `json:"exchangeRate"`
		Fees         struct {
			NetworkFee    json.Number `json:"networkFee"`
			ProcessingFee json.Number `json:"processingFee"`
			PartnerFee    json.Number `json:"partnerFee"`
			TotalFee      json.Number `json:"totalFee"`
		} `json:"fees"`
		TotalFiatAmount json.Number `json:"totalFiatAmount"`
	}
	quoteBody := map[string]any{"fiatCurrency": "USD", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": 8453, "walletAddress": onrampWallet}
	ts.post("/v1/onramp/quote", quoteBody, withKey(key)).decode(t, &q)
	if q.CryptoAmount != "100" || q.ExchangeRate != "1" || q.Fees.ProcessingFee != "4.50" || q.Fees.PartnerFee != "1.20" ||
		q.Fees.NetworkFee != "0.05" || q.Fees.TotalFee != "5.75" || q.TotalFiatAmount != "105.75" {
		t.Fatalf("quote %+v", q)
	}
	if n := mp.Calls("quote"); n != 1 {
		t.Fatalf("%d buy quotes for one quote", n)
	}
	// An asset MoonPay does not sell is not offered.
	ts.post("/v1/onramp/quote", map[string]any{"fiatCurrency": "USD", "fiatAmount": 100, "cryptoAsset": "USDT", "chainId": 8453}).
		wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "cryptoAsset")

	// The checkout: MoonPay's widget, signed.
	var co onrampCheckoutAnswer
	ts.post("/v1/onramp/checkout", onrampCheckoutBody("moon-1", nil), withKey(key)).decode(t, &co)
	uid := co.OrderUID
	if !onramp.ValidUID(uid) || co.Status != string(onramp.Created) || co.Quote.Fees.PartnerFee != "1.20" {
		t.Fatalf("checkout %+v", co)
	}
	if err := mp.VerifyWidgetURL(co.CheckoutURL); err != nil {
		t.Fatalf("checkout URL %s: %v", co.CheckoutURL, err)
	}
	u, err := url.Parse(co.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"apiKey": {apiKey}, "currencyCode": {"usdc_base"}, "walletAddress": {onrampWallet}, "baseCurrencyCode": {"usd"},
		"baseCurrencyAmount": {"100.00"}, "externalTransactionId": {uid}, "paymentMethod": {"credit_debit_card"},
		"redirectURL": {"https://shop.example/done?order=" + uid}}
	got := u.Query()
	delete(got, "signature")
	if !equalValues(got, want) {
		t.Fatalf("widget parameters %v\nwant %v", got, want)
	}
	resp, err := http.Get(co.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the widget refused the checkout URL: %d", resp.StatusCode)
	}

	// A forged webhook is refused and changes nothing.
	forged, err := json.Marshal(map[string]any{"type": "transaction_updated", "data": map[string]any{"id": "x", "status": "completed",
		"externalTransactionId": uid, "cryptoTransactionId": txHash}})
	if err != nil {
		t.Fatal(err)
	}
	before := ts.onrampStatus(t, uid)
	if st, err := mp.Post(ctx, forged, "wk_test_forged"); err != nil || st != http.StatusBadRequest {
		t.Fatalf("forged webhook: %d %v", st, err)
	}
	if after := ts.onrampStatus(t, uid); !bytes.Equal(after.Raw, before.Raw) {
		t.Fatalf("the forged webhook changed the order:\n%s\n→ %s", before.Raw, after.Raw)
	}
	if d := ts.onrampDeliveries(t, key, hookID); len(d) != 0 {
		t.Fatalf("the forged webhook published %v", d)
	}

	// MoonPay's signed webhooks: paid, then completed (the sent step
	// missed), then the completion again.
	for _, m := range []struct{ status, tx string }{{"pending", ""}, {"completed", txHash}, {"completed", txHash}} {
		if st, err := mp.Move(ctx, uid, m.status, m.tx, ""); err != nil || st != http.StatusOK {
			t.Fatalf("webhook %s: %d %v", m.status, st, err)
		}
	}
	st := ts.onrampStatus(t, uid)
	onrampCheckHistory(t, st, []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed})
	if *st.TxHash != txHash {
		t.Fatalf("txHash %s", *st.TxHash)
	}
	events := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}
	if got := ts.onrampDeliveries(t, key, hookID); !slices.Equal(got, slices.Sorted(slices.Values(events))) {
		t.Fatalf("deliveries %v", got)
	}
	waitUntil(t, "the partner hears every event", func() bool { return rc.count() >= len(events) })
	heard := rc.events(t)
	if got := eventNames(heard); !slices.Equal(got, events) {
		t.Fatalf("events %v, want %v", got, events)
	}
	for i, p := range heard {
		d := p.Data.(map[string]any)
		if d["orderUid"] != uid || d["status"] != string(st.History[i+1].Status) || d["partnerFee"] != 1.2 {
			t.Fatalf("event %d: %v", i, d)
		}
	}

	// A missed webhook: the stand-in completes a second order without
	// telling, and the lookup finds it.
	var co2 onrampCheckoutAnswer
	ts.post("/v1/onramp/checkout", onrampCheckoutBody("moon-2", nil), withKey(key)).decode(t, &co2)
	mp.Set(co2.OrderUID, "completed", txHash, "")
	waitUntil(t, "the lookup completes the second order", func() bool { return ts.onrampStatus(t, co2.OrderUID).Status == onramp.Completed })
	onrampCheckHistory(t, ts.onrampStatus(t, co2.OrderUID), []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed})
	if n := mp.Calls("lookup"); n == 0 {
		t.Fatal("no lookup was made")
	}
	if p := ts.onrampPage(t, http.MethodGet, onramp.CheckoutPath+uid, nil); p.status != http.StatusNotFound {
		t.Fatalf("live mode serves the sandbox checkout page: %d", p.status)
	}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
