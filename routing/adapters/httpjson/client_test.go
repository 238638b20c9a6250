package httpjson

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

func TestNewChecksConfig(t *testing.T) {
	cases := []struct {
		name        string
		cfg         Config
		base        string
		timeout     time.Duration
		errContains string
	}{
		{name: "defaults", cfg: Config{DefaultBaseURL: "https://api.example/", DefaultTimeout: 7 * time.Second},
			base: "https://api.example", timeout: 7 * time.Second},
		{name: "explicit", cfg: Config{BaseURL: "http://127.0.0.1:8080//", DefaultBaseURL: "https://api.example",
			Timeout: time.Second, DefaultTimeout: 7 * time.Second},
			base: "http://127.0.0.1:8080", timeout: time.Second},
		{name: "no scheme", cfg: Config{BaseURL: "api.example", DefaultTimeout: time.Second}, errContains: `base URL "api.example"`},
		{name: "other scheme", cfg: Config{BaseURL: "ftp://api.example", DefaultTimeout: time.Second}, errContains: "want http(s)://host"},
		{name: "no host", cfg: Config{BaseURL: "https://", DefaultTimeout: time.Second}, errContains: "want http(s)://host"},
		{name: "negative timeout", cfg: Config{BaseURL: "https://api.example", Timeout: -1}, errContains: "negative timeout"},
		{name: "no timeout at all", cfg: Config{BaseURL: "https://api.example"}, errContains: "no timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.cfg)
			if tc.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errContains) {
					t.Fatalf("err = %v, want one containing %q", err, tc.errContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.BaseURL() != tc.base || c.Timeout() != tc.timeout {
				t.Errorf("base %q timeout %v, want %q %v", c.BaseURL(), c.Timeout(), tc.base, tc.timeout)
			}
		})
	}
}

func newTestClient(t *testing.T, base string, timeout time.Duration, auth string) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: base, Timeout: timeout, Auth: BearerAuth(auth),
		KeepHeaders: []string{"x-request-id"}, Upstream: testUpstream})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDoExchangesJSON(t *testing.T) {
	type seen struct {
		method, path, accept, contentType, auth, body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Accept"), r.Header.Get("Content-Type"),
			r.Header.Get("Authorization"), string(b)}
		w.Header().Set("X-Request-Id", "r-1")
		w.Header().Set("Retry-After", "3")
		w.Header().Set("X-Dropped", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()

	c := newTestClient(t, srv.URL, 5*time.Second, "jwt")
	r, err := c.Do(context.Background(), http.MethodPost, c.BaseURL()+"/v0/quote", []byte(`{"dry":true}`))
	if err != nil {
		t.Fatal(err)
	}
	s := <-got
	want := seen{"POST", "/v0/quote", "application/json", "application/json", "Bearer jwt", `{"dry":true}`}
	if s != want {
		t.Errorf("upstream saw %+v, want %+v", s, want)
	}
	if r.Status != http.StatusCreated || string(r.Body) != `{"ok":true}` {
		t.Errorf("response %d %s", r.Status, r.Body)
	}
	if r.Header("X-REQUEST-ID") != "r-1" || r.Header("retry-after") != "3" {
		t.Errorf("kept headers lost: %q %q", r.Header("x-request-id"), r.Header("retry-after"))
	}
	if r.Header("x-dropped") != "" {
		t.Error("a header not asked for was kept")
	}

	// Without a key and without a body, neither credentials nor a content
	// type are sent.
	c = newTestClient(t, srv.URL, 5*time.Second, "")
	if _, err := c.Do(context.Background(), http.MethodGet, c.BaseURL()+"/v0/tokens", nil); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.auth != "" || s.contentType != "" || s.method != "GET" {
		t.Errorf("upstream saw %+v", s)
	}
}

func TestDoTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })

	cases := []struct {
		name    string
		timeout time.Duration
		ctx     func() (context.Context, context.CancelFunc)
		code    string
	}{
		{"configured timeout", 150 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, apierr.UpstreamTimeout},
		{"tighter caller deadline", 10 * time.Second, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, apierr.UpstreamTimeout},
		{"caller cancels", 10 * time.Second, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, apierr.UpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, srv.URL, tc.timeout, "")
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			_, err := c.Do(ctx, http.MethodGet, c.BaseURL()+"/slow", nil)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestDoUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c := newTestClient(t, base, 2*time.Second, "")
	_, err := c.Do(context.Background(), http.MethodGet, base+"/v1/tools", nil)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError || ae.Message != "the test upstream could not be reached" {
		t.Fatalf("err = %v, want UPSTREAM_ERROR", err)
	}

	// A context already done never reaches the upstream.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Do(ctx, http.MethodGet, base+"/v1/tools", nil); !errors.As(err, &ae) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
}

// An upstream that takes 200 ms is called 400 times at once: every call
// gets a connection of its own at once, so all are answered in about one
// latency. With the former 64 connections per host, the calls went in
// waves of 64 and those that waited past MaxConnWaitTimeout failed.
func TestConcurrentSlowCallsAreNotCappedByConnections(t *testing.T) {
	// Every call is held at the server until all of them are there at
	// once: a client that capped its connections below calls would never
	// get them all in, and its calls would end at the server's wait.
	const calls, wait = 400, 10 * time.Second
	var inflight atomic.Int32
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if inflight.Add(1) == calls {
			close(all)
		}
		select {
		case <-all:
			_, _ = io.WriteString(w, `{}`)
		case <-time.After(wait):
			http.Error(w, "not every call reached the server at once", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, 2*wait, "")
	errs := make(chan error, calls)
	for i := 0; i < calls; i++ {
		go func() {
			_, err := c.Do(context.Background(), http.MethodGet, srv.URL+"/", nil)
			errs <- err
		}()
	}
	for i := 0; i < calls; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("call %d: %v (%d of %d calls reached the server at once: connections capped them)", i, err, inflight.Load(), calls)
		}
	}
}
