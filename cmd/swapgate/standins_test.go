package main

import (
	"bytes"
	"strings"
	"testing"
)

// The stand-ins command refuses what it cannot serve, naming the flag;
// serving itself is exercised by the bench suite's smoke test (quote-live
// runs against it).
func TestStandinsRefusesBadFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"negative latency", []string{"--latency", "-1s"}, "--latency"},
		{"latency past a minute", []string{"--latency", "2m"}, "--latency"},
		{"not loopback", []string{"--addr", "8.8.8.8:80"}, "--addr"},
		{"extra argument", []string{"now"}, "unexpected arguments"},
		{"unknown flag", []string{"--rate", "5"}, "rate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"standins"}, tc.args...), &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not name %q", stderr.String(), tc.want)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"standins", "-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "/rpc/<chainId>") ||
		!strings.Contains(stdout.String(), "Relay under /relay") {
		t.Errorf("help: exit %d, %q", code, stdout.String())
	}
}
