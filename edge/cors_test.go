package edge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// keyedPartners finds partners by their API keys.
type keyedPartners map[string]*account.Partner

func (k keyedPartners) PartnerByKeyDigest(_ context.Context, d [32]byte) (*account.Partner, error) {
	for key, p := range k {
		if account.KeyDigest(key) == d {
			return p, nil
		}
	}
	return nil, account.ErrNotFound
}

const (
	listingKey = "pk_live_0123456789abcdefghijABCDEFGHIJ01" // lists app.example
	silentKey  = "pk_live_0123456789abcdefghijABCDEFGHIJ02" // lists no origin
)

func TestCORS(t *testing.T) {
	reg, cat := testCatalog(t)
	partners := keyedPartners{
		listingKey: {ID: "ptn_listing", Limits: account.Limits{HeavyPerMin: 100, ReadPerMin: 100},
			AllowedOrigins: []string{"https://app.example", "http://localhost:5173"}},
		silentKey: {ID: "ptn_silent", Limits: account.Limits{HeavyPerMin: 100, ReadPerMin: 100}},
	}
	s, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: partners,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		status int
		code   string
		// origin is the Access-Control-Allow-Origin wanted, "" for none:
		// then no CORS header at all may be there.
		origin string
		// message is a part of the error's message.
		message string
	}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		want               want
	}{
		{"preflight from any origin", "OPTIONS", "/v1/quote",
			map[string]string{"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-api-key"},
			want{status: 204, origin: "https://elsewhere.example"}},
		{"preflight of a POST with a body", "OPTIONS", "/v1/execute",
			map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, idempotency-key, x-api-key"},
			want{status: 204, origin: "https://app.example"}},
		{"anonymous from any origin", "GET", "/v1/chains",
			map[string]string{"Origin": "https://elsewhere.example"},
			want{status: 200, origin: "https://elsewhere.example"}},
		{"a key from a listed origin", "GET", "/v1/chains",
			map[string]string{"Origin": "http://localhost:5173", "X-API-Key": listingKey},
			want{status: 200, origin: "http://localhost:5173"}},
		{"a key from an unlisted origin", "GET", "/v1/chains",
			map[string]string{"Origin": "https://evil.example", "X-API-Key": listingKey},
			want{status: 401, code: "UNAUTHORIZED", origin: "https://evil.example", message: "origin https://evil.example is not in this partner's allowedOrigins"}},
		{"a listed origin in another case is another origin", "GET", "/v1/chains",
			map[string]string{"Origin": "https://APP.example", "X-API-Key": listingKey},
			want{status: 401, code: "UNAUTHORIZED", origin: "https://APP.example", message: "origin https://APP.example"}},
		{"a key of a partner listing no origin", "GET", "/v1/partner/me",
			map[string]string{"Origin": "https://app.example", "X-API-Key": silentKey},
			want{status: 401, code: "UNAUTHORIZED", origin: "https://app.example", message: "lists no allowedOrigins"}},
		{"a wrong key from a page can read its refusal", "GET", "/v1/chains",
			map[string]string{"Origin": "https://app.example", "X-API-Key": "pk_live_nope"},
			want{status: 401, code: "UNAUTHORIZED", origin: "https://app.example", message: "invalid API key"}},
		{"an unknown path from a page can read its refusal", "GET", "/v1/nowhere",
			map[string]string{"Origin": "https://app.example"},
			want{status: 404, code: "NOT_FOUND", origin: "https://app.example"}},
		{"a key without Origin is unchanged", "GET", "/v1/partner/me",
			map[string]string{"X-API-Key": silentKey},
			want{status: 200}},
		{"anonymous without Origin is unchanged", "GET", "/v1/ping", nil,
			want{status: 200}},
		{"outside /v1 is unchanged", "GET", "/healthz",
			map[string]string{"Origin": "https://app.example"},
			want{status: 200}},
		{"OPTIONS outside /v1 is unchanged", "OPTIONS", "/healthz",
			map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"},
			want{status: 405, code: "METHOD_NOT_ALLOWED"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := serve(s, tc.method, tc.path, "192.0.2.7:4000", tc.hdr)
			h := &ctx.Response.Header
			body := string(ctx.Response.Body())
			if got := ctx.Response.StatusCode(); got != tc.want.status {
				t.Fatalf("status %d, want %d: %s", got, tc.want.status, body)
			}
			if tc.want.code != "" {
				var env struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
					t.Fatalf("body: %v: %q", err, body)
				}
				if env.Error.Code != tc.want.code || !strings.Contains(env.Error.Message, tc.want.message) {
					t.Fatalf("error %+v, want %s with %q", env.Error, tc.want.code, tc.want.message)
				}
			}
			acao := string(h.Peek("Access-Control-Allow-Origin"))
			if acao != tc.want.origin {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", acao, tc.want.origin)
			}
			cors := []string{"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Allow-Methods",
				"Access-Control-Allow-Headers", "Access-Control-Max-Age", "Access-Control-Allow-Credentials", "Vary"}
			if tc.want.origin == "" {
				for _, name := range cors {
					if v := h.Peek(name); v != nil {
						t.Fatalf("%s: %q on an answer that should carry no CORS header", name, v)
					}
				}
				return
			}
			if v := h.Peek("Access-Control-Allow-Credentials"); v != nil {
				t.Fatalf("Access-Control-Allow-Credentials %q: no credentials are involved", v)
			}
			if !strings.Contains(string(h.Peek("Vary")), "Origin") {
				t.Fatalf("Vary %q lacks Origin", h.Peek("Vary"))
			}
			if tc.method == "OPTIONS" {
				if len(body) != 0 {
					t.Fatalf("a preflight has a body: %q", body)
				}
				for name, parts := range map[string][]string{
					"Access-Control-Allow-Methods": {"GET", "POST", "PUT", "DELETE"},
					"Access-Control-Allow-Headers": {"X-API-Key", "Content-Type", "Idempotency-Key", "X-Sandbox-Scenario"},
					"Access-Control-Max-Age":       {"7200"},
				} {
					for _, p := range parts {
						if !strings.Contains(string(h.Peek(name)), p) {
							t.Fatalf("%s %q lacks %s", name, h.Peek(name), p)
						}
					}
				}
				return
			}
			exposed := string(h.Peek("Access-Control-Expose-Headers"))
			for _, p := range []string{"X-Request-Id", "Idempotent-Replayed", "RateLimit", "RateLimit-Policy", "Retry-After"} {
				if !strings.Contains(exposed, p) {
					t.Fatalf("Access-Control-Expose-Headers %q lacks %s", exposed, p)
				}
			}
			if len(h.Peek("X-Request-Id")) == 0 || (tc.want.status != 404 && len(h.Peek("RateLimit")) == 0) {
				t.Fatalf("no X-Request-Id or RateLimit to read: %s", h.String())
			}
		})
	}
}

