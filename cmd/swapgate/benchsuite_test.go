package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/pgtest"
	"github.com/swapgate/swapgate/internal/testdeps"
)

// TestBenchSuiteSmoke runs make bench-quick's machinery end to end at toy
// durations (--preset smoke): this test binary stands in for bin/swapgate
// (see TestMain), so the suite starts real bare, Swapgate and receiver
// processes from it, provisions them through the CLI and HTTP, runs every
// scenario and a find-max, stops everything and writes its files. The test
// checks the files, not the speed of anything.
func TestBenchSuiteSmoke(t *testing.T) {
	dir := t.TempDir()
	linkSwapgate(t, dir)
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run([]string{"bench-suite", "--preset", "smoke", "--out", out, "--binary", filepath.Join(dir, "bin", "swapgate")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("bench-suite: exit %d after %s\nstdout:\n%s\nstderr:\n%s", code, time.Since(start), stdout.String(), stderr.String())
	}
	runs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("results folders %v: %v", runs, err)
	}
	raw, err := os.ReadFile(filepath.Join(runs[0], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Preset string
		Table  []struct {
			Scenario, Target string
			Requests, Errors int64
			RPS              struct{ Value struct{ Median float64 } }
			MaxRate          *struct{ Value struct{ Median float64 } }
		}
		Runs []struct {
			Scenario string
			Webhook  *struct{ Deliveries int }
			Stream   *struct {
				Streams    int64
				FirstRoute struct{ P50 int64 } `json:"firstRouteUs"`
			}
			Breaker *struct{ Opens, SkippedLegs, Legs float64 }
			Live    *struct {
				Legs, SaturationRefusals float64
				ServerRssBytes           int64
			}
		}
		Notes     []string
		Processes []struct {
			Name    string
			Samples []struct{ RSS int64 }
		}
		Servers []struct{ Name string }
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	want := []string{"ping/bare", "ping/swapgate", "tokens/swapgate", "quote-partner/swapgate", "quote-fee/swapgate", "quote-anon/swapgate",
		"routes/swapgate", "quote-stream/swapgate", "mixed/swapgate", "quote-evm-solana/swapgate", "quote-slow-provider/swapgate",
		"quote-slow-provider-breaker/swapgate", "quote-slow-provider-strategy/swapgate", "quote-live/swapgate", "webhook-storm/swapgate"}
	var got []string
	for _, r := range rep.Table {
		got = append(got, r.Scenario+"/"+r.Target)
		if r.Requests == 0 || r.Errors != 0 || r.RPS.Value.Median <= 0 {
			t.Errorf("%s/%s: %d requests, %d errors, %v rps", r.Scenario, r.Target, r.Requests, r.Errors, r.RPS.Value.Median)
		}
		if r.Scenario == "ping" && r.MaxRate == nil {
			t.Errorf("ping/%s: not searched for its max rate", r.Target)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || rep.Preset != "smoke" {
		t.Fatalf("table rows %v, want %v", got, want)
	}
	for _, r := range rep.Runs {
		if r.Scenario == "webhook-storm" && (r.Webhook == nil || r.Webhook.Deliveries == 0) {
			t.Errorf("webhook-storm: no delivery seen at the receiver: %+v", r.Webhook)
		}
		if r.Scenario == "quote-stream" && (r.Stream == nil || r.Stream.Streams == 0 || r.Stream.FirstRoute.P50 <= 0) {
			t.Errorf("quote-stream: no stream measured: %+v", r.Stream)
		}
		// The breakers of the slow server stay shut; those of the other
		// one open on the stalled tools (its preflight's quotes timed out)
		// and skip their legs.
		if r.Scenario == "quote-slow-provider" && (r.Breaker == nil || r.Breaker.Opens != 0 || r.Breaker.SkippedLegs != 0) {
			t.Errorf("quote-slow-provider: breakers %+v", r.Breaker)
		}
		if r.Scenario == "quote-slow-provider-breaker" && (r.Breaker == nil || r.Breaker.SkippedLegs == 0) {
			t.Errorf("quote-slow-provider-breaker: breakers %+v", r.Breaker)
		}
		// The live server's legs reach the stand-ins, its pools refuse none.
		if strings.HasPrefix(r.Scenario, "quote-live") && (r.Live == nil || r.Live.Legs == 0 || r.Live.SaturationRefusals != 0 || r.Live.ServerRssBytes <= 0) {
			t.Errorf("%s: live figures %+v", r.Scenario, r.Live)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"quote-slow-provider: p99", "quote-slow-provider-breaker: p99", "quote-slow-provider-strategy (minWaitMs=", "quote-stream: the first route event",
		"quote-live (live mode"} {
		if !strings.Contains(notes, n) {
			t.Errorf("no note %q in:\n%s", n, notes)
		}
	}
	names := map[string]bool{}
	for _, p := range rep.Processes {
		if len(p.Samples) > 0 && p.Samples[0].RSS > 0 {
			names[p.Name] = true
		}
	}
	for _, n := range []string{"generator", "bare", "main", "slow", "slow-breaker", "live", "standins"} {
		if !names[n] {
			t.Errorf("no memory samples of %s: %v", n, names)
		}
	}
	if len(rep.Servers) != 7 {
		t.Errorf("servers %+v", rep.Servers)
	}
	page, err := os.ReadFile(filepath.Join(runs[0], "report.html"))
	if err != nil || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || bytes.Count(page, []byte("<svg ")) < 10 || bytes.Contains(page, []byte("<script")) {
		t.Fatalf("report.html (%d bytes): %v", len(page), err)
	}
	table, err := os.ReadFile(filepath.Join(runs[0], "table.txt"))
	if err != nil || !bytes.Contains(stdout.Bytes(), bytes.SplitN(table, []byte("\n"), 2)[0]) || !strings.Contains(stdout.String(), "p99") {
		t.Fatalf("the printed table and table.txt differ: %v\n%s", err, stdout.String())
	}
	for _, l := range []string{"bare.log", "main.log", "slow.log", "slow-breaker.log", "receiver.log", "live.log", "standins.log"} {
		if _, err := os.Stat(filepath.Join(runs[0], "logs", l)); err != nil {
			t.Errorf("log: %v", err)
		}
	}
	t.Logf("smoke suite took %s", time.Since(start))
}

func TestBenchSuiteRefusesAndExplains(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "huge"}, "unknown preset"},
		{[]string{"--scenarios", "flood"}, "unknown scenario"},
		{[]string{"--rounds", "1000"}, "rounds"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--store", "mysql://db/x"}, "--store must be a postgres://"},
		{[]string{"--cluster", "2"}, "a cluster run needs a PostgreSQL store"},
		{[]string{"--cluster", "99", "--store", "postgres://x@y/z"}, "cluster must be in [0, 8]"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"bench-suite", "--out", t.TempDir()}, tc.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	var stdout bytes.Buffer
	if code := run([]string{"bench-suite", "-h"}, &stdout, &bytes.Buffer{}); code != 0 || !strings.Contains(stdout.String(), "webhook-storm") || !strings.Contains(stdout.String(), "-find-max") {
		t.Fatalf("help: exit %d\n%s", code, stdout.String())
	}
}

// TestBenchSuiteSmokePostgres runs the smoke suite's store-writing
// scenarios with --store: a second Swapgate on a fresh PostgreSQL database
// (a temporary server from pgtest, or the one SWAPGATE_TEST_POSTGRES
// names) runs quote-partner, quote-fee and webhook-storm beside main's
// Pebble, each row labelled with its backend, quote-fee searched on both
// and their ratio in the notes. Where no server can be started here (no
// PostgreSQL binaries) the test is skipped.
func TestBenchSuiteSmokePostgres(t *testing.T) {
	dsn := benchPostgres(t)
	dir := t.TempDir()
	linkSwapgate(t, dir)
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench-suite", "--preset", "smoke", "--out", out, "--binary", filepath.Join(dir, "bin", "swapgate"),
		"--scenarios", "quote-partner,quote-fee,webhook-storm", "--store", dsn}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("bench-suite: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	runs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("results folders %v: %v", runs, err)
	}
	raw, err := os.ReadFile(filepath.Join(runs[0], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(dsn)) {
		t.Errorf("results.json carries the store's URL")
	}
	var rep struct {
		Table []struct {
			Scenario, Target, Backend string
			Requests, Errors          int64
			MaxRate                   *struct{ Value struct{ Median float64 } }
		}
		Runs []struct {
			Scenario, Target string
			Webhook          *struct{ Deliveries int }
			Ledger           *struct{ Commits, Rows float64 }
		}
		Notes   []string
		Servers []struct {
			Name string
			Args []string
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	want := []string{"ping/bare/", "ping/swapgate/pebble", "quote-partner/swapgate/pebble", "quote-partner/postgres/postgres",
		"quote-fee/swapgate/pebble", "quote-fee/postgres/postgres", "webhook-storm/swapgate/pebble", "webhook-storm/postgres/postgres"}
	var got []string
	for _, r := range rep.Table {
		got = append(got, r.Scenario+"/"+r.Target+"/"+r.Backend)
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s/%s: %d requests, %d errors", r.Scenario, r.Target, r.Requests, r.Errors)
		}
		if r.Scenario == "quote-fee" && (r.MaxRate == nil || r.MaxRate.Value.Median <= 0) {
			t.Errorf("quote-fee/%s: not searched for its max rate", r.Target)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("table rows %v, want %v", got, want)
	}
	for _, r := range rep.Runs {
		if r.Scenario == "webhook-storm" && (r.Webhook == nil || r.Webhook.Deliveries == 0) {
			t.Errorf("webhook-storm@%s: no delivery seen at the receiver: %+v", r.Target, r.Webhook)
		}
		// Every durable fee quote's record went through the ledger of the
		// server it was asked of, on either store.
		if r.Scenario == "quote-fee" && (r.Ledger == nil || r.Ledger.Commits == 0 || r.Ledger.Rows < r.Ledger.Commits) {
			t.Errorf("quote-fee@%s: ledger figures %+v", r.Target, r.Ledger)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"quote-fee max/s PostgreSQL ÷ Pebble: ", "webhook-storm@postgres: ", "webhook-storm@swapgate: "} {
		if !strings.Contains(notes, n) {
			t.Errorf("no note %q in:\n%s", n, notes)
		}
	}
	servers := map[string]bool{}
	for _, s := range rep.Servers {
		servers[s.Name] = true
	}
	if !servers["postgres"] || !servers["main"] {
		t.Errorf("servers %+v", rep.Servers)
	}
	if _, err := os.Stat(filepath.Join(runs[0], "logs", "postgres.log")); err != nil {
		t.Errorf("log: %v", err)
	}
}

// benchPostgres is a database on a PostgreSQL server of the test's own
// (pgtest), stopped at its end; where none starts the test is skipped,
// or fails under CI=true (testdeps.Unmet).
func benchPostgres(t *testing.T) string {
	t.Helper()
	srv, err := pgtest.Start(context.Background())
	if err != nil {
		testdeps.Unmet(t, "no PostgreSQL server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return srv.DSN(t)
}
