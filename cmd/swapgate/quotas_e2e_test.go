package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/pgtest"
)

// untrackedHash is a transaction hash no test reports: GET /v1/status
// answers it NOT_FOUND with 200, a cheap heavy request.
const untrackedHash = "0x00000000000000000000000000000000000000000000000000000000000000aa"

var (
	policyHeader = regexp.MustCompile(`^"(heavy|read)";q=([0-9]+);w=60$`)
	limitHeader  = regexp.MustCompile(`^"(heavy|read)";r=([0-9]+);t=([0-9]+)$`)
)

// rateHeaders parses an answer's RateLimit-Policy and RateLimit headers;
// ok is false when the answer has neither.
type rateHeaders struct {
	bucket                 string
	quota, remaining, left int
}

func parseRateHeaders(t *testing.T, h http.Header) (rateHeaders, bool) {
	t.Helper()
	pol, lim := h.Get("RateLimit-Policy"), h.Get("RateLimit")
	if pol == "" && lim == "" {
		return rateHeaders{}, false
	}
	p, l := policyHeader.FindStringSubmatch(pol), limitHeader.FindStringSubmatch(lim)
	if p == nil || l == nil {
		t.Fatalf("RateLimit-Policy %q, RateLimit %q: not the draft's structured fields", pol, lim)
	}
	if p[1] != l[1] {
		t.Fatalf("RateLimit-Policy names %s, RateLimit %s", p[1], l[1])
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return rateHeaders{bucket: p[1], quota: atoi(p[2]), remaining: atoi(l[2]), left: atoi(l[3])}, true
}

// wantRateHeaders checks that an answer's headers say what its
// meta.rateLimit says, for bucket.
func wantRateHeaders(t *testing.T, env *envelope, bucket string) rateHeaders {
	t.Helper()
	got, ok := parseRateHeaders(t, env.Header)
	if !ok {
		t.Fatalf("no rate-limit headers on a %s answer: %s", bucket, env.Raw)
	}
	rl := env.Meta.RateLimit
	if rl == nil {
		t.Fatalf("headers %+v but no meta.rateLimit: %s", got, env.Raw)
	}
	want := rateHeaders{bucket: bucket, quota: rl.Limit, remaining: rl.Remaining, left: int(rl.Reset - env.Meta.Timestamp)}
	if got != want {
		t.Fatalf("headers %+v, meta.rateLimit says %+v", got, want)
	}
	return got
}

// Every answer of a request that counted against a bucket carries the
// RateLimit-Policy and RateLimit headers of that bucket, with the figures
// of meta.rateLimit: anonymous and partner, read and heavy, a GET and an
// idempotent POST, a refusal and a streamed answer; what counts against
// nothing (GET /v1/ping without a key) carries neither.
func TestRateLimitHeadersOnEveryRouteClass(t *testing.T) {
	ts := startServer(t, nil)
	id, key := ts.createPartner("Headers")
	cli(t, nil, "partner", "set-limits", "--data", ts.dir, "--id", id, "--heavy", "50", "--read", "70")
	tests := []struct {
		name, method, path string
		body               any
		key                string
		bucket             string
		quota, status      int
	}{
		{"anonymous read", http.MethodGet, "/v1/chains", nil, "", "read", 240, 200},
		{"anonymous heavy", http.MethodGet, "/v1/status?txHash=" + untrackedHash, nil, "", "heavy", 30, 200},
		{"partner read", http.MethodGet, "/v1/partner/me", nil, key, "read", 70, 200},
		{"partner heavy", http.MethodGet, "/v1/status?txHash=" + untrackedHash, nil, key, "heavy", 50, 200},
		{"partner usage", http.MethodGet, "/v1/partner/usage", nil, key, "read", 70, 200},
		{"ping with a key", http.MethodGet, "/v1/ping", nil, key, "read", 70, 200},
		{"idempotent POST, refused", http.MethodPost, "/v1/execute", map[string]string{"quoteId": "qt_nope"}, key, "heavy", 50, 400},
		{"missing key on a partner route", http.MethodGet, "/v1/partner/me", nil, "", "read", 240, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []reqOpt
			if tc.key != "" {
				opts = append(opts, withKey(tc.key))
			}
			var env *envelope
			if tc.method == http.MethodPost {
				env = ts.post(tc.path, tc.body, opts...)
			} else {
				env = ts.get(tc.path, opts...)
			}
			if env.Status != tc.status {
				t.Fatalf("%d %s", env.Status, env.Raw)
			}
			if h := wantRateHeaders(t, env, tc.bucket); h.quota != tc.quota {
				t.Fatalf("quota %d, want %d", h.quota, tc.quota)
			}
		})
	}
	t.Run("anonymous ping counts against nothing", func(t *testing.T) {
		env := ts.get("/v1/ping")
		if _, ok := parseRateHeaders(t, env.Header); ok || env.Meta.RateLimit != nil {
			t.Fatalf("rate-limit headers on the free ping: %v %s", env.Header, env.Raw)
		}
	})
	t.Run("streamed quote", func(t *testing.T) {
		s, refused := ts.openStream(streamPath(arbToBase()), withKey(key))
		if refused != nil {
			t.Fatalf("refused: %s", refused.Raw)
		}
		h, ok := parseRateHeaders(t, s.resp.Header)
		s.finish()
		if !ok || h.bucket != "heavy" || h.quota != 50 {
			t.Fatalf("stream headers %+v (%v)", h, ok)
		}
	})
}

