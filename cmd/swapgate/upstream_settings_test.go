package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestUpstreamSettingsFromFlagEnvironmentAndFile: an upstream's declared
// settings are serve options like the others, from a flag, a SWAPGATE_
// variable or a config-file key, the flag first, then the environment,
// then the file; Relay's reach the quote configuration as LI.FI's do.
func TestUpstreamSettingsFromFlagEnvironmentAndFile(t *testing.T) {
	const recipient = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4"
	file := filepath.Join(t.TempDir(), "cfg.json")
	b, _ := json.Marshal(map[string]any{"relay-url": "http://file.example", "relay-fee-recipient": recipient, "aggregator-url": "http://lifi.file"})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		wantRelay     string
		wantKey       string
		wantRecipient string
		wantLIFI      string
	}{
		{"flags", []string{"--relay-url", "http://flag.example", "--relay-key", "k1", "--aggregator-url", "http://lifi.flag"}, nil,
			"http://flag.example", "k1", "", "http://lifi.flag"},
		{"environment", nil, map[string]string{"SWAPGATE_RELAY_URL": "http://env.example", "SWAPGATE_RELAY_KEY": "k2", "SWAPGATE_RELAY_FEE_RECIPIENT": recipient},
			"http://env.example", "k2", recipient, ""},
		{"file", []string{"--config", file}, nil, "http://file.example", "", recipient, "http://lifi.file"},
		{"flag over environment over file", []string{"--config", file, "--relay-url", "http://flag.example"},
			map[string]string{"SWAPGATE_RELAY_URL": "http://env.example", "SWAPGATE_AGGREGATOR_URL": "http://lifi.env"},
			"http://flag.example", "", recipient, "http://lifi.env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := loadServeConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			q := cfg.Quote
			if q.Upstream["relay-url"] != tt.wantRelay || q.Upstream["relay-key"] != tt.wantKey ||
				q.Upstream["relay-fee-recipient"] != tt.wantRecipient || q.AggregatorURL != tt.wantLIFI {
				t.Fatalf("relay %v, aggregator %q", q.Upstream, q.AggregatorURL)
			}
			if err := validateServeConfig(&cfg); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if err := app.CheckLiveUpstreams(&app.Config{Mode: app.ModeLive, Quote: q}); err != nil {
				t.Fatalf("live mode with Relay refused: %v", err)
			}
		})
	}
}
