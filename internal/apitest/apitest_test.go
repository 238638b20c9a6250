package apitest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// loaded is the embedded document, loaded once for this package's tests.
var loaded = sync.OnceValues(Load)

// TestDocumentLoads checks that the embedded document is valid OpenAPI 3.1
// and routable, and that its examples match their schemas.
func TestDocumentLoads(t *testing.T) {
	start := time.Now()
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Doc().OpenAPI; v != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", v)
	}
	if len(c.Operations()) == 0 {
		t.Fatal("no operations")
	}
	t.Logf("loaded %d operations in %v", len(c.Operations()), time.Since(start))
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckResponseRefuses checks that the checks bite: a documented answer
// passes, and an undocumented field, a missing required field, an
// undocumented status, a missing X-Request-Id and an unknown path answered
// other than 404 NOT_FOUND each fail.
func TestCheckResponseRefuses(t *testing.T) {
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	const id = "6deb5649-aa27-4c60-abd5-2a9d5885306d"
	ok := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {id}}
	ping := `{"data":{"status":"ok","version":"1.0.0","timestamp":1795506446,"mode":"sandbox"},"error":null,"meta":{"requestId":"` + id + `","timestamp":1795506446}}`
	notFound := `{"data":null,"error":{"code":"NOT_FOUND","message":"no such path"},"meta":{"requestId":"` + id + `","timestamp":1795506446}}`
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		fails              bool
	}{
		{"documented", "GET", "/v1/ping", 200, ok, ping, false},
		{"extra field", "GET", "/v1/ping", 200, ok, strings.Replace(ping, `"mode"`, `"extra":1,"mode"`, 1), true},
		{"missing field", "GET", "/v1/ping", 200, ok, strings.Replace(ping, `"version":"1.0.0",`, "", 1), true},
		{"wrong enum", "GET", "/v1/ping", 200, ok, strings.Replace(ping, `"sandbox"`, `"test"`, 1), true},
		{"undocumented status", "GET", "/v1/ping", 418, ok, notFound, true},
		{"no request id", "GET", "/v1/ping", 200, http.Header{"Content-Type": {"application/json"}}, ping, true},
		{"unknown path", "GET", "/v1/nope", 404, ok, notFound, false},
		{"unknown path answered 200", "GET", "/v1/nope", 200, ok, ping, true},
		{"error code of another status", "GET", "/v1/chains", 429, ok, strings.Replace(notFound, "NOT_FOUND", "INVALID_PARAMS", 1), true},
		{"outside", "GET", "/metrics", 200, http.Header{}, "# HELP", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.path, nil)
			err := c.CheckResponse(req, tc.status, tc.header, []byte(tc.body))
			if (err != nil) != tc.fails {
				t.Fatalf("fails %v, want %v: %v", err != nil, tc.fails, err)
			}
		})
	}
}

// TestErrorCodesMatchTheDomain holds the document's ErrorCode list to the
// codes of routing/domain/apierr: the same codes, each with the HTTP status the
// envelope writer answers it with.
func TestErrorCodesMatchTheDomain(t *testing.T) {
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, alt := range c.Doc().Components.Schemas["ErrorCode"].Value.OneOf {
		code, _ := alt.Value.Enum[0].(string)
		documented = append(documented, code)
		status, _ := alt.Value.Extensions["x-http-status"].(float64)
		if want := (&apierr.Error{Code: code}).HTTPStatus(); int(status) != want {
			t.Errorf("%s: the document says HTTP %v, the envelope writer answers %d", code, status, want)
		}
	}
	slices.Sort(documented)
	if want := apierr.Codes(); !slices.Equal(documented, want) {
		t.Fatalf("the document's error codes %v, the domain's %v", documented, want)
	}
}

