// Package portal holds the rules of the partner portal's sign-in, plain Go:
// the one-time login code mailed to a partner's address and the browser
// session it opens. The edge applies them; the store keeps their values.
//
// A login code is 6 decimal digits, valid for 10 minutes, good for one
// successful sign-in, and refused for good after 5 wrong tries (the partner
// then asks for a new code, which replaces the old one). Only the code's
// HMAC-SHA256 under the server's code key (CodeKeyLen bytes, the same on
// every node of a cluster), bound to the address it was sent to, is kept:
// a million codes are hashed in a moment, so an unkeyed digest would give
// whoever reads the store the live code at once, and without the key the
// digest tells nothing. (Codes stored by a build that kept an unkeyed
// digest no longer match after an upgrade: they were valid for 10 minutes
// anyway, and the partner asks for a new one.)
//
// A session is a random 256-bit id that lives in the browser's cookie; the
// store keeps only its SHA-256 digest, so that a copy of the store opens no
// session. A session ends after 12 hours without a request (idle expiry),
// when its partner is disabled, and when the partner's API key changes:
// each session remembers the fingerprint of the key that was current when
// it was opened, so a rotation, from the portal or by an operator, signs
// the partner out everywhere at once without anyone having to find the
// sessions first.
package portal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
)

// The rules of login codes and sessions.
const (
	CodeDigits   = 6
	CodeTTL      = 10 * time.Minute
	CodeMaxTries = 5
	SessionIdle  = 12 * time.Hour
	// TouchEvery is how stale a session's last-seen time may grow before a
	// request writes it again: the idle expiry is 12 h, so a minute's
	// imprecision costs nothing, and a page's requests do not each write.
	TouchEvery = time.Minute
)

// Refusals of a code check. Each is final for the code but ErrWrongCode,
// which leaves the tries that are left.
var (
	ErrWrongCode    = errors.New("portal: wrong code")
	ErrCodeExpired  = errors.New("portal: code expired")
	ErrCodeUsed     = errors.New("portal: code already used")
	ErrTooManyTries = errors.New("portal: too many wrong tries")
	// ErrSessionEnded is a session that no longer signs anyone in: idle too
	// long, its partner disabled, or its partner's key changed.
	ErrSessionEnded = errors.New("portal: session ended")
)

// NormalizeEmail is the form an address is kept and compared in: trimmed
// and lower-cased. (The local part of an address may in theory be case
// sensitive; no mail provider partners use treats it so, and a sign-in
// that failed on a capital letter would only confuse.)
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// LoginCode is the stored state of the latest code sent to an address.
type LoginCode struct {
	Email     string
	PartnerID string
	// Digest is CodeDigest(key, Email, code): the code itself is never
	// kept.
	Digest    [32]byte
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Tries counts wrong codes given; Used is set by the successful check.
	Tries int
	Used  bool
}

// CodeKeyLen is the length of the key that code digests are keyed with.
const CodeKeyLen = 32

// ErrNoCodeKey is a code drawn or checked without a key of CodeKeyLen
// bytes.
var ErrNoCodeKey = errors.New("portal: the login code key is missing or short")

// CodeDigest binds a code to the address it was sent to, keyed with the
// server's code key (HMAC-SHA256).
func CodeDigest(key []byte, email, code string) [32]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(NormalizeEmail(email) + "\x00" + code))
	var d [32]byte
	m.Sum(d[:0])
	return d
}

// NewCode draws a code from rnd (crypto/rand.Reader in production) for the
// partner at email and returns it with the state to store, its digest
// keyed with key.
func NewCode(rnd io.Reader, key []byte, email, partnerID string, now time.Time) (string, *LoginCode, error) {
	if len(key) < CodeKeyLen {
		return "", nil, ErrNoCodeKey
	}
	n, err := rand.Int(rnd, big.NewInt(1_000_000))
	if err != nil {
		return "", nil, fmt.Errorf("portal: draw login code: %w", err)
	}
	code := fmt.Sprintf("%06d", n.Int64())
	email = NormalizeEmail(email)
	return code, &LoginCode{Email: email, PartnerID: partnerID, Digest: CodeDigest(key, email, code),
		IssuedAt: now.UTC(), ExpiresAt: now.UTC().Add(CodeTTL)}, nil
}

