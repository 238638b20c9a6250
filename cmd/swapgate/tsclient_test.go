package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// tsClientDir is the TypeScript client's npm package, from this package.
const tsClientDir = "../../clients/typescript"

// TestTypeScriptClientSmoke type-checks the TypeScript client and its smoke
// test with tsc --strict, then runs the smoke test with Node against a real
// sandbox-mode server: a partner (25 bps) upserts its fee wallet, registers
// a webhook, quotes, plays the wallet on the sandbox chain, executes the
// swap and follows it to DONE, and opens an on-ramp checkout, every call
// through the client generated from the API document (test/smoke.ts checks
// the values). The client talks to the server through a pass-through proxy
// that holds every answer to the document, as the other end-to-end tests
// do, so that what the TypeScript types promise is what the server sends.
// The webhook's receiver checks each delivery's signature and holds its
// payload to the document too. Node and npm are required: the test fails
// without them (make test installs them, scripts/test-deps).
func TestTypeScriptClientSmoke(t *testing.T) {
	dir := typescriptClient(t)

	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.SandboxBridgeScale = 0 // bridges deliver at the tracker's first poll
	})
	_, key := ts.createPartner("TypeScript", "--swap-fee-bps", "25")
	base := ts.contractProxy()

	npm(t, dir, 3*time.Minute, nil, "run", "typecheck")
	out := npm(t, dir, 3*time.Minute, []string{
		"SWAPGATE_BASE_URL=" + base,
		"SWAPGATE_API_KEY=" + key,
		"SWAPGATE_WEBHOOK_URL=" + rc.srv.URL + "/hook",
		"SWAPGATE_WEBHOOK_SECRET=" + e2eSecret,
	}, "run", "smoke")
	if !strings.Contains(out, "\nPASS\n") {
		t.Fatalf("the smoke test exited 0 without PASS:\n%s", out)
	}
	for _, step := range []string{"fee wallet upsert", "webhook registration", "quote", "status stream", "execute", "webhook deliveries", "on-ramp quote", "on-ramp checkout"} {
		if !strings.Contains(out, "ok   "+step+": ") {
			t.Errorf("the smoke test did not report %q:\n%s", step, out)
		}
	}

	// The receiver got the swap's two events, signed with the secret the
	// client registered (it answers 401 to a bad signature, which the smoke
	// test would have seen in the deliveries).
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var events []string
	for _, b := range rc.body {
		var p webhook.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("a delivery is not a webhook payload: %v\n%s", err, b)
		}
		events = append(events, p.Event)
	}
	slices.Sort(events)
	if want := []string{webhook.SwapCompleted, webhook.SwapPending}; !slices.Equal(events, want) {
		t.Errorf("the receiver got %v, want %v", events, want)
	}
}

// TestTypeScriptSchemaIsGenerated fails when the committed
// clients/typescript/src/schema.d.ts is not what `npm run generate` makes of
// the current api/openapi.json, so that the document and the client cannot
// drift apart. It runs the package's own generate script on a copy of the
// package (its node_modules linked) next to a copy of the document, laid out
// as in the repository, and compares the output byte for byte.
func TestTypeScriptSchemaIsGenerated(t *testing.T) {
	dir := typescriptClient(t)

	root := t.TempDir()
	pkg := filepath.Join(root, "clients", "typescript")
	copyFile(t, filepath.Join(dir, "..", "..", "api", "openapi.json"), filepath.Join(root, "api", "openapi.json"))
	copyFile(t, filepath.Join(dir, "package.json"), filepath.Join(pkg, "package.json"))
	if err := os.MkdirAll(filepath.Join(pkg, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(pkg, "node_modules")); err != nil {
		t.Fatal(err)
	}
	npm(t, pkg, 2*time.Minute, nil, "run", "generate")

	fresh, err := os.ReadFile(filepath.Join(pkg, "src", "schema.d.ts"))
	if err != nil {
		t.Fatalf("npm run generate wrote no src/schema.d.ts: %v", err)
	}
	committed, err := os.ReadFile(filepath.Join(dir, "src", "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("clients/typescript/src/schema.d.ts is not generated from the current api/openapi.json: "+
			"run `npm run generate` in clients/typescript and commit it\nfirst difference: %s", firstDifference(committed, fresh))
	}
}

// firstDifference names the first line where the committed file and the
// generated one differ.
func firstDifference(committed, fresh []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(fresh), "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d\ncommitted: %q\ngenerated: %q", i+1, x, y)
		}
	}
	return "none"
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// typescriptClient returns the client package's absolute directory with its
// dependencies installed as package-lock.json pins them, holding the
// package (an flock on its directory) until the test ends, since the tests
// write node_modules and dist there. `npm ci` runs only when the lock file
// or package.json changed since the last install: a marker in node_modules
// records the digest of both. Node and npm must be installed.
func typescriptClient(t *testing.T) string {
	t.Helper()
	requireNode(t)
	dir, err := filepath.Abs(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	lockPackage(t, dir)

	want := hex.EncodeToString(packageDigest(t, dir)) + "\n"
	marker := filepath.Join(dir, "node_modules", ".swapgate-installed")
	if got, err := os.ReadFile(marker); err == nil && string(got) == want {
		return dir
	}
	start := time.Now()
	npm(t, dir, 5*time.Minute, nil, "ci", "--no-audit", "--no-fund")
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("npm ci in %s took %s", dir, time.Since(start).Round(time.Millisecond))
	return dir
}

// requireNode fails the test unless node and npm are installed
// (scripts/test-deps installs them, as make test does): a skipped Node test
// would pass unseen.
func requireNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (scripts/test-deps installs it, as make test does): %v", tool, err)
		}
	}
}

// packageDigest is the SHA-256 of an npm package's package.json and
// package-lock.json, which name what npm ci installs.
func packageDigest(t *testing.T, dir string) []byte {
	t.Helper()
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return h.Sum(nil)
}

// lockPackage holds an exclusive flock on dir until the test ends, so that
// two test processes never install or build in it at once; it waits at
// most five minutes for another to let go.
func lockPackage(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) || t.Context().Err() != nil {
			f.Close()
			t.Fatalf("lock %s: %v", dir, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// npm runs npm with args in dir, with the test's environment plus env,
// within timeout (and the test's own context), and returns what it printed;
// a failure or a timeout fails the test with that output. npm and what it
// starts run in a process group of their own, killed whole on a timeout.
func npm(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("npm %s in %s: no end within %s:\n%s", strings.Join(args, " "), dir, timeout, out.String())
	}
	if err != nil {
		t.Fatalf("npm %s in %s: %v after %s:\n%s", strings.Join(args, " "), dir, err, took, out.String())
	}
	t.Logf("npm %s: %s\n%s", strings.Join(args, " "), took, out.String())
	return out.String()
}

// contractProxy is a pass-through to the server that holds every answer to
// the API document with check (a documented status, the documented headers,
// a body the schema accepts), failing the test on a mismatch, and returns
// its base URL.
func (ts *testServer) contractProxy() string {
	t := ts.t
	t.Helper()
	u, err := url.Parse(ts.base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		ts.check(resp.Request, resp.StatusCode, resp.Header, body)
		return nil
	}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		t.Errorf("proxy: %s %s: %v", r.Method, r.URL, err)
		w.WriteHeader(http.StatusBadGateway)
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}
