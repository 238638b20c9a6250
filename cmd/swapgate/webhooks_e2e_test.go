package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

const e2eSecret = "e2e-signing-secret-0123"

// signedReceiver is a partner's HTTPS endpoint that checks the signature in
// constant time and answers 401 on a mismatch, as the specification asks.
// Every signed delivery is also held to the API document's webhooks (its
// headers and payload); a mismatch fails the test when it ends.
type signedReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []http.Header
	body [][]byte
	// refused are the deliveries the document refused, reported when the
	// test ends: a delivery may arrive on the receiver's goroutine at any
	// time, even after the test's last step.
	refused []error
}

func newSignedReceiver(t *testing.T) *signedReceiver {
	rc := &signedReceiver{}
	c, err := contract()
	if err != nil {
		t.Fatalf("the API document: %v", err)
	}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !webhook.Verify([]byte(e2eSecret), b, r.Header.Get(webhook.HeaderSignature)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, r.Header.Clone())
		rc.body = append(rc.body, b)
		if err := c.CheckWebhook(r.Header, b); err != nil {
			rc.refused = append(rc.refused, fmt.Errorf("%w\nbody: %s", err, truncate(b, 2000)))
		}
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	// Cleanups run last first: the server closes, then what it received is
	// reported.
	t.Cleanup(func() {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, err := range rc.refused {
			t.Errorf("contract: %v", err)
		}
	})
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *signedReceiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

func hookBody(t *testing.T, url string, events []string, secret string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"url": url, "events": events, "secret": secret})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWebhooksEndToEnd(t *testing.T) {
	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
	})
	_, key := ts.createPartner("Hooks")
	_, otherKey := ts.createPartner("Other")
	post := func(path string, body []byte, k string) *envelope {
		return ts.do(http.MethodPost, path, body, withKey(k))
	}
	good := []string{webhook.SwapCompleted, webhook.DepositReceived}

	// Refusals.
	post("/v1/partner/webhooks", hookBody(t, "http://example.com/hook", good, e2eSecret), key).wantError(t, 400, "INVALID_PARAMS", "url")
	post("/v1/partner/webhooks", hookBody(t, "https://10.0.0.1/hook", good, e2eSecret), key).wantError(t, 400, "INVALID_PARAMS", "url")
	post("/v1/partner/webhooks", hookBody(t, "https://169.254.169.254/", good, e2eSecret), key).wantError(t, 400, "INVALID_PARAMS", "url")
	post("/v1/partner/webhooks", hookBody(t, rc.srv.URL, []string{"swap.done"}, e2eSecret), key).wantError(t, 400, "INVALID_PARAMS", "events")
	post("/v1/partner/webhooks", hookBody(t, rc.srv.URL, good, "short"), key).wantError(t, 400, "INVALID_PARAMS", "secret")
	post("/v1/partner/webhooks", []byte(`{"url":"`+rc.srv.URL+`","events":"swap.completed","secret":"`+e2eSecret+`"}`), key).wantError(t, 400, "VALIDATION_ERROR", "")
	post("/v1/partner/webhooks", []byte(`{`), key).wantError(t, 400, "INVALID_BODY", "")
	ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL, good, e2eSecret)).wantError(t, 401, "UNAUTHORIZED", "")

	// Registration.
	env := post("/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", good, e2eSecret), key)
	if env.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", env.Status, env.Raw)
	}
	var created map[string]any
	env.decode(t, &created)
	id, _ := created["id"].(string)
	if id == "" || created["createdAt"] == nil || created["active"] != true || created["secret"] != nil {
		t.Fatalf("created %v", created)
	}
	var list struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	ts.get("/v1/partner/webhooks", withKey(key)).decode(t, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0]["id"] != id || list.Webhooks[0]["updatedAt"] == nil {
		t.Fatalf("list %v", list)
	}
	if _, ok := list.Webhooks[0]["secret"]; ok {
		t.Fatal("list shows the secret")
	}
	ts.get("/v1/partner/webhooks", withKey(otherKey)).decode(t, &list)
	if len(list.Webhooks) != 0 {
		t.Fatalf("another partner sees %v", list)
	}

	// Another partner cannot touch it.
	post("/v1/partner/webhooks/"+id+"/test", nil, otherKey).wantError(t, 404, "NOT_FOUND", "")
	ts.get("/v1/partner/webhooks/"+id+"/deliveries", withKey(otherKey)).wantError(t, 404, "NOT_FOUND", "")
	ts.do(http.MethodDelete, "/v1/partner/webhooks/"+id, nil, withKey(otherKey)).wantError(t, 404, "NOT_FOUND", "")

	// Test delivery, signed, through the outbox and the pool.
	env = post("/v1/partner/webhooks/"+id+"/test", nil, key)
	var sent struct {
		DeliveryID string `json:"deliveryId"`
	}
	env.decode(t, &sent)
	deadline := time.Now().Add(10 * time.Second)
	for rc.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if rc.count() != 1 {
		t.Fatal("the receiver got no correctly signed request")
	}
	rc.mu.Lock()
	h, body := rc.reqs[0], rc.body[0]
	rc.mu.Unlock()
	if h.Get(webhook.HeaderDelivery) != sent.DeliveryID || h.Get(webhook.HeaderEvent) != webhook.TestEvent || h.Get(webhook.HeaderTimestamp) == "" {
		t.Fatalf("headers %v", h)
	}
	var payload struct {
		Event     string         `json:"event"`
		Timestamp int64          `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &payload); err != nil || payload.Event != webhook.TestEvent || payload.Data["test"] != true || payload.Timestamp == 0 {
		t.Fatalf("payload %s", body)
	}
	var deliveries struct {
		Deliveries []map[string]any `json:"deliveries"`
	}
	for time.Now().Before(deadline) {
		ts.get("/v1/partner/webhooks/"+id+"/deliveries", withKey(key)).decode(t, &deliveries)
		if len(deliveries.Deliveries) == 1 && deliveries.Deliveries[0]["state"] == "delivered" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := deliveries.Deliveries
	if len(d) != 1 || d[0]["id"] != sent.DeliveryID || d[0]["state"] != "delivered" || d[0]["statusCode"] != float64(200) || d[0]["attempt"] != float64(1) {
		t.Fatalf("deliveries %v", d)
	}

	// Limit of ten.
	for i := 1; i < 10; i++ {
		if env := post("/v1/partner/webhooks", hookBody(t, rc.srv.URL, good, e2eSecret), key); env.Status != http.StatusCreated {
			t.Fatalf("webhook %d: %s", i+1, env.Raw)
		}
	}
	env = post("/v1/partner/webhooks", hookBody(t, rc.srv.URL, good, e2eSecret), key)
	env.wantError(t, 400, "INVALID_PARAMS", "webhooks")
	if env.Error.Details["limit"] != float64(10) {
		t.Fatalf("limit details %v", env.Error.Details)
	}

	// Delete.
	var del map[string]any
	ts.do(http.MethodDelete, "/v1/partner/webhooks/"+id, nil, withKey(key)).decode(t, &del)
	if del["id"] != id || del["deleted"] != true {
		t.Fatalf("delete %v", del)
	}
	ts.do(http.MethodDelete, "/v1/partner/webhooks/"+id, nil, withKey(key)).wantError(t, 404, "NOT_FOUND", "")
}

func TestServeWebhookFlags(t *testing.T) {
	cfg, _, err := loadServeConfig([]string{"--webhook-pool-size", "3", "--webhook-retry-base", "2s",
		"--webhook-max-attempts", "4", "--allow-loopback-webhooks"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WebhookPoolSize != 3 || cfg.WebhookRetryBase != 2*time.Second || cfg.WebhookMaxAttempts != 4 || !cfg.AllowLoopbackWebhooks {
		t.Fatalf("config %+v", cfg)
	}
	def := app.DefaultConfig()
	if def.WebhookPoolSize != 64 || def.WebhookRetryBase != 30*time.Second || def.WebhookMaxAttempts != 8 || def.AllowLoopbackWebhooks {
		t.Fatalf("defaults %+v", def)
	}
}

// TestWebhookDeliveryLogsEveryAttempt: a receiver that fails twice and then
// accepts shows, in the deliveries list, one delivery with its three
// attempts in order, each with its status code.
func TestWebhookDeliveryLogsEveryAttempt(t *testing.T) {
	var mu sync.Mutex
	var seen []string // X-Service-Delivery of each request
	rc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !webhook.Verify([]byte(e2eSecret), b, r.Header.Get(webhook.HeaderSignature)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen = append(seen, r.Header.Get(webhook.HeaderDelivery))
		n := len(seen)
		mu.Unlock()
		if n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	roots := x509.NewCertPool()
	roots.AddCert(rc.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 20 * time.Millisecond
	})
	_, key := ts.createPartner("Flaky")
	var created struct {
		ID string `json:"id"`
	}
	ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.URL+"/hook", []string{webhook.SwapCompleted}, e2eSecret), withKey(key)).decode(t, &created)
	var sent struct {
		DeliveryID string `json:"deliveryId"`
	}
	ts.do(http.MethodPost, "/v1/partner/webhooks/"+created.ID+"/test", nil, withKey(key)).decode(t, &sent)

	type attempt struct {
		Attempt    int     `json:"attempt"`
		StatusCode *int    `json:"statusCode"`
		LatencyMs  *int64  `json:"latencyMs"`
		Error      *string `json:"error"`
		At         string  `json:"at"`
	}
	var list struct {
		Deliveries []struct {
			ID         string    `json:"id"`
			Attempt    int       `json:"attempt"`
			StatusCode *int      `json:"statusCode"`
			Error      *string   `json:"error"`
			State      string    `json:"state"`
			Attempts   []attempt `json:"attempts"`
		} `json:"deliveries"`
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ts.get("/v1/partner/webhooks/"+created.ID+"/deliveries", withKey(key)).decode(t, &list)
		if len(list.Deliveries) == 1 && list.Deliveries[0].State == webhook.DeliveryDelivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not delivered in time: %+v", list.Deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := list.Deliveries[0]
	if d.ID != sent.DeliveryID || d.Attempt != 3 || d.StatusCode == nil || *d.StatusCode != 200 || d.Error != nil {
		t.Fatalf("delivery summary %+v", d)
	}
	wantStatus := []int{500, 500, 200}
	if len(d.Attempts) != len(wantStatus) {
		t.Fatalf("%d attempts listed, want %d: %+v", len(d.Attempts), len(wantStatus), d.Attempts)
	}
	var prev time.Time
	for i, a := range d.Attempts {
		at, err := time.Parse(time.RFC3339Nano, a.At)
		if err != nil || a.Attempt != i+1 || a.StatusCode == nil || *a.StatusCode != wantStatus[i] || a.LatencyMs == nil || at.Before(prev) {
			t.Fatalf("attempt %d: %+v (at %v)", i+1, a, err)
		}
		if failed := wantStatus[i] != 200; failed != (a.Error != nil) {
			t.Fatalf("attempt %d: error %v for status %d", i+1, a.Error, wantStatus[i])
		}
		prev = at
	}
	if *d.Attempts[0].Error != "receiver answered HTTP 500" {
		t.Fatalf("first attempt's error %q", *d.Attempts[0].Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0] != sent.DeliveryID || seen[2] != sent.DeliveryID {
		t.Fatalf("receiver saw %v", seen)
	}
}
