package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestServeRefusesBadSettings runs `swapgate serve` with one bad setting
// (or several) at a time and checks that it exits 2 before starting
// anything, with one line per refusal naming the flag. Every row of
// serveSettings has at least one case here.
func TestServeRefusesBadSettings(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--mode", "test"}, []string{`--mode: must be sandbox or live, got "test"`}},
		{[]string{"--addr", "nonsense"}, []string{`--addr: must be host:port, got "nonsense"`}},
		{[]string{"--addr", "127.0.0.1:99999"}, []string{`--addr: port must be a number from 0 to 65535, got "99999"`}},
		{[]string{"--data", " "}, []string{"--data: must name a directory"}},
		{[]string{"--store", "mysql://db/swapgate"}, []string{`--store: must be a postgres:// or postgresql:// URL, or empty for the Pebble store under --data (scheme "mysql")`}},
		{[]string{"--store", "/var/lib/swapgate"}, []string{"--store: must be a postgres:// URL (or libpq's keyword=value form), or empty for the Pebble store under --data"}},
		{[]string{"--store", "postgres://u:secret@db:notaport/swapgate"}, []string{"--store: must be a PostgreSQL connection string: it does not parse as one"}},
		{[]string{"--read-timeout", "0s"}, []string{"--read-timeout: must be between 100ms and 10m0s, got 0s"}},
		{[]string{"--write-timeout", "1h"}, []string{"--write-timeout: must be between 100ms and 10m0s, got 1h0m0s"}},
		{[]string{"--idle-timeout", "0s"}, []string{"--idle-timeout: must be between 1s and 1h0m0s, got 0s"}},
		{[]string{"--shutdown-timeout", "0s"}, []string{"--shutdown-timeout: must be between 1s and 10m0s, got 0s"}},
		{[]string{"--anon-heavy-per-min", "-1"}, []string{"--anon-heavy-per-min: must be between 0 and 1000000000, got -1"}},
		{[]string{"--anon-read-per-min", "-1"}, []string{"--anon-read-per-min: must be between 0 and 1000000000, got -1"}},
		{[]string{"--trusted-proxies", "10.0.0.0/33"}, []string{`--trusted-proxies: app: trusted proxy "10.0.0.0/33"`}},
		{[]string{"--price-interval", "0s"}, []string{"--price-interval: must be between 100ms and 1h0m0s, got 0s"}},
		{[]string{"--price-max-age", "15s"}, []string{"--price-max-age: must be longer than --price-interval (15s) and at most 24h0m0s, got 15s"}},
		{[]string{"--price-max-age", "25h"}, []string{"--price-max-age: must be longer than --price-interval (15s) and at most 24h0m0s, got 25h0m0s"}},
		{[]string{"--gas-interval", "2h"}, []string{"--gas-interval: must be between 100ms and 1h0m0s, got 2h0m0s"}},
		{[]string{"--gas-max-age", "10s"}, []string{"--gas-max-age: must be longer than --gas-interval (10s) and at most 24h0m0s, got 10s"}},
		{[]string{"--gas-interval", "1m", "--gas-max-age", "30s"}, []string{"--gas-max-age: must be longer than --gas-interval (1m0s) and at most 24h0m0s, got 30s"}},
		{[]string{"--gas-max-age", "25h"}, []string{"--gas-max-age: must be longer than --gas-interval (10s) and at most 24h0m0s, got 25h0m0s"}},
		{[]string{"--rpc-timeout", "0s"}, []string{"--rpc-timeout: must be between 100ms and 1m0s, got 0s"}},
		{[]string{"--pulse-reserves-max-age", "500ms"}, []string{"--pulse-reserves-max-age: must be 0 (the router prices every leg) or between 1s and 1h0m0s, got 500ms"}},
		{[]string{"--pulse-reserves-max-age", "-1s"}, []string{"--pulse-reserves-max-age: must be 0 (the router prices every leg) or between 1s and 1h0m0s, got -1s"}},
		{[]string{"--confirmations", "1001"}, []string{"--confirmations: must be between 0 and 1000, got 1001"}},
		{[]string{"--tx-bump-after", "0s"}, []string{"--tx-bump-after: must be between 1s and 1h0m0s, got 0s"}},
		{[]string{"--tx-fee-cap", "42161=0"}, []string{"--tx-fee-cap: chain 42161: must be between 0 and 1e12 gwei (exclusive of 0), got 0"}},
		{[]string{"--operator-min-balance", "-1"}, []string{"--operator-min-balance: must be between 0 and 1e+12, got -1"}},
		{[]string{"--rpc-timeout", "2m"}, []string{"--rpc-timeout: must be between 100ms and 1m0s, got 2m0s"}},
		{[]string{"--refdata-refresh-timeout", "0s"}, []string{"--refdata-refresh-timeout: must be between 100ms and 1m0s, got 0s"}},
		{[]string{"--refdata-cache-size", "3"}, []string{"--refdata-cache-size: must be 0 (the default) or between 16 and 1048576, got 3"}},
		{[]string{"--gas-rpc", "1=http://"}, []string{`--gas-rpc: chain 1: must be an absolute http or https or ws or wss URL, got "http://"`}},
		{[]string{"--quote-deadline", "0s"}, []string{"--quote-deadline: must be between 10ms and 1m0s, got 0s"}},
		{[]string{"--quote-min-wait", "2s"}, []string{"--quote-min-wait: must be between 0s and --quote-deadline (1.5s), got 2s"}},
		{[]string{"--quote-deadline", "300ms", "--quote-reduce-every", "400ms"}, []string{"--quote-reduce-every: must be between 0s and --quote-deadline (300ms), got 400ms"}},
		{[]string{"--quote-reduce-every", "-1ms"}, []string{"--quote-reduce-every: must be between 0s and --quote-deadline (1.5s), got -1ms"}},
		{[]string{"--quote-expected-results", "-1"}, []string{"--quote-expected-results: must be between 0 and 1000, got -1"}},
		{[]string{"--breaker-window", "0"}, []string{"--breaker-window: must be between 1 and 10000, got 0"}},
		{[]string{"--breaker-failure-ratio", "0"}, []string{"--breaker-failure-ratio: must be between 0.01 and 1, got 0"}},
		{[]string{"--breaker-failure-ratio", "1.5"}, []string{"--breaker-failure-ratio: must be between 0.01 and 1, got 1.5"}},
		{[]string{"--breaker-window", "10", "--breaker-min-calls", "11"}, []string{"--breaker-min-calls: must be between 1 and --breaker-window (10), got 11"}},
		{[]string{"--breaker-cooldown", "0s"}, []string{"--breaker-cooldown: must be between 100ms and 1h0m0s, got 0s"}},
		{[]string{"--provider-pool-size", "0"}, []string{"--provider-pool-size: must be between 1 and 4096, got 0"}},
		{[]string{"--provider-pool-size", "5000"}, []string{"--provider-pool-size: must be between 1 and 4096, got 5000"}},
		{[]string{"--provider-pool-sizes", `{"aggregator":0}`}, []string{"--provider-pool-sizes: aggregator: must be between 1 and 4096, got 0"}},
		{[]string{"--provider-pool-sizes", `{"lifi":8}`}, []string{`--provider-pool-sizes: unknown provider "lifi" (want aggregator, intents, pulseroute)`}},
		{[]string{"--provider-queue-per-worker", "0"}, []string{"--provider-queue-per-worker: must be between 1 and 1024, got 0"}},
		{[]string{"--store-memtable-size", "1000"}, []string{"--store-memtable-size: must be 0 (the default) or between 1048576 and 4294967295, got 1000"}},
		{[]string{"--store-cache-size", "-1"}, []string{"--store-cache-size: must be 0 (the default) or between 1048576 and 1099511627776, got -1"}},
		{[]string{"--warm-goroutines", "-1"}, []string{"--warm-goroutines: must be between 0 and 65536, got -1"}},
		{[]string{"--warm-throughput", "0"}, []string{"--warm-throughput: must be between 1 and 100000, got 0"}},
		{[]string{"--pprof-mutex-fraction", "-1"}, []string{"--pprof-mutex-fraction: must be between 0 and 1000000, got -1"}},
		{[]string{"--pprof-block-rate", "-5"}, []string{"--pprof-block-rate: must be between 0 and 1000000000, got -5"}},
		{[]string{"--ledger-sync-interval", "2s"}, []string{"--ledger-sync-interval: must be between 0s and 1s, got 2s"}},
		{[]string{"--ledger-max-batch", "0"}, []string{"--ledger-max-batch: must be between 1 and 65536, got 0"}},
		{[]string{"--ledger-busy-batch", "0"}, []string{"--ledger-busy-batch: must be between 1 and 65536, got 0"}},
		{[]string{"--ledger-max-unsynced", "0"}, []string{"--ledger-max-unsynced: must be between 1 and 16777216, got 0"}},
		{[]string{"--ticket-buffer-bytes", "1024"}, []string{"--ticket-buffer-bytes: must be between 65536 and 1073741824, got 1024"}},
		{[]string{"--ticket-grace", "0s"}, []string{"--ticket-grace: must be between 1s and 24h0m0s, got 0s"}},
		{[]string{"--quote-retention", "-1s"}, []string{"--quote-retention: must be between 0s and 720h0m0s, got -1s"}},
		{[]string{"--ticket-sweep-interval", "0s"}, []string{"--ticket-sweep-interval: must be between 1s and 1h0m0s, got 0s"}},
		{[]string{"--ticket-commit-interval", "0s"}, []string{"--ticket-commit-interval: must be between 1ms and 1s, got 0s"}},
		{[]string{"--idempotency-wait", "0s"}, []string{"--idempotency-wait: must be between 100ms and 5m0s, got 0s"}},
		{[]string{"--auth-cache-size", "0"}, []string{"--auth-cache-size: must be between 1 and 16777216, got 0"}},
		{[]string{"--sandbox-tools", `{"sbx-nope":{}}`}, []string{`--sandbox-tools: unknown sandbox tool "sbx-nope"`}},
		{[]string{"--sandbox-tools", `{"sbx-canal":{"failureRate":2}}`}, []string{"--sandbox-tools: sbx-canal: failureRate must be between 0 and 1, got 2"}},
		{[]string{"--sandbox-tools", `{"sbx-canal":{"latencyMs":-1}}`}, []string{"--sandbox-tools: sbx-canal: latencyMs must be between 0 and 600000, got -1"}},
		{[]string{"--aggregator-url", "not a url"}, []string{`--aggregator-url: must be an absolute http or https URL, got "not a url"`}},
		{[]string{"--intents-url", "/relative"}, []string{`--intents-url: must be an absolute http or https URL, got "/relative"`}},
		{[]string{"--relay-url", "api.relay.link"}, []string{`--relay-url: must be an absolute http or https URL, got "api.relay.link"`}},
		{[]string{"--relay-fee-recipient", "0x12"}, []string{`--relay-fee-recipient: must be an EVM address (0x and 40 hexadecimal digits), got "0x12"`}},
		{[]string{"--relay-fee-recipient", "0x0000000000000000000000000000000000000000"}, []string{"--relay-fee-recipient: must not be the zero address"}},
		{[]string{"--onramp-provider", "transak"}, []string{`--onramp-provider: must be moonpay or empty, got "transak"`}},
		{[]string{"--onramp-provider", "moonpay", "--moonpay-api-key", "pk", "--moonpay-secret-key", "sk", "--moonpay-webhook-key", "wk"},
			[]string{"--onramp-provider: moonpay serves --mode live only (sandbox mode's on-ramp is the hosted sandbox checkout), got --mode sandbox"}},
		{[]string{"--mode", "live", "--aggregator-url", "http://127.0.0.1:1", "--onramp-provider", "moonpay", "--moonpay-api-key", "pk"}, []string{
			"--moonpay-secret-key: is required with --onramp-provider moonpay",
			"--moonpay-webhook-key: is required with --onramp-provider moonpay",
		}},
		{[]string{"--mode", "live", "--aggregator-url", "http://127.0.0.1:1", "--onramp-provider", "moonpay", "--moonpay-secret-key", "sk", "--moonpay-webhook-key", "wk"},
			[]string{"--moonpay-api-key: is required with --onramp-provider moonpay"}},
		{[]string{"--mode", "live", "--aggregator-url", "http://127.0.0.1:1", "--onramp-provider", "moonpay", "--moonpay-api-key", "pk", "--moonpay-secret-key", "sk", "--moonpay-webhook-key", "wk",
			"--moonpay-api-url", "api.moonpay.com", "--moonpay-widget-url", "https://buy.moonpay.com?x=1"}, []string{
			`--moonpay-api-url: must be an absolute http or https URL, got "api.moonpay.com"`,
			`--moonpay-widget-url: must have no query or fragment (the signed query is appended), got "https://buy.moonpay.com?x=1"`,
		}},
		{[]string{"--moonpay-webhook-key", "wk"}, []string{"--moonpay-webhook-key: applies only with --onramp-provider moonpay"}},
		{[]string{"--upstream-timeout", "0s"}, []string{"--upstream-timeout: must be between 100ms and 5m0s, got 0s"}},
		{[]string{"--pulse-rpc", "369=localhost:8545"}, []string{`--pulse-rpc: chain 369: must be an absolute http or https or ws or wss URL, got "localhost:8545"`}},
		{[]string{"--pulse-sender-contract", "42161=0x12"}, []string{`--pulse-sender-contract: sender contract for chain 42161: "0x12" is not an EVM address`}},
		{[]string{"--pulse-inbound-receiver", "56=0x4eCe1e0000000000000000000000000000000A16"}, []string{`--pulse-inbound-receiver: inbound receiver for chain 56: chain has no collateral USDC warp route`}},
		{[]string{"--sandbox-bridge-scale", "-1"}, []string{"--sandbox-bridge-scale: must be between 0 and 1000, got -1"}},
		{[]string{"--sandbox-bridge-failure-rate", "1.5"}, []string{"--sandbox-bridge-failure-rate: must be between 0 and 1, got 1.5"}},
		{[]string{"--sandbox-bridge-failure-rate", "NaN"}, []string{"--sandbox-bridge-failure-rate: must be between 0 and 1, got NaN"}},
		{[]string{"--sandbox-onramp-step", "-1s"}, []string{"--sandbox-onramp-step: must be between 0s and 1h0m0s, got -1s"}},
		{[]string{"--sandbox-arbitrage-period", "2h"}, []string{"--sandbox-arbitrage-period: must be between -1h0m0s and 1h0m0s, got 2h0m0s"}},
		{[]string{"--smtp-url", "smtps://mail.example.com", "--smtp-from", "portal@example.com"}, []string{`--smtp-url: must be smtp://[user:password@]host[:port], got "smtps://mail.example.com"`}},
		{[]string{"--smtp-from", "portal@example.com"}, []string{"--smtp-from: needs --smtp-url"}},
		{[]string{"--public-url", "ftp://example.com"}, []string{`--public-url: must be an absolute http or https URL, got "ftp://example.com"`}},
		{[]string{"--evm-rpc", "1=ftp://node"}, []string{`--evm-rpc: chain 1: must be an absolute http or https or ws or wss URL, got "ftp://node"`}},
		{[]string{"--signer-url", "ftp://signer", "--signer-address", "0x1111111111111111111111111111111111111111"}, []string{`--signer-url: must be an absolute http, https, ws or wss URL or an IPC socket's path, got "ftp://signer"`}},
		{[]string{"--signer-url", "http://127.0.0.1:8550"}, []string{"--signer-address: is required with --signer-url"}},
		{[]string{"--signer-address", "0x1111111111111111111111111111111111111111"}, []string{"--signer-address: needs --signer-url"}},
		{[]string{"--signer-url", "http://127.0.0.1:8550", "--signer-address", "0x12"}, []string{`--signer-address: must be an EVM address (0x and 40 hexadecimal digits), got "0x12"`}},
		{[]string{"--webhook-pool-size", "0"}, []string{"--webhook-pool-size: must be between 1 and 1024, got 0"}},
		{[]string{"--webhook-retry-base", "0s"}, []string{"--webhook-retry-base: must be between 1ms and 1h0m0s, got 0s"}},
		{[]string{"--webhook-max-attempts", "0"}, []string{"--webhook-max-attempts: must be between 1 and 100, got 0"}},
		{[]string{"--webhook-timeout", "0s"}, []string{"--webhook-timeout: must be between 100ms and 5m0s, got 0s"}},
		{[]string{"--webhook-scan-interval", "0s"}, []string{"--webhook-scan-interval: must be between 10ms and 1h0m0s, got 0s"}},
		{[]string{"--webhook-scan-batch", "0"}, []string{"--webhook-scan-batch: must be between 1 and 1048576, got 0"}},
		{[]string{"--webhook-queue-per-webhook", "0"}, []string{"--webhook-queue-per-webhook: must be between 1 and 65536, got 0"}},
		{[]string{"--webhook-commit-batch", "0"}, []string{"--webhook-commit-batch: must be between 1 and 65536, got 0"}},
		{[]string{"--webhook-inflight-per-webhook", "65"}, []string{"--webhook-inflight-per-webhook: must be 0 (derived from --webhook-pool-size) or between 1 and --webhook-pool-size (64), got 65"}},
		{[]string{"--webhook-pool-size", "4", "--webhook-inflight-per-partner", "5"}, []string{"--webhook-inflight-per-partner: must be 0 (derived from --webhook-pool-size) or between 1 and --webhook-pool-size (4), got 5"}},
		{[]string{"--tracker-workers", "0"}, []string{"--tracker-workers: must be between 1 and 4096, got 0"}},
		{[]string{"--tracker-poll-timeout", "0s"}, []string{"--tracker-poll-timeout: must be between 100ms and 5m0s, got 0s"}},
		{[]string{"--cluster-name", "c1", "--cluster-bind", "127.0.0.1:7000", "--cluster-peers", "127.0.0.1:7000"}, []string{"--cluster-name: a cluster needs the shared store"}},
		{[]string{"--cluster-peers", "127.0.0.1:7000"}, []string{"--cluster-name: --cluster-bind, --cluster-peers and --cluster-etcd need --cluster-name"}},
		{[]string{"--cluster-name", "c1", "--store", "postgres://u@h/db", "--cluster-bind", "127.0.0.1:7000"}, []string{"--cluster-name: a cluster needs exactly one of --cluster-peers (automanaged) and --cluster-etcd"}},
		{[]string{"--cluster-name", "c1", "--store", "postgres://u@h/db", "--cluster-bind", "7000", "--cluster-etcd", "127.0.0.1:2379"}, []string{
			`--cluster-name: --cluster-bind must be host:port with a port from 1 to 65534, got "7000"`,
			`--cluster-bind: must be host:port, got "7000"`,
		}},
		{[]string{"--cluster-name", "c1", "--store", "postgres://u@h/db", "--cluster-bind", "127.0.0.1:7000", "--cluster-peers", "127.0.0.1:7000,nohost"}, []string{
			`--cluster-name: --cluster-peers: "nohost" is not host:port`,
			`--cluster-peers: must be host:port, got "nohost"`,
		}},
		{[]string{"--cluster-name", "c1", "--store", "postgres://u@h/db", "--cluster-bind", "127.0.0.1:7000", "--cluster-etcd", "ftp://etcd:2379"}, []string{
			`--cluster-etcd: must be an absolute http or https URL, got "ftp://etcd:2379"`,
		}},
		// Every refusal at once, one line each.
		{[]string{"--provider-pool-size", "0", "--ledger-max-batch", "0", "--mode", "x"}, []string{
			`--mode: must be sandbox or live, got "x"`,
			"--provider-pool-size: must be between 1 and 4096, got 0",
			"--ledger-max-batch: must be between 1 and 65536, got 0",
		}},
	}
	tested := map[string]bool{}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, tt.args...)
			if tt.args[0] == "--data" || tt.args[0] == "--addr" {
				args = append([]string{"serve"}, tt.args...)
			}
			var stderr bytes.Buffer
			if code := run(args, io.Discard, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(tt.want), stderr.String())
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], "swapgate serve: "+w) {
					t.Errorf("line %d: %q\nwant it to start with %q", i+1, lines[i], "swapgate serve: "+w)
				}
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data directory was created (%v): the service started before the refusal", err)
			}
		})
		for _, w := range tt.want {
			tested[strings.TrimPrefix(strings.SplitN(w, ":", 2)[0], "--")] = true
		}
	}
	for _, s := range serveSettings {
		if !tested[s.flag] {
			t.Errorf("no refusal of --%s is tested", s.flag)
		}
	}
}

