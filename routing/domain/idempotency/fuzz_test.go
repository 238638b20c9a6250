package idempotency

import (
	"bytes"
	"testing"
)

// The fuzz targets of the Idempotency-Key rules (see scripts/fuzz-targets).

// FuzzValidKey: a key is accepted exactly when it is 1 to MaxKeyLen bytes,
// each visible ASCII; a refusal is one of the three documented errors.
func FuzzValidKey(f *testing.F) {
	for _, k := range []string{"5f0c7a52-9e4b-4d6e-9d0f-3c1b2a7e8f61", "", "a b", "clé", "a\x00", "\x7f", string(bytes.Repeat([]byte{'k'}, MaxKeyLen+1))} {
		f.Add([]byte(k))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		err := ValidKey(key)
		want := len(key) >= 1 && len(key) <= MaxKeyLen
		for _, c := range key {
			if c < 0x21 || c > 0x7e {
				want = false
			}
		}
		if (err == nil) != want {
			t.Fatalf("ValidKey(%q) = %v, want accepted %v", key, err, want)
		}
		if err != nil && err != ErrKeyEmpty && err != ErrKeyTooLong && err != ErrKeyChars {
			t.Fatalf("ValidKey(%q) = %v, not one of the documented errors", key, err)
		}
	})
}

// FuzzFingerprintOf: two requests share a fingerprint exactly when their
// method, path and body are equal; in particular no bytes moved from one
// part to the next (a path ending where a body begins) make the same
// fingerprint.
func FuzzFingerprintOf(f *testing.F) {
	f.Add([]byte("POST"), []byte("/v1/execute"), []byte(`{}`), []byte("POST"), []byte("/v1/execute"), []byte(`{}`))
	f.Add([]byte("POST"), []byte("/a"), []byte("b"), []byte("POST"), []byte("/ab"), []byte(""))
	f.Add([]byte("PO"), []byte("ST/a"), []byte(""), []byte("POST"), []byte("/a"), []byte(""))
	f.Fuzz(func(t *testing.T, m1, p1, b1, m2, p2, b2 []byte) {
		same := bytes.Equal(m1, m2) && bytes.Equal(p1, p2) && bytes.Equal(b1, b2)
		if (FingerprintOf(m1, p1, b1) == FingerprintOf(m2, p2, b2)) != same {
			t.Fatalf("fingerprints of (%q %q %q) and (%q %q %q): equal %v", m1, p1, b1, m2, p2, b2, !same)
		}
	})
}
