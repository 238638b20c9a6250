package moonpay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// crafted serves a recorded answer with one change made to it.
func crafted(t *testing.T, file string, change func(v any) any) http.Handler {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(change(v))
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// wantRefused fails unless err is the on-ramp provider's invalid-answer
// error naming field.
func wantRefused(t *testing.T, err error, field string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || ae.Details["provider"] != Name {
		t.Fatalf("err = %v, want UPSTREAM_ERROR from %s", err, Name)
	}
	if !strings.HasPrefix(ae.Message, "the on-ramp provider sent an invalid answer: ") || !strings.Contains(ae.Message, field) {
		t.Fatalf("message %q does not name %s", ae.Message, field)
	}
}

// TestQuoteRefusesInvalidAnswer: a buy quote with one bad amount is
// refused, UPSTREAM_ERROR naming the field; no quote comes out of it.
func TestQuoteRefusesInvalidAnswer(t *testing.T) {
	cat := catalogue(t)
	set := func(k string, val any) func(any) any {
		return func(v any) any { v.(map[string]any)[k] = val; return v }
	}
	tooBig := json.Number("1" + strings.Repeat("0", 80))
	for _, tc := range []struct {
		name   string
		change func(any) any
		field  string
	}{
		{"crypto amount beyond 256 bits in base units", set("quoteCurrencyAmount", tooBig), "quoteCurrencyAmount"},
		{"crypto amount negative", set("quoteCurrencyAmount", json.Number("-99.87")), "quoteCurrencyAmount"},
		{"crypto amount in words", set("quoteCurrencyAmount", "lots"), "invalid number"},
		{"price absent", func(v any) any { delete(v.(map[string]any), "quoteCurrencyPrice"); return v }, "quoteCurrencyPrice"},
		{"fee negative", set("feeAmount", json.Number("-3.99")), "feeAmount"},
		{"total absent", func(v any) any { delete(v.(map[string]any), "totalAmount"); return v }, "totalAmount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, crafted(t, "buy_quote_usdc_base_usd.json", tc.change))
			q, err := p.Quote(context.Background(), request(t, cat, "USD", 10_000, "USDC", 8453, onramp.CreditCard), 120, time.Unix(1_800_000_000, 0), onramp.QuoteTTL)
			if err == nil {
				t.Fatalf("accepted: %+v", q)
			}
			wantRefused(t, err, tc.field)
		})
	}
}

// TestLookupRefusesInvalidTransaction: a transaction without its id, or
// with a delivery transaction id that is no transaction id, is refused.
func TestLookupRefusesInvalidTransaction(t *testing.T) {
	const uid = "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	set := func(k string, val any) func(any) any {
		return func(v any) any { v.([]any)[0].(map[string]any)[k] = val; return v }
	}
	for _, tc := range []struct {
		name   string
		change func(any) any
		field  string
	}{
		{"no id", func(v any) any { delete(v.([]any)[0].(map[string]any), "id"); return v }, "id"},
		{"empty id", set("id", ""), "id"},
		{"a script for the delivery transaction", set("cryptoTransactionId", "javascript:alert(1)"), "cryptoTransactionId"},
		{"markup for the delivery transaction", set("cryptoTransactionId", "<b>0x5e1c</b>"), "cryptoTransactionId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, crafted(t, "transactions_sent.json", tc.change))
			u, err := p.Lookup(context.Background(), &onramp.Order{UID: uid})
			if err == nil {
				t.Fatalf("accepted: %+v", u)
			}
			wantRefused(t, err, tc.field)
		})
	}
}