// TestSettingsRefusedFromEnvironmentAndFile: a bad value from the
// environment or the config file is refused like the flag, naming it.
func TestSettingsRefusedFromEnvironmentAndFile(t *testing.T) {
	const want = "swapgate serve: --provider-pool-size: must be between 1 and 4096, got 0\n"
	dir := t.TempDir()
	file := filepath.Join(dir, "cfg.json")
	b, _ := json.Marshal(map[string]any{"provider-pool-size": 0, "data": filepath.Join(dir, "data")})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run([]string{"serve", "--config", file}, io.Discard, &stderr); code != 2 || stderr.String() != want {
		t.Fatalf("config file: exit %d, %q", code, stderr.String())
	}
	t.Setenv("SWAPGATE_PROVIDER_POOL_SIZE", "0")
	t.Setenv("SWAPGATE_DATA", filepath.Join(dir, "data"))
	stderr.Reset()
	if code := run([]string{"serve"}, io.Discard, &stderr); code != 2 || stderr.String() != want {
		t.Fatalf("environment: exit %d, %q", code, stderr.String())
	}
}

// TestEverySettingHasARow: each serve flag is validated by one row of
// serveSettings or listed in uncheckedFlags, no row names a flag that does
// not exist, and the defaults pass.
func TestEverySettingHasARow(t *testing.T) {
	cfg := app.DefaultConfig()
	fs := serveFlags(&cfg, new(string), new(string))
	rows := map[string]int{}
	for _, s := range serveSettings {
		rows[s.flag]++
		if fs.Lookup(s.flag) == nil {
			t.Errorf("row --%s names no flag", s.flag)
		}
		if rows[s.flag] > 1 {
			t.Errorf("--%s has %d rows", s.flag, rows[s.flag])
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		_, unchecked := uncheckedFlags[f.Name]
		if rows[f.Name] == 0 && !unchecked {
			t.Errorf("--%s has no validation row and is not listed as unchecked", f.Name)
		}
		if rows[f.Name] > 0 && unchecked {
			t.Errorf("--%s has a row and is listed as unchecked", f.Name)
		}
	})
	if err := validateServeConfig(&cfg); err != nil {
		t.Fatalf("the defaults are refused:\n%v", err)
	}
}

// TestReadmeListsEveryFlag: the README's table of serve options names
// every flag.
func TestReadmeListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start, end := strings.Index(s, "## Operating it"), strings.Index(s, "### Metrics")
	if start < 0 || end < start {
		t.Fatal("the README has no Operating it section before its Metrics")
	}
	table := s[start:end]
	cfg := app.DefaultConfig()
	serveFlags(&cfg, new(string), new(string)).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(table, "`--"+f.Name+"`") && !strings.Contains(table, "`--"+f.Name+" ") {
			t.Errorf("the README's serve options do not list --%s", f.Name)
		}
	})
}
