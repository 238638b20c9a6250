package main

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// wantCORS checks that an answer to a browser's request from origin can be
// read by its page: the origin echoed, Vary: Origin, and the headers the
// contract documents for clients exposed.
func wantCORS(t *testing.T, h http.Header, origin string) {
	t.Helper()
	if got := h.Get("Access-Control-Allow-Origin"); got != origin {
		t.Fatalf("Access-Control-Allow-Origin %q, want %q (headers %v)", got, origin, h)
	}
	if !slices.Contains(h.Values("Vary"), "Origin") {
		t.Fatalf("Vary %q lacks Origin", h.Values("Vary"))
	}
	exposed := h.Get("Access-Control-Expose-Headers")
	for _, name := range []string{"X-Request-Id", "RateLimit", "RateLimit-Policy", "Retry-After"} {
		if !strings.Contains(exposed, name) {
			t.Fatalf("Access-Control-Expose-Headers %q lacks %s", exposed, name)
		}
	}
}

// TestPartnerAllowedOriginsE2E: through the real server, a browser's calls
// to /v1 — the preflight for any origin, anonymous calls from any origin,
// a partner key only from the origins the partner lists, set by the
// operator's CLI (through the running server's admin listener) and then by
// the partner on the portal's key page, each change effective on the next
// call; a call without Origin carries no CORS header.
func TestPartnerAllowedOriginsE2E(t *testing.T) {
	ts := startServer(t, nil)
	pid, key := ts.createPartner("Browsers")
	if e := ts.putWallet(key, "evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"); e.Status != 200 {
		t.Fatalf("fee wallet: %s", e.Raw)
	}
	const app, other = "https://app.example", "https://other.example"

	// The preflight: no key, any origin, what a POST with a body and a key
	// needs.
	req, _ := http.NewRequest(http.MethodOptions, ts.base+"/v1/execute", nil)
	req.Header.Set("Origin", other)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,idempotency-key,x-api-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != other ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-API-Key") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Idempotency-Key") ||
		resp.Header.Get("Access-Control-Max-Age") == "" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}

	// Anonymous: any origin.
	e := ts.get(arbToBase(), withHeader("Origin", other))
	if e.Status != 200 {
		t.Fatalf("anonymous quote from a page: %s", e.Raw)
	}
	wantCORS(t, e.Header, other)

	// A new partner lists no origin: its key is refused from every page,
	// readably, and still works from its backend.
	e = ts.get("/v1/partner/me", withKey(key), withHeader("Origin", app))
	e.wantError(t, 401, "UNAUTHORIZED", "")
	if !strings.Contains(e.Error.Message, "origin "+app) || !strings.Contains(e.Error.Message, "lists no allowedOrigins") ||
		e.Error.Details["origin"] != app {
		t.Fatalf("refusal %+v", e.Error)
	}
	wantCORS(t, e.Header, app)
	var me struct {
		AllowedOrigins []string `json:"allowedOrigins"`
	}
	e = ts.get("/v1/partner/me", withKey(key))
	e.decode(t, &me)
	if me.AllowedOrigins == nil || len(me.AllowedOrigins) != 0 || e.Header.Get("Access-Control-Allow-Origin") != "" || e.Header.Get("Vary") != "" {
		t.Fatalf("backend call: allowedOrigins %q, headers %v", me.AllowedOrigins, e.Header)
	}

	// The operator lists app.example.
	var view struct {
		AllowedOrigins []string `json:"allowedOrigins"`
	}
	cli(t, &view, "partner", "set-origins", "--data", ts.dir, "--id", pid, "--origins", "HTTPS://App.example:443")
	if !slices.Equal(view.AllowedOrigins, []string{app}) {
		t.Fatalf("set-origins: %q", view.AllowedOrigins)
	}
	e = ts.get(arbToBase(), withKey(key), withHeader("Origin", app))
	if e.Status != 200 || e.Meta.RateLimit == nil || e.Meta.RateLimit.Limit != 2000 {
		t.Fatalf("a partner quote from a listed origin: %s", e.Raw)
	}
	wantCORS(t, e.Header, app)
	ts.get("/v1/partner/me", withKey(key), withHeader("Origin", app)).decode(t, &me)
	if !slices.Equal(me.AllowedOrigins, []string{app}) {
		t.Fatalf("GET /v1/partner/me allowedOrigins %q", me.AllowedOrigins)
	}
	e = ts.get(arbToBase(), withKey(key), withHeader("Origin", other))
	e.wantError(t, 401, "UNAUTHORIZED", "")
	if !strings.Contains(e.Error.Message, "origin "+other+" is not in this partner's allowedOrigins") {
		t.Fatalf("refusal %+v", e.Error)
	}
	wantCORS(t, e.Header, other)

	// The partner replaces them on the portal: a refusal names
	// allowedOrigins and keeps what was typed; a saved list applies at once.
	pc := newPortalClient(t, ts)
	pc.signIn("browsers@example.com")
	pc.get("/portal/key").want(t, 200, `id="origins-form"`, ">"+app+"</textarea>")
	pc.post("/portal/key/origins", url.Values{"origins": {"https://portal.example/app"}}).
		want(t, 400, "allowedOrigins: origin &#34;https://portal.example/app&#34; has a path", ">https://portal.example/app</textarea>")
	pc.post("/portal/key/origins", url.Values{"origins": {"https://portal.example\r\nhttp://localhost:5173\r\n"}}).
		wantRedirect(t, "/portal/key?done=origins-set#origins")
	pc.get("/portal/key?done=origins-set").want(t, 200, "The browser origins were saved", ">https://portal.example\nhttp://localhost:5173</textarea>")
	e = ts.get("/v1/chains", withKey(key), withHeader("Origin", "http://localhost:5173"))
	if e.Status != 200 {
		t.Fatalf("a key from an origin the portal listed: %s", e.Raw)
	}
	wantCORS(t, e.Header, "http://localhost:5173")
	ts.get("/v1/chains", withKey(key), withHeader("Origin", app)).wantError(t, 401, "UNAUTHORIZED", "")
	var list []struct {
		ID             string   `json:"id"`
		AllowedOrigins []string `json:"allowedOrigins"`
	}
	cli(t, &list, "partner", "list", "--data", ts.dir)
	if len(list) != 1 || list[0].ID != pid || !slices.Equal(list[0].AllowedOrigins, []string{"https://portal.example", "http://localhost:5173"}) {
		t.Fatalf("partner list after the portal's change: %+v", list)
	}

	// An empty list from the portal clears them: no page may send the key.
	pc.post("/portal/key/origins", url.Values{"origins": {""}}).wantRedirect(t, "/portal/key?done=origins-set#origins")
	ts.get("/v1/chains", withKey(key), withHeader("Origin", "http://localhost:5173")).wantError(t, 401, "UNAUTHORIZED", "")
}
