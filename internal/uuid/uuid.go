// Package uuid writes random version-4 UUIDs in their text form without
// allocating: the edge's request ids, and the bench's bare server, which
// must answer with the same bytes as the edge to be a fair limit.
package uuid

import (
	"crypto/rand"
	"encoding/hex"
)

// NewV4 writes a random version-4 UUID (RFC 9562) in its 36-character
// text form into dst.
func NewV4(dst *[36]byte) {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails on supported platforms.
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	hex.Encode(dst[0:8], u[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], u[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], u[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], u[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:], u[10:])
}
