package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/internal/pgtest"
)

// TestReadmePostgresWalkthrough runs the README's PostgreSQL commands as
// written, against a temporary server: the service from its own terminal
// (the README's example URL replaced by the server's, on a free port
// through SWAPGATE_ADDR), then the partner and settlement commands with
// the same SWAPGATE_STORE, whose partner the running service knows at once.
func TestReadmePostgresWalkthrough(t *testing.T) {
	needTools(t)
	dsn := pgtest.Private(t).DSN(t)
	dir := t.TempDir()
	linkSwapgate(t, dir)

	const example = "postgres://swapgate@db.internal/swapgate"
	serveBlock := readmeBlock(t, "### Running on PostgreSQL")
	if !strings.Contains(serveBlock, "export SWAPGATE_STORE='"+example+"'") || !strings.Contains(serveBlock, "bin/swapgate serve --data ./data") {
		t.Fatalf("the README's PostgreSQL terminal: %q", serveBlock)
	}
	srv := startCommand(t, dir, []string{"SWAPGATE_ADDR=127.0.0.1:0"}, strings.Replace(serveBlock, example, dsn, 1))
	serveAddr := srv.waitFor(t, "the service serves", func(_, stderr string) string { return loggedAddr(stderr, "swapgate serving") })
	ts := &testServer{t: t, base: "http://" + serveAddr, dir: dir}

	script := readmeBlockAfter(t, "In another, with the same `SWAPGATE_STORE` exported")
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SWAPGATE_STORE="+dsn)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's commands: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	var created struct{ ID, APIKey string }
	var settled map[string]any
	if err := dec.Decode(&created); err != nil || created.APIKey == "" {
		t.Fatalf("partner create printed %+v: %v", created, err)
	}
	if err := dec.Decode(&settled); err != nil {
		t.Fatalf("settle printed: %v", err)
	}
	if err := dec.Decode(new(any)); err != io.EOF {
		t.Fatalf("more output than two answers: %v", err)
	}
	var me struct{ ID, Name string }
	ts.get("/v1/partner/me", withKey(created.APIKey)).decode(t, &me)
	if me.ID != created.ID || me.Name != "Acme" {
		t.Fatalf("the service knows the partner as %+v, created %+v", me, created)
	}
}
