package uuid

import (
	"regexp"
	"testing"
)

var v4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewV4(t *testing.T) {
	seen := map[[36]byte]bool{}
	for range 1000 {
		var id [36]byte
		NewV4(&id)
		if !v4.Match(id[:]) {
			t.Fatalf("%s is not a version-4 UUID", id[:])
		}
		if seen[id] {
			t.Fatalf("%s twice", id[:])
		}
		seen[id] = true
	}
}
