package webhook_test

// The delivery client's SSRF guards, seen from outside the package (this
// file uses only the pool's exported API, so that it stands apart from the
// pool's own tests): a name that resolves to a forbidden address is
// refused when the dialer connects, and redirects are never followed.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors"
	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	hook "github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

const ssrfSecret = "ssrf-test-secret-0123456789"

type ssrfServer struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newSSRFServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *ssrfServer {
	t.Helper()
	s := &ssrfServer{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// startSSRFPool runs a pool over a fresh store holding one webhook at url,
// stored directly (as a registration accepted before its name was
// re-pointed would be), and publishes one event to it.
func startSSRFPool(t *testing.T, rawURL string, loopback bool, roots *x509.CertPool) (*pebblestore.Store, *hook.Registration) {
	t.Helper()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	w := &hook.Registration{PartnerID: "ptn_ssrf", URL: rawURL, Events: []string{hook.SwapCompleted}, Secret: ssrfSecret, Active: true}
	if err := s.CreateWebhook(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sys := actors.NewSystemWithLogger(log)
	t.Cleanup(sys.Shutdown)
	p, err := webhookpool.Start(sys, s, webhookpool.Config{AllowLoopback: loopback, RetryBase: time.Hour, ScanInterval: 20 * time.Millisecond,
		TLSConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	ev := hook.Event{Name: hook.SwapCompleted, Time: time.Now(), Data: hook.SwapData{TransactionID: "0xssrf", FromChain: 1, ToChain: 369, Status: "DONE"}}
	if err := p.Publish(context.Background(), w.PartnerID, ev); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// firstAttempt waits for the delivery's first recorded attempt.
func firstAttempt(t *testing.T, s *pebblestore.Store, w *hook.Registration) *hook.DeliveryRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs, err := s.Deliveries(context.Background(), w.PartnerID, w.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 && recs[0].Attempt >= 1 {
			return recs[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt recorded: %+v", recs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeliveryRefusesANameResolvingToLoopback: "localhost" resolves to
// 127.0.0.1 (and ::1); the dialer's check refuses every address it is
// handed, so the receiver listening there is never reached.
func TestDeliveryRefusesANameResolvingToLoopback(t *testing.T) {
	rc := newSSRFServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	u, err := url.Parse(rc.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	s, w := startSSRFPool(t, "https://localhost:"+u.Port()+"/hook", false, roots)
	rec := firstAttempt(t, s, w)
	if rec.State != hook.DeliveryRetrying || !strings.Contains(rec.Error, "forbidden address") || rec.StatusCode != 0 {
		t.Fatalf("attempt %+v: want a refusal by the URL policy", rec)
	}
	if n := rc.hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver was reached %d times", n)
	}
}

// TestDeliveryDoesNotFollowRedirects: a receiver answering a redirect,
// to a private address or to another receiver the policy would even
// allow, has failed the attempt with that status; the target is never
// asked.
func TestDeliveryDoesNotFollowRedirects(t *testing.T) {
	target := newSSRFServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, c := range []struct {
		status   int
		location string
	}{
		{http.StatusFound, "https://10.0.0.1/hook"},
		{http.StatusMovedPermanently, "https://[::1]/hook"},
		{http.StatusSeeOther, "https://169.254.169.254/latest/meta-data/"},
		{http.StatusTemporaryRedirect, target.srv.URL + "/hook"},
		{http.StatusPermanentRedirect, target.srv.URL + "/hook"},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			before := target.hits.Load()
			rc := newSSRFServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, c.location, c.status)
			})
			roots := x509.NewCertPool()
			roots.AddCert(rc.srv.Certificate())
			roots.AddCert(target.srv.Certificate())
			s, w := startSSRFPool(t, rc.srv.URL+"/hook", true, roots)
			rec := firstAttempt(t, s, w)
			want := "receiver answered HTTP " + strconv.Itoa(c.status)
			if rec.State != hook.DeliveryRetrying || rec.StatusCode != c.status || rec.Error != want {
				t.Fatalf("attempt %+v: want %q", rec, want)
			}
			if rc.hits.Load() != 1 || target.hits.Load() != before {
				t.Fatalf("redirecting receiver asked %d times, target %d", rc.hits.Load(), target.hits.Load()-before)
			}
		})
	}
}
