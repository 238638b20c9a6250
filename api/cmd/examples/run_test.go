package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/swapgate/swapgate/internal/apitest"
)

// TestRunRewritesTheExamples runs the command against a copy of the
// document: the flows complete, every answer and delivery passes the
// document, and the rewritten copy loads (its examples validated against
// their schemas) with an example for each quote shape and each event kind
// the flows produce.
func TestRunRewritesTheExamples(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := run(ctx, path); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := apitest.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Components struct {
			Examples map[string]json.RawMessage `json:"examples"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"quote-shape-a", "quote-shape-a-intents", "quote-shape-b", "quote-shape-b-outbound", "quote-shape-c",
		"error-rate-limit", "event-swap-completed", "event-deposit-completed-intents", "event-deposit-completed-multi-step", "event-onramp-completed"} {
		if _, ok := d.Components.Examples[name]; !ok {
			t.Errorf("no example %s", name)
		}
	}
}
