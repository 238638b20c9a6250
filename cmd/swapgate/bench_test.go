package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// benchSummary is the part of the final JSON line the tests read.
type benchSummary struct {
	Scenario      string           `json:"scenario"`
	StopReason    string           `json:"stopReason"`
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	StatusClasses map[string]int64 `json:"statusClasses"`
	Status        map[string]int64 `json:"status"`
	RPS           float64          `json:"rps"`
	Latency       struct {
		P50, P90, P99, Max int64
		P999               int64 `json:"p99.9"`
	} `json:"latencyUs"`
	ErrorSamples []struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	} `json:"errorSamples"`
}

// runBenchCmd runs `swapgate bench` and decodes its last stdout line.
func runBenchCmd(t *testing.T, args ...string) (benchSummary, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"bench"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("bench %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	var s benchSummary
	if err := json.Unmarshal([]byte(out[strings.LastIndexByte(out, '\n')+1:]), &s); err != nil {
		t.Fatalf("last line is not the JSON summary: %v\n%s", err, out)
	}
	return s, out
}

func TestBenchAgainstRealServer(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin, c.AnonReadPerMin = 1<<30, 1<<30 })
	tests := []struct {
		scenario string
		args     []string
	}{
		{"ping", []string{"--duration", "300ms", "--workers", "4", "--interval", "100ms"}},
		{"quote", []string{"--duration", "3s", "--max-requests", "40", "--workers", "4"}},
		{"tokens", []string{"--duration", "300ms", "--workers", "2", "--rate", "100", "--arrival", "fixed", "--json"}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			s, out := runBenchCmd(t, append([]string{"--url", ts.base, "--scenario", tc.scenario}, tc.args...)...)
			if s.Scenario != tc.scenario || s.Requests == 0 || s.StatusClasses["2xx"] == 0 {
				t.Fatalf("summary: %+v\n%s", s, out)
			}
			var sum int64
			for _, n := range s.Status {
				sum += n
			}
			if sum != s.Requests {
				t.Fatalf("status counts add to %d of %d requests", sum, s.Requests)
			}
			l := s.Latency
			if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Fatalf("percentiles out of order: %+v", l)
			}
			if tc.scenario == "quote" && (s.Requests != 40 || s.StopReason != "max-requests") {
				t.Fatalf("quote run: %d requests, stopped by %q", s.Requests, s.StopReason)
			}
		})
	}
}

func TestBenchRefusesAndExplains(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "http://10.0.0.1:8080", "--duration", "1s"}, "not on loopback"},
		{[]string{"--url", "http://192.168.1.1", "--duration", "1s"}, "not on loopback"},
		{[]string{"--scenario", "flood"}, "unknown scenario"},
		{[]string{"--workers", "0"}, "workers"},
		{[]string{"--duration", "0s"}, "duration"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"bench"}, tc.args...), &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "-h"}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "-max-requests") || !strings.Contains(stdout.String(), "quote") {
		t.Fatalf("help: exit %d\n%s", code, stdout.String())
	}
}
