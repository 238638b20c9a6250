package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// TestServeShutsDownOnSIGTERM runs the real serve command, waits until it
// serves, sends the process SIGTERM, and checks that it drains, exits 0 and
// releases the store (a second open succeeds).
func TestServeShutsDownOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}, &bytes.Buffer{}, &stderr)
	}()
	// The admin listener file appears once the service is up.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "admin.json")); err == nil {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(dir, "admin.json")); !os.IsNotExist(err) {
		t.Fatalf("admin.json left behind: %v", err)
	}
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatalf("store still locked after shutdown: %v", err)
	}
	_ = st.Close()
}

func TestServeConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cfg.json")
	b, _ := json.Marshal(map[string]any{"addr": "127.0.0.1:1111", "anon-read-per-min": 7, "quote-deadline": "900ms",
		"sandbox-tools": map[string]any{"sbx-canal": map[string]any{"latencyMs": 40}}})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SWAPGATE_ANON_READ_PER_MIN": "9", "SWAPGATE_DATA": "/srv/swapgate-env"}
	cfg, _, err := loadServeConfig([]string{"--config", file, "--data", "/srv/swapgate-flag"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:1111" || cfg.AnonReadPerMin != 9 || cfg.DataDir != "/srv/swapgate-flag" ||
		cfg.Quote.Deadline != 900*time.Millisecond || cfg.Quote.SandboxTools["sbx-canal"].LatencyMs != 40 {
		t.Fatalf("config %+v", cfg)
	}
	if _, _, err := loadServeConfig([]string{"--anon-read-per-min", "x"}, func(string) string { return "" }, &bytes.Buffer{}); err == nil {
		t.Fatal("a bad flag value was accepted")
	}
}