// TestCORSRefusedOriginCountsAsAnonymous holds a key sent from an unlisted
// origin to a refused key's treatment: it is counted against the client
// IP's anonymous bucket, not the partner's.
func TestCORSRefusedOriginCountsAsAnonymous(t *testing.T) {
	reg, cat := testCatalog(t)
	partners := keyedPartners{listingKey: {ID: "ptn_listing", Limits: account.Limits{HeavyPerMin: 1000, ReadPerMin: 1000},
		AllowedOrigins: []string{"https://app.example"}}}
	cfg := DefaultConfig()
	cfg.AnonReadPerMin = 2
	s, err := New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: partners,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Origin": "https://evil.example", "X-API-Key": listingKey}
	for i, want := range []int{401, 401, 429} {
		ctx := serve(s, "GET", "/v1/chains", "192.0.2.8:4000", hdr)
		if got := ctx.Response.StatusCode(); got != want {
			t.Fatalf("request %d: %d, want %d: %s", i+1, got, want, ctx.Response.Body())
		}
		if string(ctx.Response.Header.Peek("Access-Control-Allow-Origin")) != "https://evil.example" {
			t.Fatalf("request %d: the refusal carries no CORS header", i+1)
		}
	}
	ok := serve(s, "GET", "/v1/chains", "192.0.2.8:4000", map[string]string{"Origin": "https://app.example", "X-API-Key": listingKey})
	if ok.Response.StatusCode() != 200 {
		t.Fatalf("the listed origin from the same IP: %d %s", ok.Response.StatusCode(), ok.Response.Body())
	}
}
