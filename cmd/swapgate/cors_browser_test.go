package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/internal/browsertest"
)

// corsCall is what a page's script read of one fetch to the API: the
// status, the exposed headers and the envelope's error code, or the
// TypeError a fetch the browser blocked throws.
type corsCall struct {
	Status      int    `json:"status"`
	RequestID   string `json:"requestId"`
	MetaID      string `json:"metaId"`
	RateLimit   string `json:"rateLimit"`
	RatePolicy  string `json:"ratePolicy"`
	Code        string `json:"code"`
	Message     string `json:"message"`
	QuoteID     string `json:"quoteId"`
	FetchFailed string `json:"fetchFailed"`
}

// corsCallJS fetches url from the page with headers and reads the answer
// as a partner's page would.
const corsCallJS = `(async (url, init) => {
  try {
    const r = await fetch(url, init);
    const j = await r.json();
    return {
      status: r.status,
      requestId: r.headers.get("X-Request-Id") || "",
      metaId: j.meta ? j.meta.requestId : "",
      rateLimit: r.headers.get("RateLimit") || "",
      ratePolicy: r.headers.get("RateLimit-Policy") || "",
      code: j.error ? j.error.code : "",
      message: j.error ? j.error.message : "",
      quoteId: j.data && j.data.quote ? j.data.quote.id : (j.data && j.data.id ? j.data.id : ""),
    };
  } catch (e) {
    return { fetchFailed: String(e) };
  }
})(%s, %s)`

// corsFetch runs one fetch in the page b shows.
func corsFetch(t *testing.T, b *browsertest.Browser, url string, init map[string]any) corsCall {
	t.Helper()
	u, _ := json.Marshal(url)
	i, _ := json.Marshal(init)
	ctx, cancel := context.WithTimeout(b.Ctx, browserStep)
	defer cancel()
	c, err := chromedp.Run(ctx, chromedp.Evaluate[corsCall](fmt.Sprintf(corsCallJS, u, i), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browser: fetch %s: %v", url, err)
	}
	return c
}

// corsSite is a partner's web page on a loopback port of its own: another
// origin than the API's.
func corsSite(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><html><head><title>A partner's page</title></head><body>app</body></html>"))
	}))
	t.Cleanup(s.Close)
	return s
}

// TestBrowserCORS: Chromium, on pages served from other origins than the
// API's, calls /v1 as a partner's front end would: an anonymous quote from
// any page; with the partner's key from the page it lists, a quote (after
// the browser's preflight) whose X-Request-Id and RateLimit headers the
// script reads, and a PUT with a JSON body; from a page it does not list,
// a 401 whose code and message the script reads.
func TestBrowserCORS(t *testing.T) {
	b := browsertest.New(t)
	ts := startServer(t, nil)
	pid, key := ts.createPartner("Front")
	ts.putWallet(key, "evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
	listed, unlisted := corsSite(t), corsSite(t)
	cli(t, nil, "partner", "set-origins", "--data", ts.dir, "--id", pid, "--origins", listed.URL)

	b.Run("open the listed page", browserStep, chromedp.Navigate(listed.URL+"/"), chromedp.WaitVisible(chromedp.CSS("body")))
	quote := ts.base + arbToBase()
	anon := corsFetch(t, b, quote, map[string]any{})
	if anon.Status != 200 || anon.QuoteID == "" || anon.RequestID == "" || anon.RequestID != anon.MetaID || anon.RateLimit == "" {
		t.Fatalf("anonymous quote from the page: %+v", anon)
	}
	keyed := corsFetch(t, b, quote, map[string]any{"headers": map[string]string{"X-API-Key": key}})
	if keyed.Status != 200 || keyed.QuoteID == "" || keyed.RequestID == "" || keyed.RequestID != keyed.MetaID ||
		!strings.Contains(keyed.RatePolicy, "q=2000") || keyed.RateLimit == "" {
		t.Fatalf("a partner's quote from its listed page: %+v", keyed)
	}
	put := corsFetch(t, b, ts.base+"/v1/partner/me/fee-wallets", map[string]any{"method": "PUT",
		"headers": map[string]string{"X-API-Key": key, "Content-Type": "application/json"},
		"body":    `{"ecosystem":"evm","address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}`})
	if put.Status != 200 || put.RequestID == "" {
		t.Fatalf("a PUT with a JSON body from the listed page: %+v", put)
	}

	b.Run("open the unlisted page", browserStep, chromedp.Navigate(unlisted.URL+"/"), chromedp.WaitVisible(chromedp.CSS("body")))
	refused := corsFetch(t, b, quote, map[string]any{"headers": map[string]string{"X-API-Key": key}})
	origin := strings.TrimSuffix(unlisted.URL, "/")
	if refused.Status != 401 || refused.Code != "UNAUTHORIZED" || !strings.Contains(refused.Message, "origin "+origin) ||
		refused.RequestID == "" || refused.RequestID != refused.MetaID {
		t.Fatalf("a partner's key from a page it does not list: %+v", refused)
	}
	if anon := corsFetch(t, b, quote, map[string]any{}); anon.Status != 200 {
		t.Fatalf("anonymous quote from the unlisted page: %+v", anon)
	}
}
