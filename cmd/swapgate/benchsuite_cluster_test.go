package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/internal/testdeps"
)

// TestBenchSuiteSmokeCluster runs the smoke suite with --cluster 2 on a
// temporary PostgreSQL server: clusters of one and two nodes start (each
// on a database of its own, created for the run and dropped after it),
// every node pinned to one core, and ping, quote-partner and webhook-storm
// are reported on each beside main, without an error; quote-partner is
// searched on both clusters and the notes compare two nodes' rate with
// twice one node's.
func TestBenchSuiteSmokeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a bench suite with three cluster nodes")
	}
	testdeps.LookPath(t, "taskset") // util-linux; scripts/test-deps installs it
	dsn := benchPostgres(t)
	dir := t.TempDir()
	linkSwapgate(t, dir)
	out := filepath.Join(dir, "results")
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench-suite", "--preset", "smoke", "--out", out, "--binary", filepath.Join(dir, "bin", "swapgate"),
		"--scenarios", "quote-partner,webhook-storm", "--store", dsn, "--cluster", "2"}, &stdout, &stderr)
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
	var rep struct {
		Config struct{ Cluster, ClusterCores int }
		Table  []struct {
			Scenario, Target, Backend string
			Requests, Errors          int64
			MaxRate                   *struct{ Value struct{ Median float64 } }
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
	if rep.Config.Cluster != 2 || rep.Config.ClusterCores != 1 {
		t.Errorf("config %+v", rep.Config)
	}
	var got []string
	for _, r := range rep.Table {
		got = append(got, r.Scenario+"/"+r.Target+"/"+r.Backend)
		if r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s/%s: %d requests, %d errors", r.Scenario, r.Target, r.Requests, r.Errors)
		}
		if r.Scenario == "quote-partner" && strings.HasPrefix(r.Target, "cluster-") && (r.MaxRate == nil || r.MaxRate.Value.Median <= 0) {
			t.Errorf("quote-partner/%s: not searched for its max rate", r.Target)
		}
	}
	for _, w := range []string{"ping/cluster-1/postgres", "ping/cluster-2/postgres", "quote-partner/cluster-1/postgres",
		"quote-partner/cluster-2/postgres", "webhook-storm/cluster-1/postgres", "webhook-storm/cluster-2/postgres"} {
		if !slices.Contains(got, w) {
			t.Errorf("no row %s in %v", w, got)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"quote-partner max/s on cluster-1: ", "quote-partner max/s on cluster-2: ", "÷ (2 × cluster-1's)"} {
		if !strings.Contains(notes, n) {
			t.Errorf("no note %q in:\n%s", n, notes)
		}
	}
	pinned := map[string]string{}
	for _, s := range rep.Servers {
		if strings.HasPrefix(s.Name, "cluster-") {
			if len(s.Args) < 2 || s.Args[0] != "--cpu-list" {
				t.Errorf("%s: not pinned: %v", s.Name, s.Args)
				continue
			}
			pinned[s.Name] = s.Args[1]
		}
	}
	if want := map[string]string{"cluster-1-node1": "0", "cluster-2-node1": "0", "cluster-2-node2": "1"}; len(pinned) != 3 ||
		pinned["cluster-1-node1"] != want["cluster-1-node1"] || pinned["cluster-2-node1"] != want["cluster-2-node1"] ||
		(pinned["cluster-2-node2"] != want["cluster-2-node2"] && pinned["cluster-2-node2"] != "0") {
		t.Errorf("nodes pinned %v, want %v (node 2 on core 0 on a one-core machine)", pinned, want)
	}
	// The clusters' databases were dropped with the run.
	var dbs bytes.Buffer
	ls := exec.Command("psql", dsn, "-Atc", "SELECT datname FROM pg_database WHERE datname LIKE 'swapgate_bench_c%'")
	ls.Stdout = &dbs
	if err := ls.Run(); err == nil && strings.TrimSpace(dbs.String()) != "" {
		t.Errorf("cluster databases left behind: %s", dbs.String())
	}
}