// A partner over its small limit is refused with 429 RATE_LIMIT carrying
// Retry-After, the seconds until its window resets, and RateLimit r=0; the
// other bucket is untouched.
func TestRateLimitRefusalCarriesRetryAfter(t *testing.T) {
	ts := startServer(t, nil)
	id, key := ts.createPartner("Tight")
	cli(t, nil, "partner", "set-limits", "--data", ts.dir, "--id", id, "--heavy", "2", "--read", "3")
	for _, b := range []struct {
		bucket, path string
		limit        int
	}{{"heavy", "/v1/status?txHash=" + untrackedHash, 2}, {"read", "/v1/partner/me", 3}} {
		t.Run(b.bucket, func(t *testing.T) {
			for i := range b.limit {
				env := ts.get(b.path, withKey(key))
				if h := wantRateHeaders(t, env, b.bucket); env.Status != 200 || h.remaining != b.limit-1-i {
					t.Fatalf("request %d: %d, headers %+v", i+1, env.Status, h)
				}
				if env.Header.Get("Retry-After") != "" {
					t.Fatalf("Retry-After on an admitted request")
				}
			}
			env := ts.get(b.path, withKey(key))
			env.wantError(t, http.StatusTooManyRequests, "RATE_LIMIT", "")
			h := wantRateHeaders(t, env, b.bucket)
			want := max(env.Meta.RateLimit.Reset-env.Meta.Timestamp, 1)
			if ra := env.Header.Get("Retry-After"); h.remaining != 0 || ra != fmt.Sprint(want) || want > 60 {
				t.Fatalf("Retry-After %q (want %d), headers %+v", ra, want, h)
			}
		})
	}
}

// usageAnswer is the data of GET /v1/partner/usage.
type usageAnswer struct {
	PartnerID     string `json:"partnerId"`
	WindowSeconds int    `json:"windowSeconds"`
	Buckets       []struct {
		Bucket                        string
		Limit, Used, Remaining, Reset int64
	} `json:"buckets"`
	Hours []struct {
		Hour        int64
		Heavy, Read struct{ Admitted, Refused int }
	} `json:"hours"`
}

// totals sums the 24 hours, so that a test crossing an hour's end sees
// the same figures.
func (u usageAnswer) totals() (heavyIn, heavyOut, readIn, readOut int) {
	for _, h := range u.Hours {
		heavyIn, heavyOut = heavyIn+h.Heavy.Admitted, heavyOut+h.Heavy.Refused
		readIn, readOut = readIn+h.Read.Admitted, readOut+h.Read.Refused
	}
	return
}

func (ts *testServer) usage(t *testing.T, key string) usageAnswer {
	t.Helper()
	var u usageAnswer
	ts.get("/v1/partner/usage", withKey(key)).decode(t, &u)
	if len(u.Hours) != 24 || len(u.Buckets) != 2 || u.WindowSeconds != 60 {
		t.Fatalf("usage shape %+v", u)
	}
	for i := 1; i < len(u.Hours); i++ {
		if u.Hours[i].Hour != u.Hours[i-1].Hour+3600 {
			t.Fatalf("hours not consecutive: %+v", u.Hours)
		}
	}
	return u
}

