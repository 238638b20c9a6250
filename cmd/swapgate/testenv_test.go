package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/apitest"
	"github.com/swapgate/swapgate/internal/pgtest"
)

// contract is the API document every response of these tests is checked
// against (see testServer.check), loaded once per test binary: loading and
// validating the document is the slow part, checking a response only reads
// it.
var contract = sync.OnceValues(apitest.Load)

// TestMain lets this test binary stand in for bin/swapgate: run through a
// link named swapgate (see linkSwapgate), it is the swapgate command line,
// so that the README's own command lines, which name bin/swapgate, run as
// written against the code under test without building the binary apart.
//
// With SWAPGATE_TEST_STORE=postgres every server startServer starts keeps
// its state in a database of its own on a PostgreSQL server of the binary's
// (see internal/pgtest), so that the whole end-to-end suite runs on that
// backend too.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "swapgate" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv("SWAPGATE_TEST_STORE") == "postgres" {
		os.Exit(pgtest.Main(m, &suitePostgres))
	}
	os.Exit(m.Run())
}

// suitePostgres is the binary's PostgreSQL server when the suite runs on
// that backend (SWAPGATE_TEST_STORE=postgres), nil otherwise; suiteStores
// maps a test server's data directory to its database, so that the
// command lines a test runs on that directory (cli) name the same store.
var (
	suitePostgres *pgtest.Server
	suiteStores   sync.Map // data directory → --store
)

// linkSwapgate makes dir/bin/swapgate, a link to this test binary, for
// scripts run in dir.
func linkSwapgate(t *testing.T, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary's path, for bin/swapgate: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "bin", "swapgate")); err != nil {
		t.Fatalf("link bin/swapgate: %v", err)
	}
}

// testServer is a real Swapgate on a random loopback port with its own data
// directory: real Pebble, real fasthttp, real actors.
type testServer struct {
	t    *testing.T
	app  *app.App
	base string
	dir  string
}

func startServer(t *testing.T, mutate func(*app.Config)) *testServer {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if mutate != nil {
		mutate(&cfg)
	}
	if suitePostgres != nil && cfg.Store == "" {
		// A restart on a data directory finds its database again.
		if dsn, ok := suiteStores.Load(cfg.DataDir); ok {
			cfg.Store = dsn.(string)
		} else {
			cfg.Store = suitePostgres.DSN(t)
			suiteStores.Store(cfg.DataDir, cfg.Store)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ts := &testServer{t: t, app: a, base: "http://" + a.Addr(), dir: cfg.DataDir}
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) stop() {
	if ts.app == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := ts.app.Close(ctx); err != nil {
		ts.t.Errorf("close: %v", err)
	}
	ts.app = nil
}

// envelope is the decoded {data, error, meta} of a response.
type envelope struct {
	Status int
	Header http.Header
	Raw    []byte
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
	Meta struct {
		RequestID string `json:"requestId"`
		Timestamp int64  `json:"timestamp"`
		RateLimit *struct {
			Limit     int   `json:"limit"`
			Remaining int   `json:"remaining"`
			Reset     int64 `json:"reset"`
		} `json:"rateLimit"`
	} `json:"meta"`
}

type reqOpt func(*http.Request)

func withKey(key string) reqOpt { return func(r *http.Request) { r.Header.Set("X-API-Key", key) } }

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func (ts *testServer) do(method, path string, body []byte, opts ...reqOpt) *envelope {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.base+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.check(req, resp.StatusCode, resp.Header, raw)
	env := &envelope{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if !strings.HasPrefix(path, "/metrics") {
		if err := json.Unmarshal(raw, env); err != nil {
			ts.t.Fatalf("%s %s: response is not the JSON envelope: %v\n%s", method, path, err, raw)
		}
	}
	return env
}

// check holds one answer to the API document: its status must be one the
// document gives the operation, its documented headers present and its
// body valid against the schema. A mismatch fails the test (without
// stopping it, so that one run shows every mismatch, and so that it may be
// called from any goroutine) naming the request and what the document
// refused.
func (ts *testServer) check(req *http.Request, status int, header http.Header, body []byte) {
	ts.t.Helper()
	c, err := contract()
	if err != nil {
		ts.t.Errorf("the API document: %v", err)
		return
	}
	if err := c.CheckResponse(req, status, header, body); err != nil {
		ts.t.Errorf("contract: %v\nbody: %s", err, truncate(body, 2000))
	}
}

// truncate shortens a body for a failure message.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

func (ts *testServer) get(path string, opts ...reqOpt) *envelope {
	ts.t.Helper()
	return ts.do(http.MethodGet, path, nil, opts...)
}

// decode unmarshals data into v, failing the test on error.
func (e *envelope) decode(t *testing.T, v any) {
	t.Helper()
	if e.Error != nil {
		t.Fatalf("unexpected error %d %s: %s %v", e.Status, e.Error.Code, e.Error.Message, e.Error.Details)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		t.Fatalf("decode data: %v\n%s", err, e.Data)
	}
}

// wantError checks status, code and (when param is not empty) details.param.
func (e *envelope) wantError(t *testing.T, status int, code, param string) {
	t.Helper()
	if e.Status != status || e.Error == nil || e.Error.Code != code {
		t.Fatalf("want %d %s, got %d %s", status, code, e.Status, e.Raw)
	}
	if string(e.Data) != "null" {
		t.Fatalf("error response must have data null: %s", e.Raw)
	}
	if param != "" && e.Error.Details["param"] != param {
		t.Fatalf("want details.param %q, got %v", param, e.Error.Details)
	}
}

// cli runs the real swapgate command line and decodes its JSON output.
func cli(t *testing.T, out any, args ...string) {
	t.Helper()
	for i, a := range args {
		if a == "--data" && i+1 < len(args) {
			if dsn, ok := suiteStores.Load(args[i+1]); ok {
				args = append(args[:len(args):len(args)], "--store", dsn.(string))
			}
			break
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("swapgate %v: exit %d: %s", args, code, stderr.String())
	}
	if out != nil {
		if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
			t.Fatalf("swapgate %v: output is not JSON: %v\n%s", args, err, stdout.String())
		}
	}
}

// createPartner provisions a partner through the CLI (through the running
// server's admin listener) and returns its id and key.
func (ts *testServer) createPartner(name string, extra ...string) (id, key string) {
	ts.t.Helper()
	var res struct {
		ID     string `json:"id"`
		APIKey string `json:"apiKey"`
	}
	args := append([]string{"partner", "create", "--data", ts.dir, "--name", name, "--email", strings.ToLower(name) + "@example.com"}, extra...)
	cli(ts.t, &res, args...)
	if res.ID == "" || !strings.HasPrefix(res.APIKey, "pk_live_") {
		ts.t.Fatalf("partner create gave %+v", res)
	}
	return res.ID, res.APIKey
}
