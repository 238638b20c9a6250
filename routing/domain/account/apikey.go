// Partner API keys. A key is "pk_live_" followed by 32 base62 characters
// drawn from crypto/rand, about 190 bits of entropy. The service keeps only the SHA-256 digest of a
// key: the plain key is shown to the operator once, at creation or rotation,
// and never stored or logged. Because keys carry that much entropy, a plain
// unsalted SHA-256 is enough; a slow password hash would only cost latency on
// every authenticated request without adding security.

package account

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"strings"
)

// KeyPrefix starts every live partner key, so that leaked keys are easy to
// recognise by secret scanners.
const KeyPrefix = "pk_live_"

// KeyRandomLength is the number of base62 characters after KeyPrefix.
const KeyRandomLength = 32

// KeyLength is the total length of a well-formed key.
const KeyLength = len(KeyPrefix) + KeyRandomLength

// alphabet holds the 62 base62 symbols in ASCII order.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// acceptBelow is the largest multiple of len(alphabet) that fits in a byte.
// Random bytes at or above it are rejected so that byte%62 is uniform.
const acceptBelow = 256 - 256%len(alphabet)

// NewAPIKey returns a fresh key and its digest. The key must be handed to the
// partner and then forgotten; only the digest may be persisted.
func NewAPIKey() (key string, digest [32]byte, err error) {
	key, err = generate(rand.Reader)
	if err != nil {
		return "", [32]byte{}, err
	}
	return key, KeyDigest(key), nil
}

// generate draws KeyRandomLength symbols from r by rejection sampling, which
// keeps every symbol equally likely (a plain modulo would favour the first
// 8 symbols).
func generate(r io.Reader) (string, error) {
	var b strings.Builder
	b.Grow(KeyLength)
	b.WriteString(KeyPrefix)
	buf := make([]byte, KeyRandomLength+KeyRandomLength/4)
	need := KeyRandomLength
	for need > 0 {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("apikey: read random bytes: %w", err)
		}
		for _, c := range buf {
			if int(c) >= acceptBelow {
				continue
			}
			b.WriteByte(alphabet[int(c)%len(alphabet)])
			need--
			if need == 0 {
				break
			}
		}
	}
	return b.String(), nil
}

// KeyDigest returns the SHA-256 digest of key, the only form in which a key is
// stored or used as a lookup index.
func KeyDigest(key string) [32]byte {
	return sha256.Sum256([]byte(key))
}

// WellFormedKey reports whether key has the shape of a partner key. It lets the
// edge reject garbage before hashing and looking it up; it says nothing about
// whether the key is registered.
func WellFormedKey(key string) bool {
	if len(key) != KeyLength || !strings.HasPrefix(key, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(key); i++ {
		if !isBase62(key[i]) {
			return false
		}
	}
	return true
}

func isBase62(c byte) bool {
	return ('0' <= c && c <= '9') || ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z')
}

// DigestsEqual compares two digests in constant time, so that the time taken does not
// reveal how many leading bytes of a guessed key's digest matched.
func DigestsEqual(a, b [32]byte) bool {
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