// TestCheckResponseNamesWhere checks that a refusal names the place in the
// body and the reason, in a line a test log can show.
func TestCheckResponseNamesWhere(t *testing.T) {
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	const id = "6deb5649-aa27-4c60-abd5-2a9d5885306d"
	body := `{"data":{"status":"ok","version":"1.0.0","timestamp":1,"mode":"sandbox","extra":true},"error":null,"meta":{"requestId":"` + id + `","timestamp":1}}`
	req := httptest.NewRequest("GET", "http://127.0.0.1/v1/ping", nil)
	err = c.CheckResponse(req, 200, http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {id}}, []byte(body))
	if err == nil || !strings.Contains(err.Error(), "/v1/ping") || !strings.Contains(err.Error(), "extra") || len(err.Error()) > 600 {
		t.Fatalf("want a short refusal naming the path and the field, got %v", err)
	}
}

// TestCheckWebhook checks that a delivery as the service signs it passes,
// and that an unknown event, a missing or malformed signature header and an
// undocumented payload field fail.
func TestCheckWebhook(t *testing.T) {
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	data := webhook.TestPayloadData("dlv_1")
	body, err := webhook.Event{Name: webhook.TestEvent, Time: time.Unix(1795506446, 0), Data: data}.Body()
	if err != nil {
		t.Fatal(err)
	}
	headers := func(event, sig string) http.Header {
		h := http.Header{}
		h.Set(webhook.HeaderEvent, event)
		h.Set(webhook.HeaderDelivery, "dlv_1")
		h.Set(webhook.HeaderTimestamp, "1795506446")
		if sig != "" {
			h.Set(webhook.HeaderSignature, sig)
		}
		return h
	}
	sig := webhook.Sign([]byte("a-secret-of-16-chars"), body)
	if err := c.CheckWebhook(headers(webhook.TestEvent, sig), body); err != nil {
		t.Fatalf("a test delivery: %v", err)
	}
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
	}{
		"unknown event":     {headers("swap.teleported", sig), body},
		"no signature":      {headers(webhook.TestEvent, ""), body},
		"signature not hex": {headers(webhook.TestEvent, "sha256="+sig), body},
		"another event":     {headers(webhook.SwapFailed, sig), body},
		"extra field":       {headers(webhook.TestEvent, sig), []byte(strings.Replace(string(body), `"tool"`, `"extra":1,"tool"`, 1))},
	} {
		if err := c.CheckWebhook(tc.h, tc.body); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}

// TestCheckExecuteSlippageError checks that the document holds execute's
// SLIPPAGE_ERROR to its details (toAmountMin, currentToAmount, newQuoteId)
// and its other 400 refusals to none.
func TestCheckExecuteSlippageError(t *testing.T) {
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	const id = "6deb5649-aa27-4c60-abd5-2a9d5885306d"
	check := func(errJSON string) error {
		body := `{"data":null,"error":` + errJSON + `,"meta":{"requestId":"` + id + `","timestamp":1}}`
		req := httptest.NewRequest("POST", "http://127.0.0.1/v1/execute", strings.NewReader(`{"quoteId":"qt_0"}`))
		req.Header.Set("Content-Type", "application/json")
		return c.CheckResponse(req, 400, http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {id}}, []byte(body))
	}
	for _, ok := range []string{
		`{"code":"SLIPPAGE_ERROR","message":"m","details":{"toAmountMin":"995","currentToAmount":"990","newQuoteId":"qt_1"}}`,
		`{"code":"INVALID_PARAMS","message":"m","details":{"param":"quoteId"}}`,
		`{"code":"INVALID_BODY","message":"m"}`,
	} {
		if err := check(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"code":"SLIPPAGE_ERROR","message":"m"}`,
		`{"code":"SLIPPAGE_ERROR","message":"m","details":{"toAmountMin":"995","currentToAmount":"990"}}`,
		`{"code":"SLIPPAGE_ERROR","message":"m","details":{"toAmountMin":"9.5","currentToAmount":"990","newQuoteId":"qt_1"}}`,
		`{"code":"PRICE_CHANGED","message":"m","details":{}}`,
	} {
		if err := check(bad); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}
