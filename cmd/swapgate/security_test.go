package main

// The security pass's end-to-end guarantees, each against the real server
// (real fasthttp, real Pebble, real actors; see SECURITY.md): API keys and
// webhook secrets appear in no log, no file of the data directory and no
// answer; slow and oversized requests do not keep the server from others;
// the admin listener is loopback only behind a 0600 token file; a deposit
// registration has one accepted form. Helpers here are prefixed sec.

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store/local"
)

// secWebhookSecret is the webhook secret the leak test registers: long
// and distinctive, so that finding it anywhere is a leak, not a chance.
const secWebhookSecret = "secW3bh00kS3cret-7d1f0c9a2b8e4f63"

// secLogBuffer collects log lines from every goroutine of the server.
type secLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *secLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *secLogBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// secNeedles are the forms a secret could be written in: as is, in hex,
// and in base64 (as a JSON []byte field would hold it).
func secNeedles(secrets ...string) map[string]string {
	out := map[string]string{}
	for _, s := range secrets {
		out[s] = s
		out[hex.EncodeToString([]byte(s))] = s
		out[base64.StdEncoding.EncodeToString([]byte(s))] = s
		out[base64.RawURLEncoding.EncodeToString([]byte(s))] = s
	}
	return out
}

// secGrep reports every needle found in b, naming where.
func secGrep(t *testing.T, where string, b []byte, needles map[string]string) {
	t.Helper()
	for n, secret := range needles {
		if bytes.Contains(b, []byte(n)) {
			t.Errorf("%s holds %q (a form of %q)", where, n, secret)
		}
	}
}

