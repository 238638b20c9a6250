package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/bench/suite"
	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestBenchTxAgainstRealServer runs the bench suite's tx-throughput batch
// at a tiny size against a real sandbox server through its /rpc/42161:
// every intent confirmed, the figure and the summary the table reads
// agreeing, the store directory removed; and the refusals name the flag.
func TestBenchTxAgainstRealServer(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin, c.AnonReadPerMin = 1<<30, 1<<30 })
	dir := filepath.Join(t.TempDir(), "txm")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench-tx", "--url", ts.base, "--data", dir, "--intents", "12", "--poll", "5ms"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var res suite.TxResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Figure == nil || res.Summary == nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	f, s := res.Figure, res.Summary
	if f.Intents != 12 || f.Confirmed != 12 || f.Failed != 0 || f.Bumps != 0 {
		t.Fatalf("figure %+v, want 12 intents confirmed, none failed or bumped", f)
	}
	if f.PerSec <= 0 || f.InclusionP50Us <= 0 || f.InclusionP50Us > f.InclusionP99Us {
		t.Fatalf("figure %+v: want a rate and 0 < p50 <= p99", f)
	}
	if s.Scenario != "tx-throughput" || s.Requests != 12 || s.Errors != 0 || s.RPS != f.PerSec ||
		s.Latency.P50 != f.InclusionP50Us || s.Latency.P99 != f.InclusionP99Us || s.Latency.Max < s.Latency.P99 {
		t.Fatalf("summary %+v does not carry the figure %+v", s, f)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the store directory is left (%v)", err)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--data", dir}, "--url"},
		{[]string{"--url", "ftp://x", "--data", dir}, "--url"},
		{[]string{"--url", ts.base}, "--data"},
		{[]string{"--url", ts.base, "--data", t.TempDir()}, "--data"},
		{[]string{"--url", ts.base, "--data", dir, "--intents", "0"}, "--intents"},
		{[]string{"--url", ts.base, "--data", dir, "--poll", "0s"}, "--poll"},
	} {
		var out, errOut bytes.Buffer
		if code := run(append([]string{"bench-tx"}, c.args...), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.flag) {
			t.Errorf("%v: exit %d, stderr %q: want 2 naming %s", c.args, code, errOut.String(), c.flag)
		}
	}
}
