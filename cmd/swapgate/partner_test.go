package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// cliResult is one runPartner invocation's outcome.
type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := runPartnerEnv(args, &out, &errb, func(k string) string { return env[k] })
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// mustOK runs the CLI, expects success and decodes stdout into v.
func mustOK(t *testing.T, v any, args ...string) string {
	t.Helper()
	r := runCLI(t, nil, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("swapgate partner %s: exit %d, stderr %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
		t.Fatalf("output is not one JSON line: %q", r.stdout)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("decode output %q: %v", r.stdout, err)
	}
	return r.stdout
}

// createdOutput is the shape create and rotate-key print.
type createdOutput struct {
	ID      string            `json:"id"`
	APIKey  string            `json:"apiKey"`
	Partner admin.PartnerView `json:"partner"`
}

// exercisePartnerCommands runs every subcommand against dir and checks the
// results through lookup, which resolves a key digest to a partner ID.
func exercisePartnerCommands(t *testing.T, dir string, lookup func([32]byte) (string, error)) {
	var created createdOutput
	mustOK(t, &created, "create", "--data", dir, "--name", "Acme", "--email", "ops@acme.example", "--swap-fee-bps", "25")
	if created.ID == "" || !account.WellFormedKey(created.APIKey) || created.Partner.FeeTier.SwapFeeBps != 25 ||
		created.Partner.FeeTier.OnrampFeeBps != account.AnonymousOnrampFeeBps {
		t.Fatalf("create output = %+v", created)
	}
	if id, err := lookup(account.KeyDigest(created.APIKey)); err != nil || id != created.ID {
		t.Fatalf("created key's digest finds %q, %v; want %q", id, err, created.ID)
	}

	var list []map[string]any
	raw := mustOK(t, &list, "list", "--data", dir)
	if len(list) != 1 || list[0]["id"] != created.ID {
		t.Fatalf("list = %s", raw)
	}
	digest := account.KeyDigest(created.APIKey)
	for _, secret := range []string{created.APIKey, "apiKey", "keyDigest", "digest"} {
		if strings.Contains(raw, secret) {
			t.Fatalf("list output leaks %q: %s", secret, raw)
		}
	}
	if strings.Contains(raw, string(digest[:8])) {
		t.Fatalf("list output leaks the digest: %s", raw)
	}

	var rotated createdOutput
	mustOK(t, &rotated, "rotate-key", "--data", dir, "--id", created.ID)
	if rotated.ID != created.ID || rotated.APIKey == created.APIKey || !account.WellFormedKey(rotated.APIKey) {
		t.Fatalf("rotate-key output = %+v", rotated)
	}
	if _, err := lookup(account.KeyDigest(created.APIKey)); err == nil {
		t.Fatal("old key still resolves after rotate-key")
	}
	if id, err := lookup(account.KeyDigest(rotated.APIKey)); err != nil || id != created.ID {
		t.Fatalf("rotated key resolves to %q, %v", id, err)
	}

	var v admin.PartnerView
	mustOK(t, &v, "set-fees", "--data", dir, "--id", created.ID, "--onramp-fee-bps", "0")
	if v.FeeTier != (admin.FeeTier{SwapFeeBps: 25, OnrampFeeBps: 0}) {
		t.Fatalf("set-fees fee tier = %+v", v.FeeTier)
	}
	mustOK(t, &v, "set-limits", "--data", dir, "--id", created.ID, "--heavy", "100000", "--read", "200000")
	if v.RateLimit != (admin.RateLimit{RequestsPerMinute: 100000, HeavyPerMinute: 100000, ReadPerMinute: 200000}) {
		t.Fatalf("set-limits rate limit = %+v", v.RateLimit)
	}
	mustOK(t, &v, "set-origins", "--data", dir, "--id", created.ID, "--origins", "https://App.example, http://localhost:5173")
	if !slices.Equal(v.AllowedOrigins, []string{"https://app.example", "http://localhost:5173"}) {
		t.Fatalf("set-origins allowed origins = %q", v.AllowedOrigins)
	}
	mustOK(t, &v, "set-origins", "--data", dir, "--id", created.ID, "--origins", "")
	if v.AllowedOrigins == nil || len(v.AllowedOrigins) != 0 {
		t.Fatalf("set-origins \"\" left allowed origins %q, want []", v.AllowedOrigins)
	}
	mustOK(t, &v, "disable", "--data", dir, "--id", created.ID)
	if !v.Disabled || v.ID != created.ID {
		t.Fatalf("disable output = %+v", v)
	}
}

func TestPartnerCommandsLocal(t *testing.T) {
	dir := t.TempDir()
	// Each command opens and closes the store, so lookups reopen it too.
	lookup := func(d [32]byte) (string, error) {
		s, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			return "", err
		}
		defer s.Close()
		p, err := s.PartnerByKeyDigest(context.Background(), d)
		if err != nil {
			return "", err
		}
		return p.ID, nil
	}
	exercisePartnerCommands(t, dir, lookup)
}