// secGrepDir greps every file under dir, raw bytes, and returns how many
// files it read.
func secGrepDir(t *testing.T, dir string, needles map[string]string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		secGrep(t, path, b, needles)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// secGrepPebble greps every key and value of the data directory's Pebble
// database, opened read-only, and returns how many records it read.
func secGrepPebble(t *testing.T, dir string, needles map[string]string) int {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
		secGrep(t, fmt.Sprintf("Pebble key %q", it.Key()), it.Key(), needles)
		secGrep(t, fmt.Sprintf("the value of Pebble key %q", it.Key()), it.Value(), needles)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return n
}

// secTranscript keeps every answer of the test, headers included, to grep.
type secTranscript struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (tr *secTranscript) add(e *envelope) *envelope {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for k, vs := range e.Header {
		fmt.Fprintf(&tr.buf, "%s: %s\n", k, strings.Join(vs, ","))
	}
	tr.buf.Write(e.Raw)
	tr.buf.WriteByte('\n')
	return e
}

// secReceiver is a partner's HTTPS endpoint that accepts only deliveries
// signed with secWebhookSecret.
func secReceiver(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var good atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !webhook.Verify([]byte(secWebhookSecret), b, r.Header.Get(webhook.HeaderSignature)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		good.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, &good
}

// TestSecSecretsNeverLeak: a partner's API keys (the first and the one
// rotated in) and a webhook's signing secret appear in no log line (debug
// included), in no answer of the service (refusals included) and in no
// file of the data directory, raw bytes, while the keys authenticate and
// the secret signs deliveries before and after a restart.
func TestSecSecretsNeverLeak(t *testing.T) {
	rc, signed := secReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.Certificate())
	var logs secLogBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prevDefault := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prevDefault) })
	dir := t.TempDir()
	mutate := func(c *app.Config) {
		c.DataDir = dir
		c.Logger = logger
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
	}
	ts := startServer(t, mutate)
	var tr secTranscript
	id, key := ts.createPartner("Secrets")
	hookURL := rc.URL + "/hook"
	good := []string{webhook.SwapCompleted}
	post := func(path string, body []byte, opts ...reqOpt) *envelope {
		return tr.add(ts.do(http.MethodPost, path, body, opts...))
	}
	get := func(path string, opts ...reqOpt) *envelope { return tr.add(ts.get(path, opts...)) }

	// Refusals that carry the key or the secret.
	wrongKey := key[:len(key)-4] + "zzzz"
	get("/v1/partner/me", withKey(wrongKey)).wantError(t, 401, "UNAUTHORIZED", "")
	get("/v1/partner/me", withKey(key+"x")).wantError(t, 401, "UNAUTHORIZED", "")
	get("/v1/partner/me", withKey(key[:len(key)/2]))
	get("/v1/partner/me", withHeader("Authorization", "Bearer "+key))
	get("/v1/no-such-path", withKey(key)).wantError(t, 404, "NOT_FOUND", "")
	tr.add(ts.do(http.MethodPatch, "/v1/partner/webhooks", nil, withKey(key))).wantError(t, 405, "METHOD_NOT_ALLOWED", "")
	post("/v1/partner/webhooks", hookBody(t, "https://10.0.0.1/hook", good, secWebhookSecret), withKey(key)).wantError(t, 400, "INVALID_PARAMS", "url")
	post("/v1/partner/webhooks", hookBody(t, hookURL, []string{"swap.nope"}, secWebhookSecret), withKey(key)).wantError(t, 400, "INVALID_PARAMS", "events")
	post("/v1/partner/webhooks", hookBody(t, hookURL, good, secWebhookSecret)).wantError(t, 401, "UNAUTHORIZED", "")
	post("/v1/partner/webhooks", hookBody(t, hookURL, good, secWebhookSecret), withKey(wrongKey)).wantError(t, 401, "UNAUTHORIZED", "")
	post("/v1/partner/webhooks", []byte(`{"url":"`+hookURL+`","events":["swap.completed"],"secret":["`+secWebhookSecret+`"]}`), withKey(key)).wantError(t, 400, "VALIDATION_ERROR", "")
	post("/v1/partner/webhooks", []byte(`{"url":"`+hookURL+`","events":["swap.completed"],"secret":"`+secWebhookSecret+`",}`), withKey(key)).wantError(t, 400, "INVALID_BODY", "")
	post("/v1/partner/webhooks", []byte(`{"url":"`+hookURL+`","events":["swap.completed"],"secret":"`+secWebhookSecret+`","extra":1}`), withKey(key))

	// The registration, remembered under an Idempotency-Key, replayed,
	// and refused with another body under the same key.
	idem := withHeader("Idempotency-Key", "sec-hook-1")
	env := post("/v1/partner/webhooks", hookBody(t, hookURL, good, secWebhookSecret), withKey(key), idem)
	if env.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", env.Status, env.Raw)
	}
	var created struct {
		ID string `json:"id"`
	}
	env.decode(t, &created)
	if replay := post("/v1/partner/webhooks", hookBody(t, hookURL, good, secWebhookSecret), withKey(key), idem); !bytes.Equal(replay.Data, env.Data) {
		t.Fatalf("replay %s, first %s", replay.Raw, env.Raw)
	}
	post("/v1/partner/webhooks", hookBody(t, hookURL, good, secWebhookSecret+"-other"), withKey(key), idem).wantError(t, 400, "INVALID_PARAMS", "Idempotency-Key")

	// Reads and a signed test delivery.
	get("/v1/partner/me", withKey(key)).decode(t, &map[string]any{})
	get("/v1/partner/webhooks", withKey(key)).decode(t, &map[string]any{})
	get("/v1/partner/me/fee-wallets", withKey(key))
	get(arbToBase(), withKey(key))
	get("/metrics")
	secTestDelivery := func(ts *testServer, key string) {
		t.Helper()
		before := signed.Load()
		post("/v1/partner/webhooks/"+created.ID+"/test", nil, withKey(key)).decode(t, &map[string]any{})
		waitUntil(t, "a delivery signed with the secret", func() bool { return signed.Load() > before })
		var list struct {
			Deliveries []struct{ State string } `json:"deliveries"`
		}
		waitUntil(t, "the delivery recorded", func() bool {
			tr.add(ts.get("/v1/partner/webhooks/"+created.ID+"/deliveries", withKey(key))).decode(t, &list)
			return len(list.Deliveries) > 0 && list.Deliveries[0].State == webhook.DeliveryDelivered
		})
	}
	secTestDelivery(ts, key)

	// Operator commands through the admin listener, a key rotated.
	var rotated struct {
		APIKey string `json:"apiKey"`
	}
	cli(t, &rotated, "partner", "rotate-key", "--data", dir, "--id", id)
	if !strings.HasPrefix(rotated.APIKey, "pk_live_") || rotated.APIKey == key {
		t.Fatalf("rotated key %q", rotated.APIKey)
	}
	var listed json.RawMessage
	cli(t, &listed, "partner", "list", "--data", dir)
	secGrep(t, "partner list", listed, secNeedles(key, rotated.APIKey, secWebhookSecret))
	get("/v1/partner/me", withKey(key)).wantError(t, 401, "UNAUTHORIZED", "")
	get("/v1/partner/me", withKey(rotated.APIKey)).decode(t, &map[string]any{})

	// Every file while the server runs: the write-ahead log holds the
	// records written so far as they were written, uncompressed.
	needles := secNeedles(key, rotated.APIKey, secWebhookSecret)
	secGrepDir(t, dir, needles)

	// A restart on the same directory: the sealed secret still signs.
	ts.stop()
	ts = startServer(t, mutate)
	secTestDelivery(ts, rotated.APIKey)
	get("/v1/partner/me", withKey(key)).wantError(t, 401, "UNAUTHORIZED", "")
	ts.stop()

	// Every file once stopped, and every key and value Pebble holds, read
	// through Pebble: its tables compress their blocks, which a raw grep
	// cannot see through.
	if files := secGrepDir(t, dir, needles); files < 5 {
		t.Fatalf("only %d files in the data directory", files)
	}
	if n := secGrepPebble(t, dir, needles); n < 10 {
		t.Fatalf("only %d records in Pebble", n)
	}
	logged := logs.Bytes()
	if bytes.Count(logged, []byte("\n")) < 2 {
		t.Fatalf("only %d bytes of logs captured: the test captures nothing", len(logged))
	}
	secGrep(t, "the logs", logged, needles)
	secGrep(t, "the answers", tr.buf.Bytes(), needles)
	if !bytes.Contains(tr.buf.Bytes(), []byte("UNAUTHORIZED")) {
		t.Fatal("the transcript misses the refusals")
	}
}

