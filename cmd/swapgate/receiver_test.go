package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// syncBuffer is a bytes.Buffer safe for the receiver's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadmeWebhookWalkthrough follows the README: start the local HTTPS
// receiver, serve with loopback webhooks allowed and the receiver's
// certificate trusted, register a fee wallet and a webhook with the API,
// send a test event, and watch it arrive with a valid signature.
func TestReadmeWebhookWalkthrough(t *testing.T) {
	const secret = "whsec_readme_walkthrough_01"
	var out syncBuffer
	certFile := filepath.Join(t.TempDir(), "receiver.pem")
	rcv, err := startReceiver("127.0.0.1:0", []byte(secret), certFile, 0, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.srv.Close()
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("receiver certificate does not parse")
	}
	ts := startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	})
	_, key := ts.createPartner("Walkthrough")
	ts.do(http.MethodPut, "/v1/partner/me/fee-wallets",
		[]byte(`{"ecosystem":"evm","address":"0x8ba1f109551bD432803012645Ac136ddd64DBA72"}`), withKey(key)).decode(t, &struct{}{})
	var hook struct{ ID string }
	body, _ := json.Marshal(map[string]any{"url": "https://" + rcv.Addr() + "/hook", "events": []string{"swap.completed"}, "secret": secret})
	ts.do(http.MethodPost, "/v1/partner/webhooks", body, withKey(key)).decode(t, &hook)
	ts.do(http.MethodPost, "/v1/partner/webhooks/"+hook.ID+"/test", nil, withKey(key)).decode(t, &struct{}{})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), `"signatureValid":true`) {
		if time.Now().After(deadline) {
			t.Fatalf("no verified delivery arrived; receiver printed: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var line receivedDelivery
	if err := json.Unmarshal([]byte(strings.SplitN(out.String(), "\n", 2)[0]), &line); err != nil {
		t.Fatal(err)
	}
	if line.Event != "swap.completed" || line.Delivery == "" {
		t.Fatalf("delivery %+v", line)
	}
	// The pool's counters are on /metrics.
	for !strings.Contains(string(ts.get("/metrics").Raw), `swapgate_webhook_deliveries_total{outcome="delivered"} 1`) {
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack the delivery: %s", ts.get("/metrics").Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReceiverFailShare sends eight signed deliveries and one unsigned to a
// receiver failing a quarter of them: the 4th and 8th valid ones get 500,
// the unsigned one 401 (not counted), the rest 204, and each printed line
// says what was answered.
func TestReceiverFailShare(t *testing.T) {
	secret := []byte("whsec_fail_share_0123")
	var out syncBuffer
	certFile := filepath.Join(t.TempDir(), "receiver.pem")
	rcv, err := startReceiver("127.0.0.1:0", secret, certFile, 0.25, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.srv.Close()
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	send := func(signed bool) int {
		body := []byte(`{"event":"swap.completed","data":{"test":true}}`)
		req, _ := http.NewRequest(http.MethodPost, "https://"+rcv.Addr()+"/hook", bytes.NewReader(body))
		if signed {
			req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, body))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var got []int
	for i := range 9 {
		got = append(got, send(i != 2))
	}
	want := []int{204, 204, 401, 204, 500, 204, 204, 204, 500}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answers %v, want %v", got, want)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines printed:\n%s", len(lines), out.String())
	}
	for i, l := range lines {
		var d receivedDelivery
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.Answered != want[i] || d.SignatureValid != (i != 2) {
			t.Fatalf("line %d %s: %v", i, l, err)
		}
	}
	var stderr bytes.Buffer
	if code := run([]string{"webhook-receiver", "--secret", "s", "--fail-share", "1"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Fatalf("--fail-share 1: exit %d", code)
	}
}
