package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Delivery headers. Every attempt carries the signature of its raw body, the
// event name, the delivery ID (the same on every retry, so receivers can
// deduplicate) and the time of the attempt in Unix seconds.
const (
	HeaderSignature = "X-Service-Signature"
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderTimestamp = "X-Service-Timestamp"
)

// MinSecretLen and MaxSecretLen bound a signing secret at registration, in
// bytes.
const (
	MinSecretLen = 16
	MaxSecretLen = 256
)

// CheckSecret validates a signing secret at registration: MinSecretLen to
// MaxSecretLen bytes of valid UTF-8 without control characters, so that
// the key the partner holds is byte for byte the key deliveries are signed
// with, and fits a header or a config file as typed.
func CheckSecret(secret string) error {
	switch {
	case len(secret) < MinSecretLen:
		return fmt.Errorf("secret must be at least %d characters", MinSecretLen)
	case len(secret) > MaxSecretLen:
		return fmt.Errorf("secret must be at most %d bytes", MaxSecretLen)
	case !utf8.ValidString(secret) || strings.ContainsFunc(secret, unicode.IsControl):
		return errors.New("secret must be printable text (no control characters)")
	}
	return nil
}

// Sign returns the hex-encoded HMAC-SHA256 of body keyed with secret, the
// value of X-Service-Signature.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is the signature of body under secret. It
// compares in constant time, as the specification asks of receivers; a
// malformed hex string is simply a mismatch.
func Verify(secret, body []byte, sig string) bool {
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