// GET /v1/partner/usage is exact after N requests, admitted and refused,
// whether the counts are still in memory or already flushed, and the
// hours survive a restart on the same store (the buckets' windows, kept in
// memory, start again).
func TestPartnerUsageExactAndAfterRestart(t *testing.T) {
	// Flushes every 20 ms: the counts read are partly stored, partly
	// still in memory, and must add up exactly either way.
	ts := startServer(t, func(c *app.Config) { c.UsageFlushInterval = 20 * time.Millisecond })
	id, key := ts.createPartner("Usage")
	cli(t, nil, "partner", "set-limits", "--data", ts.dir, "--id", id, "--heavy", "3", "--read", "100")
	_, other := ts.createPartner("Other")
	ts.get("/v1/status?txHash="+untrackedHash, withKey(other))
	if env := ts.get("/v1/partner/usage"); env.Status != http.StatusUnauthorized {
		t.Fatalf("usage without a key: %d %s", env.Status, env.Raw)
	}
	const heavy, read = 5, 4
	for range heavy {
		ts.get("/v1/status?txHash="+untrackedHash, withKey(key))
	}
	for range read {
		ts.get("/v1/partner/me", withKey(key))
	}
	u := ts.usage(t, key)
	if u.PartnerID != id {
		t.Fatalf("usage of %s, want %s", u.PartnerID, id)
	}
	hb, rb := u.Buckets[0], u.Buckets[1]
	if hb.Bucket != "heavy" || hb.Limit != 3 || hb.Used != 3 || hb.Remaining != 0 ||
		rb.Bucket != "read" || rb.Limit != 100 || rb.Used != read+1 || rb.Remaining != 100-read-1 {
		t.Fatalf("buckets %+v", u.Buckets)
	}
	if hi, ho, ri, ro := u.totals(); hi != 3 || ho != heavy-3 || ri != read+1 || ro != 0 {
		t.Fatalf("hours: heavy %d/%d, read %d/%d; want 3/%d, %d/0", hi, ho, ri, ro, heavy-3, read+1)
	}
	dir := ts.dir
	ts.stop()

	ts = startServer(t, func(c *app.Config) { c.DataDir = dir })
	u = ts.usage(t, key)
	if hi, ho, ri, ro := u.totals(); hi != 3 || ho != heavy-3 || ri != read+2 || ro != 0 {
		t.Fatalf("after a restart: heavy %d/%d, read %d/%d; want 3/%d, %d/0", hi, ho, ri, ro, heavy-3, read+2)
	}
	if hb := u.Buckets[0]; hb.Used != 0 || hb.Remaining != 3 {
		t.Fatalf("heavy window after a restart %+v", hb)
	}
	// The other partner's request is its own.
	if hi, _, ri, _ := ts.usage(t, other).totals(); hi != 1 || ri != 1 {
		t.Fatalf("the other partner's usage: heavy %d, read %d", hi, ri)
	}
}

// Two nodes sharing a PostgreSQL store show a partner the same hours: each
// node's counts reach the store within its flush interval, and each node
// reads the store plus its own counts not flushed yet.
func TestPartnerUsageAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dsn := pgtest.Private(t).DSN(t)
	t.Setenv("SWAPGATE_STORE", dsn)
	node := func(dir string) *testServer {
		return startServer(t, func(c *app.Config) {
			c.DataDir, c.Store = dir, dsn
			c.UsageFlushInterval = 20 * time.Millisecond
		})
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := node(dirA)
	// The nodes of one store seal webhook secrets with one key.
	key, err := os.ReadFile(filepath.Join(dirA, "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "secrets.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b := node(dirB)
	_, apiKey := a.createPartner("TwoNodes")
	for range 3 {
		a.get("/v1/status?txHash="+untrackedHash, withKey(apiKey))
	}
	for range 2 {
		b.get("/v1/status?txHash="+untrackedHash, withKey(apiKey))
	}
	for _, n := range []*testServer{a, b} {
		waitUntil(t, "every node's heavy requests show", func() bool {
			hi, ho, _, _ := n.usage(t, apiKey).totals()
			if hi > 5 || ho != 0 {
				t.Fatalf("heavy %d admitted, %d refused: counted twice", hi, ho)
			}
			return hi == 5
		})
	}
}