// WellFormedCode reports whether s is 6 ASCII digits.
func WellFormedCode(s string) bool {
	if len(s) != CodeDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Check applies a code given at now to c, changing c: a wrong code counts a
// try, the right one marks c used. key is the code key NewCode was given. A code already used, expired or out of
// tries is refused without looking at what was given, so nothing can be
// learnt from it. The caller stores c again whatever the answer.
func (c *LoginCode) Check(key []byte, given string, now time.Time) error {
	switch {
	case len(key) < CodeKeyLen:
		return ErrNoCodeKey
	case c.Used:
		return ErrCodeUsed
	case c.Tries >= CodeMaxTries:
		return ErrTooManyTries
	case !now.Before(c.ExpiresAt):
		return ErrCodeExpired
	}
	d := CodeDigest(key, c.Email, strings.TrimSpace(given))
	if subtle.ConstantTimeCompare(d[:], c.Digest[:]) != 1 {
		c.Tries++
		if c.Tries >= CodeMaxTries {
			return ErrTooManyTries
		}
		return ErrWrongCode
	}
	c.Used = true
	return nil
}

// TriesLeft is how many wrong codes may still be given.
func (c *LoginCode) TriesLeft() int { return max(0, CodeMaxTries-c.Tries) }

// Session is the stored state of one signed-in browser.
type Session struct {
	// IDDigest is SessionDigest of the cookie's id.
	IDDigest  string
	PartnerID string
	// CSRF is the token every form of this session carries.
	CSRF string
	// KeyFingerprint is KeyFingerprint of the partner's key digest when the
	// session was opened (or when the session itself rotated the key).
	KeyFingerprint string
	CreatedAt      time.Time
	LastSeen       time.Time
}

// NewSession draws a session id and a CSRF token from rnd and returns the id
// (for the cookie) with the state to store.
func NewSession(rnd io.Reader, partnerID string, keyDigest [32]byte, now time.Time) (string, *Session, error) {
	id, err := token(rnd)
	if err != nil {
		return "", nil, err
	}
	csrf, err := token(rnd)
	if err != nil {
		return "", nil, err
	}
	now = now.UTC()
	return id, &Session{IDDigest: SessionDigest(id), PartnerID: partnerID, CSRF: csrf,
		KeyFingerprint: KeyFingerprint(keyDigest), CreatedAt: now, LastSeen: now}, nil
}

// token is 32 random bytes, base64url without padding (43 characters).
func token(rnd io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("portal: draw random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// SessionDigest is the stored name of a session id. An id that is not of
// the shape NewSession draws has none: WellFormedSessionID says so first.
func SessionDigest(id string) string {
	d := sha256.Sum256([]byte(id))
	return hex.EncodeToString(d[:])
}

// WellFormedSessionID reports whether id has the shape NewSession draws.
func WellFormedSessionID(id string) bool {
	if len(id) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// KeyFingerprint names a key digest without repeating it: the first 16
// bytes of its SHA-256, in hex.
func KeyFingerprint(keyDigest [32]byte) string {
	d := sha256.Sum256(keyDigest[:])
	return hex.EncodeToString(d[:16])
}

// PartnerState is what a session's check needs of its partner.
type PartnerState struct {
	KeyDigest [32]byte
	Disabled  bool
}

// Check reports whether the session still signs its partner in at now:
// ErrSessionEnded when it was idle for SessionIdle or longer, the partner is
// disabled or its key changed since the session was opened.
func (s *Session) Check(p PartnerState, now time.Time) error {
	switch {
	case p.Disabled:
		return fmt.Errorf("%w: partner disabled", ErrSessionEnded)
	case !now.Before(s.LastSeen.Add(SessionIdle)):
		return fmt.Errorf("%w: idle since %s", ErrSessionEnded, s.LastSeen.UTC().Format(time.RFC3339))
	case subtle.ConstantTimeCompare([]byte(s.KeyFingerprint), []byte(KeyFingerprint(p.KeyDigest))) != 1:
		return fmt.Errorf("%w: API key rotated", ErrSessionEnded)
	}
	return nil
}

// NeedsTouch reports whether a request at now should write the session's
// last-seen time again.
func (s *Session) NeedsTouch(now time.Time) bool { return now.Sub(s.LastSeen) >= TouchEvery }
