package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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

// MinSecretLen is the shortest signing secret accepted at registration.
const MinSecretLen = 16

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
