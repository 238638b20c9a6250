package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDocumentRoundTrips checks that reading and writing the document
// changes nothing, so that a run of the command changes the examples and
// nothing else.
func TestDocumentRoundTrips(t *testing.T) {
	b, err := os.ReadFile("../../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseNode(b)
	if err != nil {
		t.Fatal(err)
	}
	if out := n.encode(); !bytes.Equal(out, b) {
		i := 0
		for i < len(out) && i < len(b) && out[i] == b[i] {
			i++
		}
		t.Fatalf("the document changes at byte %d: %q became %q", i, b[i:min(i+80, len(b))], out[i:min(i+80, len(out))])
	}
}
