package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/internal/apitest"
	standin "github.com/swapgate/swapgate/internal/standin/moonpay"
	"github.com/swapgate/swapgate/routing/adapters/moonpay"
)

// TestDocumentDescribesEveryRoute holds the API document to the edge's
// route table, both ways: every route a sandbox-mode server registers
// (sandbox mode serves them all) is an operation of the document, with the
// same rate-limit bucket, the same need of a partner key, the
// Idempotency-Key header exactly where the route honours it, and the
// anonymous ping's exemption; every operation of the document is a route;
// and the operations marked x-mode are exactly the routes a live-mode
// server does not register. Only the paths apitest.Outside names (metrics,
// the checkout pages, the rendered reference) are left out, each for its
// stated reason.
func TestDocumentDescribesEveryRoute(t *testing.T) {
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]apitest.Operation{}
	for _, o := range c.Operations() {
		ops[o.Method+" "+o.Path] = o
	}
	sandbox := startServer(t, nil)
	served := map[string]bool{}
	for _, r := range sandbox.app.Routes() {
		if why, ok := apitest.Outside(r.Path); ok {
			t.Logf("%s %s: not in the document: %s", r.Method, r.Path, why)
			continue
		}
		key := r.Method + " " + r.Path
		served[key] = true
		o, ok := ops[key]
		if !ok {
			t.Errorf("%s is registered but not in the API document", key)
			continue
		}
		if got, want := describe(o), describeRoute(r); got != want {
			t.Errorf("%s: the document says %s, the route table %s", key, got, want)
		}
	}
	for key, o := range ops {
		if o.Mode == "live" {
			continue // TestDocumentDescribesMoonPayWebhook
		}
		if !served[key] {
			t.Errorf("%s is in the API document but no route serves it", key)
		}
	}

	live := startServer(t, liveWithAggregator(t))
	inLive := map[string]bool{}
	for _, r := range live.app.Routes() {
		inLive[r.Method+" "+r.Path] = true
	}
	for key, o := range ops {
		if o.Mode == "live" {
			continue
		}
		if absent := !inLive[key]; absent != (o.Mode != "") {
			t.Errorf("%s: x-mode %q in the document, registered by a live-mode server: %v", key, o.Mode, !absent)
		}
	}
}

// TestDocumentDescribesMoonPayWebhook: the MoonPay webhook route a live
// server with MoonPay as its on-ramp serves is in the API document as the
// provider-facing operation it is (x-mode live, no API key, no rate-limit
// bucket, its signature header required), and the only x-mode live one; a
// server without MoonPay does not serve it.
func TestDocumentDescribesMoonPayWebhook(t *testing.T) {
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	var live []apitest.Operation
	for _, o := range c.Operations() {
		if o.Mode == "live" {
			live = append(live, o)
		}
	}
	want := apitest.Operation{Method: "POST", Path: app.MoonPayWebhookPath, Bucket: "none", Mode: "live"}
	if len(live) != 1 || live[0] != want {
		t.Fatalf("x-mode live operations %+v, want only %+v", live, want)
	}
	op := c.Doc().Paths.Value(app.MoonPayWebhookPath).Post
	if p := op.Parameters.GetByInAndName("header", moonpay.SignatureHeader); p == nil || !p.Required {
		t.Fatalf("the document does not require the %s header", moonpay.SignatureHeader)
	}
	const apiKey, secretKey, webhookKey = "pk_test_doc", "sk_test_doc", "wk_test_doc"
	mp := standin.Start(standin.Config{APIKey: apiKey, SecretKey: secretKey, WebhookKey: webhookKey})
	t.Cleanup(mp.Close)
	withMoonPay := startServer(t, func(c *app.Config) {
		liveWithAggregator(t)(c)
		c.OnrampProvider = app.OnrampMoonPay
		c.MoonPay = moonpay.Config{APIURL: mp.URL(), WidgetURL: mp.WidgetURL(), APIKey: apiKey, SecretKey: secretKey, WebhookKey: webhookKey}
	})
	served := func(ts *testServer) bool {
		for _, r := range ts.app.Routes() {
			if r.Method == want.Method && r.Path == want.Path {
				return true
			}
		}
		return false
	}
	if !served(withMoonPay) {
		t.Fatalf("a live server with MoonPay does not serve %s %s", want.Method, want.Path)
	}
	if served(startServer(t, nil)) {
		t.Fatalf("a sandbox server serves %s %s", want.Method, want.Path)
	}
}

// describe and describeRoute put an operation and a route in the same words.
func describe(o apitest.Operation) string {
	return fmt.Sprintf("bucket %s, partner only %v, idempotent %v, anonymous free %v", o.Bucket, o.PartnerOnly, o.Idempotent, o.AnonymousFree)
}

func describeRoute(r edge.Route) string {
	return fmt.Sprintf("bucket %s, partner only %v, idempotent %v, anonymous free %v", r.Bucket, r.PartnerOnly, r.Idempotent, r.AnonymousFree)
}

// TestQuoteStreamDocumentedLikeQuote: GET /v1/quote/stream takes exactly
// the parameters of GET /v1/quote (it parses them with the same code),
// with the same security and bucket, so the two descriptions cannot drift.
func TestQuoteStreamDocumentedLikeQuote(t *testing.T) {
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	paths := c.Doc().Paths
	q, s := paths.Value("/v1/quote"), paths.Value("/v1/quote/stream")
	if q == nil || s == nil || q.Get == nil || s.Get == nil {
		t.Fatal("the document lacks GET /v1/quote or GET /v1/quote/stream")
	}
	describeParams := func(op *openapi3.Operation) string {
		var out []string
		for _, p := range op.Parameters {
			b, err := json.Marshal(p.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	}
	if a, b := describeParams(q.Get), describeParams(s.Get); a != b {
		t.Errorf("the parameters differ:\n/v1/quote:\n%s\n/v1/quote/stream:\n%s", a, b)
	}
	qs, _ := json.Marshal(q.Get.Security)
	ss, _ := json.Marshal(s.Get.Security)
	if string(qs) != string(ss) || q.Get.Extensions["x-rate-limit-bucket"] != s.Get.Extensions["x-rate-limit-bucket"] {
		t.Errorf("security %s and %s, buckets %v and %v", qs, ss, q.Get.Extensions["x-rate-limit-bucket"], s.Get.Extensions["x-rate-limit-bucket"])
	}
}
