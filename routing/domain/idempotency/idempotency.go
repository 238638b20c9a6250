// Package idempotency holds the rules of the Idempotency-Key header, which
// every POST that creates something accepts: a client that is not sure its
// request arrived sends it again with the same key and gets the first
// answer instead of a second action.
//
// The rules:
//   - A key is 1 to 255 visible ASCII characters (0x21 to 0x7E): enough for
//     a UUID or any token a client generates, and nothing a proxy might fold,
//     trim or re-encode on the way. Anything else is refused (see ValidKey).
//   - A key belongs to whoever sent it: to the partner (by partner ID, so a
//     rotated API key keeps its keys) for calls with a partner key, to the
//     client IP address for anonymous calls (see PartnerScope, ClientScope).
//     Two scopes never see each other's keys.
//   - A request is identified by its fingerprint: the SHA-256 of its method,
//     path (with its query string, if any) and raw body, the body compared
//     byte for byte (see FingerprintOf).
//   - An answer is remembered for 24 hours from the request that produced it
//     (Lifetime); after that the key is free again.
//   - Only success answers (2xx) are remembered (see Remembered): a refusal
//     or a failure created nothing, so the same key may be used again, with
//     the same body or a corrected one.
//   - The same key with the same fingerprint replays the remembered answer;
//     with another fingerprint it is refused; while a request with the key
//     is being served, another one waits for it (see Decide).
//
// It is plain Go: the store keeps Records, and the edge applies
// Decide around the handlers that declare themselves idempotent.
package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 255

// Lifetime is how long an answer is remembered.
const Lifetime = 24 * time.Hour

// Errors of ValidKey; their text completes "Idempotency-Key ...".
var (
	ErrKeyEmpty   = errors.New("must not be empty")
	ErrKeyTooLong = fmt.Errorf("must be at most %d characters", MaxKeyLen)
	ErrKeyChars   = errors.New("must be visible ASCII characters only (no spaces or control characters)")
)

// ValidKey checks a key against the rules: 1 to MaxKeyLen characters, each
// visible ASCII (0x21 to 0x7E).
func ValidKey(key []byte) error {
	switch {
	case len(key) == 0:
		return ErrKeyEmpty
	case len(key) > MaxKeyLen:
		return ErrKeyTooLong
	}
	for _, c := range key {
		if c < 0x21 || c > 0x7e {
			return ErrKeyChars
		}
	}
	return nil
}

// Key names one remembered answer: the scope it belongs to and the key the
// client chose. A scope never contains '/', so stores may use it as a
// delimited component; the client's key may contain any visible character.
type Key struct {
	Scope string
	Value string
}

// PartnerScope is the scope of calls made with a partner's API key.
func PartnerScope(partnerID string) string { return "partner." + partnerID }

// ClientScope is the scope of anonymous calls: the client's IP address
// (the one anonymous rate limits count by), without a zone, IPv4-mapped
// addresses as IPv4.
func ClientScope(ip netip.Addr) string { return "ip." + ip.Unmap().WithZone("").String() }

// Fingerprint identifies a request's content.
type Fingerprint [sha256.Size]byte

// FingerprintOf is the SHA-256 of method, path (the request target: the
// path and, if there is one, '?' and the query string) and body, each but
// the last preceded by its length so that no two different requests run
// together into the same input.
func FingerprintOf(method, path, body []byte) Fingerprint {
	h := sha256.New()
	var n [8]byte
	for _, part := range [][]byte{method, path} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	h.Write(body)
	var fp Fingerprint
	h.Sum(fp[:0])
	return fp
}

// Record is a remembered answer: the fingerprint of the request that
// produced it, its HTTP status and its body, byte for byte, and that
// request's id, which a replay carries as its own.
type Record struct {
	Fingerprint Fingerprint
	Status      int
	Body        []byte
	RequestID   string
	CreatedAt   time.Time
	// ExpiresAt is CreatedAt plus Lifetime; from then on the record is as
	// good as absent.
	ExpiresAt time.Time
}

// NewRecord remembers an answer given at now. The body is copied.
func NewRecord(fp Fingerprint, status int, body []byte, now time.Time) *Record {
	return &Record{Fingerprint: fp, Status: status, Body: bytes.Clone(body), CreatedAt: now, ExpiresAt: now.Add(Lifetime)}
}

// Live reports whether the record still counts at now.
func (r *Record) Live(now time.Time) bool { return r != nil && now.Before(r.ExpiresAt) }

// Remembered reports whether an answer with this status is remembered:
// success answers only. An error answer means nothing was created, so
// there is nothing a retry could repeat.
func Remembered(status int) bool { return status >= 200 && status <= 299 }

// Decision is what to do with a request that carries a key.
type Decision uint8

const (
	// Act: no live answer and no request in flight; serve the request and
	// remember its answer.
	Act Decision = iota
	// Replay: a live answer to the same request exists; send it again
	// without acting.
	Replay
	// Conflict: a live answer to a different request (another method, path
	// or body) holds the key; refuse.
	Conflict
	// InFlight: no live answer yet, but a request with the key is being
	// served; wait for it to finish, then decide again.
	InFlight
)

func (d Decision) String() string {
	switch d {
	case Act:
		return "act"
	case Replay:
		return "replay"
	case Conflict:
		return "conflict"
	case InFlight:
		return "in-flight"
	}
	return fmt.Sprintf("Decision(%d)", d)
}

// Decide applies the rules to a request with fingerprint fp at now, given
// the answer stored under its key (nil for none) and whether another
// request with the key is being served. A live answer decides alone; an
// expired one is as good as absent. A request that finds another in flight
// waits rather than being refused whatever its body, so that the outcome is
// the one the two would have had one after the other: if the first one's
// answer is remembered, the second replays it or conflicts with it; if the
// first one failed, the second acts.
func Decide(stored *Record, inFlight bool, fp Fingerprint, now time.Time) Decision {
	switch {
	case stored.Live(now) && stored.Fingerprint == fp:
		return Replay
	case stored.Live(now):
		return Conflict
	case inFlight:
		return InFlight
	}
	return Act
}
