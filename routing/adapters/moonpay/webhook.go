package moonpay

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// SignatureHeader is the header MoonPay signs its webhooks in.
const SignatureHeader = "Moonpay-Signature-V2"

// Webhook types that carry a buy transaction.
const (
	TypeCreated = "transaction_created"
	TypeUpdated = "transaction_updated"
	TypeFailed  = "transaction_failed"
)

// Event is a webhook's body.
type Event struct {
	Type               string      `json:"type"`
	Data               Transaction `json:"data"`
	ExternalCustomerID string      `json:"externalCustomerId,omitempty"`
}

// SignWebhook is the Moonpay-Signature-V2 value of a body sent at t: what
// MoonPay sends, and what a stand-in of it must send.
func SignWebhook(webhookKey string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",s=" + hex.EncodeToString(webhookMAC(webhookKey, ts, body))
}

func webhookMAC(key, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a Moonpay-Signature-V2 value against the raw body at now:
// a timestamp within WebhookTolerance and one s= value equal, in constant
// time, to the body's MAC. Any failure is onramp.ErrBadSignature.
func Verify(webhookKey, header string, body []byte, now time.Time) error {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "s":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	t, ok := parseUnix(ts)
	if !ok || len(sigs) == 0 {
		return fmt.Errorf("%w: the header has no t= timestamp or no s= signature", onramp.ErrBadSignature)
	}
	if d := now.Sub(t); d > WebhookTolerance || d < -WebhookTolerance {
		return fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", onramp.ErrBadSignature, t.UTC().Format(time.RFC3339), d.Round(time.Second), WebhookTolerance)
	}
	want := webhookMAC(webhookKey, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no signature matches", onramp.ErrBadSignature)
}

// Webhook verifies a webhook and reads the order update it carries: nil for
// an event that is not about a buy transaction of an order (another type,
// or a transaction made without an externalTransactionId).
func (p *Provider) Webhook(signature string, body []byte, now time.Time) (*onramp.Update, error) {
	if err := Verify(p.cfg.WebhookKey, signature, body, now); err != nil {
		return nil, err
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("moonpay: %w: %w", onramp.ErrMalformedWebhook, err)
	}
	switch ev.Type {
	case TypeCreated, TypeUpdated, TypeFailed:
	default:
		return nil, nil
	}
	if ev.Data.ExternalTransactionID == "" {
		return nil, nil
	}
	if err := ev.Data.check(); err != nil {
		return nil, fmt.Errorf("moonpay: %w: %w", onramp.ErrMalformedWebhook, err)
	}
	return ev.Data.update(), nil
}
