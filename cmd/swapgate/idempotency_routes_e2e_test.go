package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// idempotentCase is one route declared idempotent, and how to make one
// request to it that acts: prepare does what the request needs first and
// returns its path and body (nil: none).
type idempotentCase struct {
	route   string // the route table's method and path
	prepare func(t *testing.T) (path string, body any)
}

// TestIdempotencyKeyEveryRoute: every route the route table declares
// idempotent, sent twice with one Idempotency-Key and one body, answers
// the second time with the first answer byte for byte (its data, meta and
// status), marked Idempotent-Replayed. The table names exactly the routes
// the server declares idempotent, and every POST that creates or sends
// something is among them: the webhook resend too, which answered
// resent true and then resent false.
func TestIdempotencyKeyEveryRoute(t *testing.T) {
	hr := newHookReceiver(t)
	hr.setFail(true)
	roots := x509.NewCertPool()
	roots.AddCert(hr.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookMaxAttempts = 1
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0
	})
	_, key := ts.createPartner("Idempotent", "--swap-fee-bps", "0")
	hookBytes := hookBody(t, hr.srv.URL+"/hook", []string{webhook.SwapCompleted}, e2eSecret)
	var hook struct {
		ID string `json:"id"`
	}
	ts.do(http.MethodPost, "/v1/partner/webhooks", hookBytes, withKey(key)).decode(t, &hook)

	cases := []idempotentCase{
		{"POST /v1/partner/webhooks", func(t *testing.T) (string, any) {
			return "/v1/partner/webhooks", json.RawMessage(hookBody(t, hr.srv.URL+"/other", []string{webhook.SwapFailed}, e2eSecret))
		}},
		{"POST /v1/partner/webhooks/{id}/test", func(t *testing.T) (string, any) {
			return "/v1/partner/webhooks/" + hook.ID + "/test", nil
		}},
		{"POST /v1/partner/webhooks/{id}/deliveries/{deliveryId}/resend", func(t *testing.T) (string, any) {
			// A test delivery the receiver refuses, dead after its one
			// attempt, is resendable.
			var sent struct {
				DeliveryID string `json:"deliveryId"`
			}
			ts.do(http.MethodPost, "/v1/partner/webhooks/"+hook.ID+"/test", nil, withKey(key)).decode(t, &sent)
			waitUntil(t, "the test delivery is dead", func() bool {
				var list struct {
					Deliveries []struct{ ID, State string } `json:"deliveries"`
				}
				ts.get("/v1/partner/webhooks/"+hook.ID+"/deliveries", withKey(key)).decode(t, &list)
				for _, d := range list.Deliveries {
					if (d.ID == sent.DeliveryID || sent.DeliveryID == "") && d.State == webhook.DeliveryDead {
						sent.DeliveryID = d.ID
						return true
					}
				}
				return false
			})
			return "/v1/partner/webhooks/" + hook.ID + "/deliveries/" + sent.DeliveryID + "/resend", nil
		}},
		{"POST /v1/execute", func(t *testing.T) (string, any) {
			var q anyQuote
			ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
				"fromAmount", "110000000", "fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
			ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(110000000))
			b := ts.broadcast(t, 42161, wallet, q.tx(t))
			return "/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}
		}},
		{"POST /v1/execute/deposit/submit", func(t *testing.T) (string, any) {
			var q anyQuote
			ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
				"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"), withKey(key)).decode(t, &q)
			b := ts.broadcast(t, 1, wallet, q.tx(t))
			return "/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}
		}},
		{"POST /v1/inbound-receiver/register", func(t *testing.T) (string, any) {
			m := playStep1(t, ts, key, "swapgate/e2e/idempotency-every-route")
			return "/v1/inbound-receiver/register", m.registration(t, plsx369)
		}},
		{"POST /v1/onramp/checkout", func(t *testing.T) (string, any) {
			return "/v1/onramp/checkout", onrampCheckoutBody("idem-every-route", nil)
		}},
		{"POST /v1/sandbox/broadcast", func(t *testing.T) (string, any) {
			return "/v1/sandbox/broadcast", map[string]any{"chainId": 42161, "from": wallet,
				"transactionRequest": map[string]string{"to": usdcArb, "data": approveData(receiverAddr, big.NewInt(1))}}
		}},
		{"POST /v1/sandbox/faucet", func(t *testing.T) (string, any) {
			return "/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": receiverAddr, "token": usdcArb, "amount": "1000000"}
		}},
		{"POST /v1/sandbox/gas", func(t *testing.T) (string, any) {
			return "/v1/sandbox/gas", map[string]any{"chainId": 8453, "baseFeePerGas": "5000000"}
		}},
	}

	var declared, tabled []string
	for _, r := range ts.app.Routes() {
		if r.Idempotent {
			declared = append(declared, r.Method+" "+r.Path)
		}
	}
	for _, c := range cases {
		tabled = append(tabled, c.route)
	}
	sort.Strings(declared)
	sort.Strings(tabled)
	if !slices.Equal(declared, tabled) {
		t.Errorf("routes declared idempotent:\n  %v\nroutes this test sends twice:\n  %v", declared, tabled)
	}

	placeholder := regexp.MustCompile(`\{[A-Za-z]+\}`)
	for i, c := range cases {
		t.Run(placeholder.ReplaceAllString(c.route, "_"), func(t *testing.T) {
			path, body := c.prepare(t)
			var raw []byte
			if body != nil {
				var err error
				if raw, err = json.Marshal(body); err != nil {
					t.Fatal(err)
				}
			}
			idem := withHeader("Idempotency-Key", "every-route-"+string(rune('a'+i)))
			first := ts.do(http.MethodPost, path, raw, withKey(key), idem)
			if first.Status < 200 || first.Status > 299 || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("first request: %d %s", first.Status, first.Raw)
			}
			again := ts.do(http.MethodPost, path, raw, withKey(key), idem)
			if again.Status != first.Status || !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("the same key and body again answered %d (replayed %q):\n%s\nthe first answer was %d:\n%s",
					again.Status, again.Header.Get("Idempotent-Replayed"), again.Raw, first.Status, first.Raw)
			}
		})
	}
}
