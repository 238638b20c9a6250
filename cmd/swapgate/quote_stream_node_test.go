package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/sse"
)

// sseNodeDir holds the Node client of the streamed quote: package.json and
// package-lock.json pin the eventsource package, client.mjs uses it.
const sseNodeDir = "testdata/sse-node"

// nodeClient installs the Node client's dependencies (npm ci, once per
// version of the lock file: the install is kept in the user's cache
// directory under the lock's hash) and returns a directory holding
// client.mjs beside a node_modules that resolves them. node and npm must
// be installed (scripts/test-deps installs them): their absence fails the
// test rather than skipping it, since a skipped client test would pass
// unseen.
func nodeClient(t *testing.T) string {
	t.Helper()
	requireNode(t)
	sum := packageDigest(t, sseNodeDir)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	home := filepath.Join(cache, "swapgate-test", "sse-node-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(home, "installed")); err != nil {
		if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
			t.Fatal(err)
		}
		// Installed apart and renamed into place, so that a test run
		// beside this one never sees a half install.
		tmp, err := os.MkdirTemp(filepath.Dir(home), "installing-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		for _, name := range []string{"package.json", "package-lock.json"} {
			copyFile(t, filepath.Join(sseNodeDir, name), filepath.Join(tmp, name))
		}
		npm(t, tmp, 5*time.Minute, nil, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		if err := os.WriteFile(filepath.Join(tmp, "installed"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, home); err != nil {
			if _, serr := os.Stat(filepath.Join(home, "installed")); serr != nil {
				t.Fatalf("keep the install: %v", err)
			}
		}
		t.Logf("installed the Node client's dependencies in %s", home)
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(sseNodeDir, "client.mjs"), filepath.Join(dir, "client.mjs"))
	if err := os.Symlink(filepath.Join(home, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// nodeRun is what the Node client printed: the answer's head, the events,
// and a failed connection.
type nodeRun struct {
	opens []struct {
		Status  int
		Headers map[string]string
	}
	events  []sse.Event
	failure string
	code    int
	exit    int
}

// runNodeClient runs client.mjs against path with args (the API key, or
// --close-after-route).
func runNodeClient(t *testing.T, dir string, ts *testServer, path string, args ...string) *nodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"client.mjs", ts.base + path}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	run := &nodeRun{}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
		}
		run.exit = ee.ExitCode()
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var l struct {
			Open *struct {
				Status  int
				Headers map[string]string
			}
			Event, Data string
			Failure     string
			Code        *int
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("the client printed %q: %v\nstderr: %s", line, err, stderr.String())
		}
		switch {
		case l.Open != nil:
			run.opens = append(run.opens, *l.Open)
		case l.Event != "":
			run.events = append(run.events, sse.Event{Name: l.Event, Data: l.Data})
		case l.Failure != "":
			run.failure = l.Failure
			if l.Code != nil {
				run.code = *l.Code
			}
		}
	}
	return run
}

// check holds what an EventSource received to the document: the head it
// saw and its events, written back as the stream they came in.
func (r *nodeRun) check(t *testing.T, ts *testServer, path string) {
	t.Helper()
	if len(r.opens) != 1 || r.opens[0].Status != 200 {
		t.Fatalf("the client connected %d times: %+v", len(r.opens), r.opens)
	}
	header := http.Header{}
	for k, v := range r.opens[0].Headers {
		header.Set(k, v)
	}
	var body bytes.Buffer
	for _, ev := range r.events {
		fmt.Fprintf(&body, "event: %s\ndata: %s\n\n", ev.Name, ev.Data)
	}
	req, err := http.NewRequest(http.MethodGet, ts.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts.check(req, 200, header, body.Bytes())
}

// TestQuoteStreamNodeEventSource reads streamed quotes with the npm
// eventsource package, as a Node integrator would: a partner's quote
// (route events, best, done last, the quote then in the partner's
// transactions), the engine's error as the server's error event (told
// apart from the EventSource's own connection errors) followed by done,
// a refusal before the stream as a failed connection with its status and
// no reconnection, and a client that closes its EventSource after the
// first route cancelling the race.
func TestQuoteStreamNodeEventSource(t *testing.T) {
	dir := nodeClient(t)
	ts := startServer(t, nil)
	_, key := ts.createPartner("NodeStreamer", "--swap-fee-bps", "25")
	if env := ts.putWallet(key, "evm", wallet); env.Status != 200 {
		t.Fatalf("fee wallet: %d %s", env.Status, env.Raw)
	}

	path := streamPath(arbToBase())
	run := runNodeClient(t, dir, ts, path, key)
	if run.exit != 0 || run.failure != "" {
		t.Fatalf("exit %d, failure %q", run.exit, run.failure)
	}
	run.check(t, ts, path)
	routes, outcome, done := wantEventOrder(t, run.events)
	if len(routes) == 0 || outcome.Name != "best" || done.Meta.RequestID != run.opens[0].Headers["x-request-id"] {
		t.Fatalf("%d routes, %s, done %+v, head %+v", len(routes), outcome.Name, done, run.opens[0])
	}
	var best shapeA
	if err := json.Unmarshal([]byte(outcome.Data), &best); err != nil {
		t.Fatal(err)
	}
	var txs struct{ Transactions []struct{ ID string } }
	ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
	if len(txs.Transactions) != 1 || txs.Transactions[0].ID != best.Quote.ID || best.FeeBps != 25 {
		t.Fatalf("transactions %+v, streamed quote %s (fee %d bps)", txs, best.Quote.ID, best.FeeBps)
	}

	path = streamPath(arbToBase("fromAmount", "10"))
	run = runNodeClient(t, dir, ts, path)
	if run.exit != 0 || run.failure != "" {
		t.Fatalf("no route: exit %d, failure %q", run.exit, run.failure)
	}
	run.check(t, ts, path)
	if _, outcome, _ := wantEventOrder(t, run.events); outcome.Name != "error" || !strings.Contains(outcome.Data, `"code":"NO_ROUTE_FOUND"`) {
		t.Fatalf("no route: %s %s", outcome.Name, outcome.Data)
	}

	run = runNodeClient(t, dir, ts, streamPath(arbToBase("order", "BEST")))
	if run.exit != 1 || run.code != 400 || len(run.opens) != 1 || len(run.events) != 0 {
		t.Fatalf("a refused stream: exit %d, failure %q (code %d), %d connections, events %+v", run.exit, run.failure, run.code, len(run.opens), run.events)
	}

	hung := hangingServer(t)
	run = runNodeClient(t, dir, hung, streamPath(arbToBase()), "--close-after-route")
	if run.exit != 0 || len(run.events) != 1 || run.events[0].Name != "route" {
		t.Fatalf("close after a route: exit %d, events %+v, failure %q", run.exit, run.events, run.failure)
	}
	hung.waitHungLegCancelled(1)
}
