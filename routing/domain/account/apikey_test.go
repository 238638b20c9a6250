package account

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestGenerateShapeAndDigest(t *testing.T) {
	seen := make(map[string]bool)
	for i := 0; i < 200; i++ {
		key, digest, err := NewAPIKey()
		if err != nil {
			t.Fatalf("NewAPIKey: %v", err)
		}
		if !WellFormedKey(key) {
			t.Fatalf("NewAPIKey returned malformed key %q", key)
		}
		if digest != sha256.Sum256([]byte(key)) {
			t.Fatalf("digest does not match SHA-256 of the key")
		}
		if seen[key] {
			t.Fatalf("duplicate key after %d draws", i)
		}
		seen[key] = true
	}
}

func TestGenerateRejectsBiasedBytes(t *testing.T) {
	// Bytes 248..255 must be skipped; 0, 61, 62 and 247 map to '0', 'z', '0', 'z'.
	var src bytes.Buffer
	for src.Len() < 400 {
		src.Write([]byte{248, 255, 0, 250, 61, 62, 247, 252})
	}
	key, err := generate(&src)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	want := KeyPrefix + strings.Repeat("0z0z", KeyRandomLength/4)
	if key != want {
		t.Fatalf("generate = %q, want %q", key, want)
	}
}

func TestGenerateReadError(t *testing.T) {
	_, err := generate(bytes.NewReader([]byte{1, 2, 3}))
	if err == nil {
		t.Fatal("generate with a short reader succeeded")
	}
	if !strings.Contains(err.Error(), "read random bytes") {
		t.Fatalf("error lacks context: %v", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("error does not wrap the reader's: %v", err)
	}
}

func TestWellFormed(t *testing.T) {
	good := KeyPrefix + strings.Repeat("aZ09", 8)
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"good", good, true},
		{"empty", "", false},
		{"prefix only", KeyPrefix, false},
		{"test prefix", "pk_test_" + strings.Repeat("a", 32), false},
		{"one short", good[:len(good)-1], false},
		{"one long", good + "a", false},
		{"underscore in body", KeyPrefix + strings.Repeat("a", 31) + "_", false},
		{"non-ascii", KeyPrefix + strings.Repeat("a", 30) + "é", false},
		{"space", KeyPrefix + strings.Repeat("a", 31) + " ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WellFormedKey(tt.key); got != tt.want {
				t.Fatalf("WellFormedKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	a := KeyDigest("pk_live_a")
	b := KeyDigest("pk_live_b")
	if !DigestsEqual(a, a) {
		t.Fatal("DigestsEqual(a, a) = false")
	}
	if DigestsEqual(a, b) {
		t.Fatal("DigestsEqual(a, b) = true")
	}
	c := a
	c[31] ^= 1
	if DigestsEqual(a, c) {
		t.Fatal("DigestsEqual ignored a difference in the last byte")
	}
}
