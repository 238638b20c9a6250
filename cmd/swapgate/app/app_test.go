package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A start that fails part-way returns its error, releases what it had
// started (the data directory opens again at once) and does not panic.
func TestFailedStartCleansUp(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(*Config)
	}{
		{"bad trusted proxy", func(c *Config) { c.TrustedProxies = "not-a-cidr" }},
		{"bad listen address", func(c *Config) { c.Addr = "127.0.0.1:99999" }},
		{"data directory is a file", func(c *Config) { c.DataDir = file }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Addr = "127.0.0.1:0"
			cfg.DataDir = filepath.Join(dir, "data")
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			tc.mutate(&cfg)
			a, err := Start(context.Background(), cfg)
			if err == nil {
				_ = a.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			if a != nil {
				t.Fatalf("Start returned an App with its error %v", err)
			}
			good := DefaultConfig()
			good.Addr, good.DataDir, good.Logger = "127.0.0.1:0", filepath.Join(dir, "data"), cfg.Logger
			a, err = Start(context.Background(), good)
			if err != nil {
				t.Fatalf("start after a failed start: %v", err)
			}
			if err := a.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