// TestSecSlowClientsDoNotStopTheServer: while many connections send their
// headers (or body) a byte at a time and others send headers over the
// limit, a normal client, over kept-alive and new connections alike, keeps
// getting answers within a bound; each slow connection is answered 408 and
// closed once the read timeout has passed, and each oversized one 400 at
// once.
func TestSecSlowClientsDoNotStopTheServer(t *testing.T) {
	// A read timeout well above the bound below, so that a server held up
	// by the slow connections could not pass for a busy one.
	const readTimeout = 5 * time.Second
	ts := startServer(t, func(c *app.Config) {
		c.ReadTimeout = readTimeout
		c.IdleTimeout = 2 * readTimeout
	})
	addr := strings.TrimPrefix(ts.base, "http://")
	const slowHeaders, slowBodies, oversized = 150, 20, 30

	type ending struct {
		status string
		after  time.Duration
		err    error
	}
	var wg sync.WaitGroup
	endings := make(chan ending, slowHeaders+slowBodies+oversized)
	stop := make(chan struct{})
	// slow opens a connection, writes head at once and then drip a byte at
	// a time, every 100 ms, until the server answers and closes.
	slow := func(head, drip string) {
		defer wg.Done()
		// Before the dial: the server's clock starts at its accept, which
		// may come before this goroutine runs again after the dial.
		start := time.Now()
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			endings <- ending{err: err}
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		answered := make(chan ending, 1)
		go func() {
			line, err := bufio.NewReader(conn).ReadString('\n')
			_, _ = io.Copy(io.Discard, conn) // until the server closes
			answered <- ending{status: strings.TrimSpace(line), after: time.Since(start), err: err}
		}()
		if _, err := io.WriteString(conn, head); err != nil {
			endings <- ending{err: err}
			return
		}
		for i := 0; ; i++ {
			select {
			case e := <-answered:
				endings <- e
				return
			case <-stop:
				endings <- ending{err: fmt.Errorf("still open when the test ended")}
				return
			case <-time.After(100 * time.Millisecond):
				_, _ = conn.Write([]byte{drip[i%len(drip)]})
			}
		}
	}
	for range slowHeaders {
		wg.Add(1)
		go slow("GET /v1/ping HTTP/1.1\r\nHost: swapgate\r\nX-Slow: ", "abcdefgh")
	}
	for range slowBodies {
		wg.Add(1)
		go slow("POST /v1/partner/webhooks HTTP/1.1\r\nHost: swapgate\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{", " ")
	}
	oversizedAnswers := make(chan ending, oversized)
	for i := range oversized {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				oversizedAnswers <- ending{err: err}
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			// Many headers, or one long one.
			var b strings.Builder
			b.WriteString("GET /v1/ping HTTP/1.1\r\nHost: swapgate\r\n")
			if i%2 == 0 {
				fmt.Fprintf(&b, "X-Big: %s\r\n", strings.Repeat("a", 2*edge.MaxHeaderSize))
			} else {
				for j := 0; b.Len() < 2*edge.MaxHeaderSize; j++ {
					fmt.Fprintf(&b, "X-H%d: %s\r\n", j, strings.Repeat("b", 60))
				}
			}
			b.WriteString("\r\n")
			go func() { _, _ = io.WriteString(conn, b.String()) }()
			line, err := bufio.NewReader(conn).ReadString('\n')
			oversizedAnswers <- ending{status: strings.TrimSpace(line), after: time.Since(start), err: err}
		}()
	}

	// The normal client, meanwhile: kept-alive and fresh connections.
	kept := &http.Client{Timeout: 10 * time.Second}
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var worst time.Duration
	served := 0
	for until := time.Now().Add(3 * readTimeout); time.Now().Before(until); {
		for _, c := range []*http.Client{kept, fresh} {
			start := time.Now()
			resp, err := c.Get(ts.base + "/v1/ping")
			if err != nil {
				t.Fatalf("a normal request failed during the attack: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("a normal request got %d", resp.StatusCode)
			}
			worst = max(worst, time.Since(start))
			served++
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Generous for two shared cores under the race detector and other
	// tests: an unhindered ping takes a millisecond, a server held up by the
	// slow connections would take the read timeout (5 s) or never answer.
	const bound = 2500 * time.Millisecond
	if worst > bound {
		t.Errorf("the slowest normal answer took %v, bound %v (%d answers)", worst, bound, served)
	}
	t.Logf("%d normal answers, the slowest in %v", served, worst)

	for range oversized {
		e := <-oversizedAnswers
		if e.err != nil || !strings.HasPrefix(e.status, "HTTP/1.1 400") || e.after > 5*time.Second {
			t.Errorf("oversized headers: %q after %v (%v)", e.status, e.after, e.err)
		}
	}
	timer := time.AfterFunc(15*time.Second, func() { close(stop) })
	defer timer.Stop()
	for range slowHeaders + slowBodies {
		e := <-endings
		// Answered once the read timeout passed, not long after.
		if e.err != nil && e.status == "" || !strings.HasPrefix(e.status, "HTTP/1.1 408") || e.after < readTimeout-200*time.Millisecond || e.after > readTimeout+3*time.Second {
			t.Errorf("slow connection: %q after %v (%v)", e.status, e.after, e.err)
		}
	}
	wg.Wait()

	// Headers within the bound are served.
	req, _ := http.NewRequest(http.MethodGet, ts.base+"/v1/ping", nil)
	req.Header.Set("X-Fits", strings.Repeat("c", edge.MaxHeaderSize-1024))
	resp, err := kept.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("headers within the bound: %d", resp.StatusCode)
	}
}

// TestSecAdminListenerLoopbackOnly: the admin listener binds 127.0.0.1
// alone (no other address of the machine reaches it), answers only with
// the token, and advertises itself in admin.json, mode 0600, in the data
// directory it made with mode 0700, beside secrets.key, mode 0600; the
// public edge serves none of its paths.
func TestSecAdminListenerLoopbackOnly(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.DataDir = filepath.Join(t.TempDir(), "data") })
	ep, err := admin.ReadEndpoint(ts.dir)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(ep.Addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("admin listener on %q (%v), want 127.0.0.1", ep.Addr, err)
	}
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{admin.FileName, 0o600}, {local.SecretKeyFile, 0o600}, {".", 0o700}} {
		fi, err := os.Stat(filepath.Join(ts.dir, f.name))
		if err != nil || fi.Mode().Perm() != f.mode {
			t.Errorf("%s: mode %v (%v), want %04o", f.name, fi.Mode().Perm(), err, f.mode)
		}
	}
	adminGet := func(base, path, token string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	base := "http://" + ep.Addr
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/admin/partners", ep.Token, 200},
		{"/admin/partners", "", 401},
		{"/admin/partners", strings.Repeat("0", len(ep.Token)), 401},
		{"/admin/partners", ep.Token[:len(ep.Token)-1], 401},
		{"/debug/pprof/", ep.Token, 200},
		{"/debug/pprof/", "", 401},
	} {
		if got, err := adminGet(base, c.path, c.token); err != nil || got != c.want {
			t.Errorf("admin %s with token %q: %d %v, want %d", c.path, c.token, got, err, c.want)
		}
	}
	for _, path := range []string{"/admin/partners", "/debug/pprof/"} {
		if got, err := adminGet(ts.base, path, ep.Token); err != nil || got != 404 {
			t.Errorf("public edge %s: %d %v, want 404", path, got, err)
		}
	}
	// Every other address of this machine, on the admin port: nothing.
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ipn.IP.String(), port), 2*time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("the admin listener answers on %s", ipn.IP)
		}
	}
	for _, other := range []string{"[::1]", "127.0.0.2"} {
		if conn, err := net.DialTimeout("tcp", other+":"+port, 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("the admin listener answers on %s", other)
		}
	}
	t.Logf("admin port %s refused on %d non-loopback addresses, ::1 and 127.0.0.2", port, tried)
}

