package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func webhookServer(t *testing.T, rc *signedReceiver, dir string) *testServer {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	return startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
		if dir != "" {
			c.DataDir = dir
		}
	})
}

func (ts *testServer) webhookCount(key string) int {
	ts.t.Helper()
	var list struct {
		Webhooks []map[string]any `json:"webhooks"`
	}
	ts.get("/v1/partner/webhooks", withKey(key)).decode(ts.t, &list)
	return len(list.Webhooks)
}

// TestIdempotencyKeyEndToEnd: a repeated POST with the same Idempotency-Key
// and body gets the first answer byte for byte and creates nothing more,
// before and after a restart; another body under the key is refused naming
// the header; a repeated test delivery sends one delivery.
func TestIdempotencyKeyEndToEnd(t *testing.T) {
	rc := newSignedReceiver(t)
	dir := t.TempDir()
	ts := webhookServer(t, rc, dir)
	_, key := ts.createPartner("Idem")
	_, otherKey := ts.createPartner("Other")
	body := hookBody(t, rc.srv.URL+"/hook", []string{webhook.SwapCompleted}, e2eSecret)
	create := func(ts *testServer, k, idem string, b []byte) *envelope {
		return ts.do(http.MethodPost, "/v1/partner/webhooks", b, withKey(k), withHeader("Idempotency-Key", idem))
	}

	first := create(ts, key, "create-1", body)
	if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first create: %d %s", first.Status, first.Raw)
	}
	again := create(ts, key, "create-1", body)
	if again.Status != first.Status || !bytes.Equal(again.Raw, first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: %d %s\nwant %d %s", again.Status, again.Raw, first.Status, first.Raw)
	}
	if again.Header.Get("X-Request-Id") != first.Meta.RequestID || again.Meta.RequestID != first.Meta.RequestID {
		t.Fatalf("the replay's request id is %s (meta %s), want the first request's %s",
			again.Header.Get("X-Request-Id"), again.Meta.RequestID, first.Meta.RequestID)
	}
	if n := ts.webhookCount(key); n != 1 {
		t.Fatalf("%d webhooks after a repeated create, want 1", n)
	}
	other := hookBody(t, rc.srv.URL+"/other", []string{webhook.SwapCompleted}, e2eSecret)
	create(ts, key, "create-1", other).wantError(t, 400, "INVALID_PARAMS", "Idempotency-Key")
	create(ts, key, "", body).wantError(t, 400, "INVALID_PARAMS", "Idempotency-Key")
	// Another partner's key space is its own.
	if env := create(ts, otherKey, "create-1", other); env.Status != http.StatusCreated {
		t.Fatalf("another partner with the same key: %d %s", env.Status, env.Raw)
	}
	if n := ts.webhookCount(key); n != 1 {
		t.Fatalf("%d webhooks, want 1", n)
	}

	// A test delivery repeated with its key is one delivery.
	var created struct {
		ID string `json:"id"`
	}
	first.decode(t, &created)
	test := func(idem string) *envelope {
		return ts.do(http.MethodPost, "/v1/partner/webhooks/"+created.ID+"/test", nil, withKey(key), withHeader("Idempotency-Key", idem))
	}
	t1, t2 := test("test-1"), test("test-1")
	if t1.Status != http.StatusAccepted || !bytes.Equal(t1.Raw, t2.Raw) {
		t.Fatalf("test deliveries: %d %s / %d %s", t1.Status, t1.Raw, t2.Status, t2.Raw)
	}
	deadline := time.Now().Add(10 * time.Second)
	var deliveries struct {
		Deliveries []map[string]any `json:"deliveries"`
	}
	for time.Now().Before(deadline) {
		ts.get("/v1/partner/webhooks/"+created.ID+"/deliveries", withKey(key)).decode(t, &deliveries)
		if len(deliveries.Deliveries) > 0 && deliveries.Deliveries[0]["state"] == webhook.DeliveryDelivered {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(deliveries.Deliveries) != 1 || deliveries.Deliveries[0]["state"] != webhook.DeliveryDelivered || rc.count() != 1 {
		t.Fatalf("%d deliveries listed, %d received: %v", len(deliveries.Deliveries), rc.count(), deliveries.Deliveries)
	}

	// The answer was on disk before it was sent: a new process replays it.
	ts.stop()
	ts = webhookServer(t, rc, dir)
	after := create(ts, key, "create-1", body)
	if after.Status != first.Status || !bytes.Equal(after.Raw, first.Raw) {
		t.Fatalf("after restart: %d %s\nwant %s", after.Status, after.Raw, first.Raw)
	}
	if n := ts.webhookCount(key); n != 1 {
		t.Fatalf("%d webhooks after restart and repeat, want 1", n)
	}
}

// TestIdempotencyKeyConcurrent: twenty identical requests with one key at
// once create one webhook, and every one gets its answer.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := webhookServer(t, rc, "")
	_, key := ts.createPartner("Busy")
	body := hookBody(t, rc.srv.URL+"/hook", []string{webhook.SwapCompleted}, e2eSecret)
	const n = 20
	answers := make([]*envelope, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = ts.do(http.MethodPost, "/v1/partner/webhooks", body, withKey(key), withHeader("Idempotency-Key", "burst"))
		}()
	}
	close(start)
	wg.Wait()
	acted := 0
	for i, a := range answers {
		if a.Status != http.StatusCreated || !bytes.Equal(a.Raw, answers[0].Raw) {
			t.Fatalf("answer %d: %d %s\nwant %s", i, a.Status, a.Raw, answers[0].Raw)
		}
		if a.Header.Get("Idempotent-Replayed") == "" {
			acted++
		}
	}
	if acted != 1 {
		t.Fatalf("%d requests acted, want 1", acted)
	}
	if got := ts.webhookCount(key); got != 1 {
		t.Fatalf("%d webhooks after %d identical requests, want 1", got, n)
	}
}
