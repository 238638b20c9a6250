package moonpay

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// FuzzWebhook holds the webhook route's parsing, which reads a header and a
// body anyone can send: a header the body was not signed with is refused
// with onramp.ErrBadSignature, never a panic; a body signed with the
// account's key verifies, and reads as nothing, a malformed body, or an
// update of a known order state for a non-empty order id.
func FuzzWebhook(f *testing.F) {
	f.Add("t=1795000000,s=00", []byte(`{"type":"transaction_updated","data":{"status":"completed","externalTransactionId":"ord"}}`), true)
	f.Add("", []byte(`{}`), false)
	f.Add("t=,s=,s=zz", []byte(`[`), true)
	f.Add("s=ab,t=1795000000", []byte(`{"type":"transaction_failed","data":{"status":"failed","externalTransactionId":"x","failureReason":"card"}}`), true)
	p, err := New(Config{APIKey: "pk", SecretKey: "sk", WebhookKey: "wk"})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_795_000_000, 0)
	states := map[onramp.State]bool{onramp.Created: true, onramp.PaymentReceived: true, onramp.CryptoSent: true,
		onramp.Completed: true, onramp.Failed: true}
	f.Fuzz(func(t *testing.T, header string, body []byte, sign bool) {
		if !sign {
			_, err := p.Webhook(header, body, now)
			if err != nil && !errors.Is(err, onramp.ErrBadSignature) {
				t.Fatalf("an unsigned webhook failed otherwise: %v", err)
			}
			if Verify("wk", header, body, now) == nil && !carriesMAC(header, body) {
				t.Fatalf("header %q verified a body it does not sign", header)
			}
			return
		}
		u, err := p.Webhook(SignWebhook("wk", now, body), body, now)
		switch {
		case errors.Is(err, onramp.ErrBadSignature):
			t.Fatalf("a correctly signed body was refused: %v", err)
		case err != nil && !errors.Is(err, onramp.ErrMalformedWebhook):
			t.Fatalf("a signed body failed otherwise: %v", err)
		case u != nil && (u.UID == "" || !states[u.State]):
			t.Fatalf("update %+v", u)
		}
	})
}

// carriesMAC reports whether a header holds, among its s= values, the MAC
// of the body under its own (last) t= value: the one way a header may
// verify.
func carriesMAC(header string, body []byte) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "s":
			sigs = append(sigs, strings.ToLower(v))
		}
	}
	return slices.Contains(sigs, hex.EncodeToString(webhookMAC("wk", ts, body)))
}