// TestSecRegistrationReplayAndMalleability: a registered deposit's body
// sent again, with v as 0/1 or 27/28, is the same deposit; its high-s twin
// (the same key's valid signature of the same message) and the message
// signed for another chain are refused, and a fresh registration is
// refused in its high-s form before anything is recorded.
func TestSecRegistrationReplayAndMalleability(t *testing.T) {
	ts := startServer(t, nil)
	m := playStep1(t, ts, "", "swapgate/e2e/security-malleability")
	body := m.registration(t, plsx369)
	sigOf := func(b map[string]any) []byte { return common.FromHex(b["signature"].(string)) }
	withSig := func(sig []byte) map[string]any {
		out := map[string]any{}
		for k, v := range body {
			out[k] = v
		}
		out["signature"] = "0x" + common.Bytes2Hex(sig)
		return out
	}
	sig := sigOf(body)
	s := new(big.Int).SetBytes(sig[32:64])
	twin := bytes.Clone(sig)
	copy(twin[32:64], common.LeftPadBytes(new(big.Int).Sub(crypto.S256().Params().N, s).Bytes(), 32))
	twin[64] = 27 + ((sig[64] - 27) ^ 1)

	// Fresh: the high-s twin is refused on the signature, and nothing is
	// registered.
	ts.post("/v1/inbound-receiver/register", withSig(twin)).wantError(t, 400, "INVALID_PARAMS", "signature")
	ts.get("/v1/inbound-receiver/deposits/"+m.step1.TxHash).wantError(t, 404, "INVALID_PARAMS", "txHash")

	var first, again struct{ Status, TxHash string }
	ts.post("/v1/inbound-receiver/register", body).decode(t, &first)
	if first.Status != "RECEIVED" || !strings.EqualFold(first.TxHash, m.step1.TxHash) {
		t.Fatalf("registered %+v", first)
	}
	rawV := bytes.Clone(sig)
	rawV[64] -= 27
	for _, b := range []map[string]any{body, withSig(rawV)} {
		ts.post("/v1/inbound-receiver/register", b).decode(t, &again)
		if again.TxHash != first.TxHash {
			t.Fatalf("replay gave %+v", again)
		}
	}

	// Replays in another form, or signed for another chain: refused.
	for name, b := range map[string]map[string]any{
		"high-s twin":             withSig(twin),
		"high-s twin, v 0/1":      withSig(append(bytes.Clone(twin[:64]), twin[64]-27)),
		"v 29":                    withSig(append(bytes.Clone(sig[:64]), 29)),
		"signed for chain 10":     withSig(secSign(t, m, 10)),
		"signed for chain 369":    withSig(secSign(t, m, 369)),
		"another v (parity flip)": withSig(append(bytes.Clone(sig[:64]), 27+((sig[64]-27)^1))),
	} {
		env := ts.post("/v1/inbound-receiver/register", b)
		if env.Status != 400 || env.Error == nil || env.Error.Code != "INVALID_PARAMS" {
			t.Errorf("%s: %d %s", name, env.Status, env.Raw)
		}
	}
}

// secSign is the depositor's signature of m's registration message (the
// outputToken of multiStep.registration) for chainID's domain, v 27/28.
func secSign(t *testing.T, m multiStep, chainID uint64) []byte {
	t.Helper()
	msg := pulseroute.RegisterMessage{TxHash: common.HexToHash(m.step1.TxHash), ToAddress: common.HexToAddress(m.from),
		OutputToken: common.HexToAddress(plsx369), DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(chainID, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, m.pk)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return sig
}