func TestPartnerCommandsThroughAdminListener(t *testing.T) {
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var (
		mu      sync.Mutex
		changed []string
	)
	srv, err := admin.Start(dir, store, func(id string) {
		mu.Lock()
		defer mu.Unlock()
		changed = append(changed, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stop admin: %v", err)
		}
	}()
	lookup := func(d [32]byte) (string, error) {
		p, err := store.PartnerByKeyDigest(context.Background(), d)
		if err != nil {
			return "", err
		}
		return p.ID, nil
	}
	exercisePartnerCommands(t, dir, lookup)
	// create, rotate-key, set-fees, set-limits, set-origins (twice), disable
	// each notify the server.
	mu.Lock()
	defer mu.Unlock()
	if len(changed) != 7 {
		t.Fatalf("server saw %d changes, want 7: %v", len(changed), changed)
	}
}

func TestPartnerDataDirFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, map[string]string{"SWAPGATE_DATA": dir}, "create", "--name", "Env", "--email", "env@acme.example")
	if r.code != 0 {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	var created createdOutput
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil {
		t.Fatal(err)
	}
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Partner(context.Background(), created.ID); err != nil {
		t.Fatalf("partner not stored in $SWAPGATE_DATA: %v", err)
	}
}

func TestPartnerCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantMsg  string
	}{
		{"no subcommand", nil, 2, "missing partner subcommand"},
		{"unknown subcommand", []string{"delete"}, 2, "unknown partner subcommand"},
		{"unknown flag", []string{"list", "--data", dir, "--verbose"}, 2, "flag provided but not defined"},
		{"non-integer fee", []string{"set-fees", "--data", dir, "--id", "ptn_x", "--swap-fee-bps", "ten"}, 2, "not an integer"},
		{"missing name", []string{"create", "--data", dir, "--email", "a@b.co"}, 2, "--name is required"},
		{"missing id", []string{"disable", "--data", dir}, 2, "--id is required"},
		{"stray argument", []string{"list", "--data", dir, "extra"}, 2, "unexpected arguments"},
		{"bad email", []string{"create", "--data", dir, "--name", "n", "--email", "nobody"}, 2, "exactly one @"},
		{"fee out of range", []string{"create", "--data", dir, "--name", "n", "--email", "a@b.co", "--swap-fee-bps", "10001"}, 2, "between 0 and 500 bps"},
		{"nothing to set", []string{"set-limits", "--data", dir, "--id", "ptn_x"}, 2, "give heavyPerMin"},
		{"origin with a path", []string{"set-origins", "--data", dir, "--id", "ptn_x", "--origins", "https://a.example/app"}, 2, "--origins: origin \"https://a.example/app\" has a path"},
		{"wildcard origin", []string{"set-origins", "--data", dir, "--id", "ptn_x", "--origins", "https://*.a.example"}, 2, "--origins: origin \"https://*.a.example\" has a wildcard"},
		{"origins not given", []string{"set-origins", "--data", dir, "--id", "ptn_x"}, 2, "--origins is required"},
		{"unknown partner", []string{"rotate-key", "--data", dir, "--id", "ptn_missing"}, 1, "not found"},
		{"store not PostgreSQL", []string{"list", "--data", dir, "--store", "mysql://db/swapgate"}, 2, `--store must be a postgres:// or postgresql:// URL`},
		{"store not a URL", []string{"list", "--data", dir, "--store", dir}, 2, "--store must be a postgres:// URL"},
		{"store unreachable", []string{"list", "--data", dir, "--store", "postgres://nobody@127.0.0.1:1/swapgate?connect_timeout=2"}, 1, "failed to connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit = %d, want %d (stderr %s)", r.code, tt.wantCode, r.stderr)
			}
			if r.stdout != "" {
				t.Fatalf("stdout on failure: %q", r.stdout)
			}
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(r.stderr), &e); err != nil {
				t.Fatalf("stderr is not JSON: %q", r.stderr)
			}
			if !strings.Contains(e.Error, tt.wantMsg) {
				t.Fatalf("error %q does not mention %q", e.Error, tt.wantMsg)
			}
		})
	}
}

func TestPartnerLockedWithoutListener(t *testing.T) {
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	r := runCLI(t, nil, "list", "--data", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by another process") || !strings.Contains(r.stderr, "no admin listener") {
		t.Fatalf("locked without admin.json: exit %d, stderr %s", r.code, r.stderr)
	}

	// A stale advertisement (server killed without cleanup, port now closed).
	stale := `{"addr":"127.0.0.1:1","token":"00"}`
	if err := os.WriteFile(filepath.Join(dir, admin.FileName), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "list", "--data", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "does not answer") {
		t.Fatalf("locked with stale admin.json: exit %d, stderr %s", r.code, r.stderr)
	}
}

func TestPartnerHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"create", "-h"}} {
		r := runCLI(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: swapgate partner") {
			t.Fatalf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}
