package portal

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testKey is a code key of the right length.
var testKey = bytes.Repeat([]byte{0x5a}, CodeKeyLen)

// fixedRand is a deterministic reader: bytes counting up from b, so that
// codes and ids are known in advance and two draws differ.
func fixedRand(b byte) *bytes.Reader {
	out := make([]byte, 4096)
	for i := range out {
		out[i] = b + byte(i)
	}
	return bytes.NewReader(out)
}

func TestNewCodeShape(t *testing.T) {
	for _, b := range []byte{0, 1, 0x7f, 0xff} {
		code, c, err := NewCode(fixedRand(b), testKey, " Ops@Example.COM ", "ptn_1", t0)
		if err != nil {
			t.Fatal(err)
		}
		if !WellFormedCode(code) {
			t.Errorf("code %q is not 6 digits", code)
		}
		if c.Email != "ops@example.com" || c.PartnerID != "ptn_1" || !c.ExpiresAt.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("state %+v", c)
		}
		if c.Digest != CodeDigest(testKey, "ops@example.com", code) {
			t.Error("digest is not the code's")
		}
		if strings.Contains(string(c.Digest[:]), code) {
			t.Error("the code is kept in clear")
		}
	}
}

func TestWellFormedCode(t *testing.T) {
	for in, want := range map[string]bool{"123456": true, "000000": true, "12345": false, "1234567": false,
		"12345a": false, "": false, " 12345": false, "１２３４５６": false} {
		if got := WellFormedCode(in); got != want {
			t.Errorf("WellFormedCode(%q) = %v", in, got)
		}
	}
}

func TestCodeCheck(t *testing.T) {
	type step struct {
		given string
		at    time.Duration
		want  error
	}
	cases := []struct {
		name  string
		steps []step
		left  int
	}{
		{"right at once", []step{{"RIGHT", time.Minute, nil}}, 5},
		{"right with spaces", []step{{" RIGHT ", time.Minute, nil}}, 5},
		{"single use", []step{{"RIGHT", 0, nil}, {"RIGHT", time.Second, ErrCodeUsed}}, 5},
		{"wrong then right", []step{{"000000", 0, ErrWrongCode}, {"RIGHT", time.Minute, nil}}, 4},
		{"expired at ten minutes", []step{{"RIGHT", 10 * time.Minute, ErrCodeExpired}}, 5},
		{"just before expiry", []step{{"RIGHT", 10*time.Minute - time.Nanosecond, nil}}, 5},
		{"fifth wrong try ends it", []step{{"1", 0, ErrWrongCode}, {"2", 0, ErrWrongCode}, {"3", 0, ErrWrongCode},
			{"4", 0, ErrWrongCode}, {"5", 0, ErrTooManyTries}, {"RIGHT", 0, ErrTooManyTries}}, 0},
		{"four wrong then right", []step{{"1", 0, ErrWrongCode}, {"2", 0, ErrWrongCode}, {"3", 0, ErrWrongCode},
			{"4", 0, ErrWrongCode}, {"RIGHT", 0, nil}}, 1},
		{"used beats expired", []step{{"RIGHT", 0, nil}, {"RIGHT", time.Hour, ErrCodeUsed}}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, c, err := NewCode(fixedRand(7), testKey, "a@b.co", "ptn_1", t0)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				given := strings.ReplaceAll(s.given, "RIGHT", code)
				if given == code && s.given != "RIGHT" && strings.TrimSpace(s.given) != "RIGHT" {
					t.Fatalf("step %d: the wrong code drawn is the right one", i)
				}
				if err := c.Check(testKey, given, t0.Add(s.at)); !errors.Is(err, s.want) {
					t.Fatalf("step %d: Check(%q) = %v, want %v", i, given, err, s.want)
				}
			}
			if got := c.TriesLeft(); got != tc.left {
				t.Errorf("tries left %d, want %d", got, tc.left)
			}
		})
	}
}

func TestCodeBoundToEmail(t *testing.T) {
	code, c, _ := NewCode(fixedRand(3), testKey, "a@b.co", "ptn_1", t0)
	c.Email = "other@b.co"
	if err := c.Check(testKey, code, t0); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a code sent to another address passed: %v", err)
	}
}

func TestSessionCheck(t *testing.T) {
	key := [32]byte{1}
	rotated := [32]byte{2}
	id, s, err := NewSession(fixedRand(9), "ptn_1", key, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !WellFormedSessionID(id) || s.IDDigest != SessionDigest(id) || s.IDDigest == id || s.CSRF == "" || s.CSRF == id {
		t.Fatalf("session %q %+v", id, s)
	}
	cases := []struct {
		name string
		p    PartnerState
		at   time.Duration
		ok   bool
	}{
		{"fresh", PartnerState{KeyDigest: key}, 0, true},
		{"idle 11h59", PartnerState{KeyDigest: key}, 12*time.Hour - time.Minute, true},
		{"idle 12h", PartnerState{KeyDigest: key}, 12 * time.Hour, false},
		{"key rotated", PartnerState{KeyDigest: rotated}, time.Minute, false},
		{"partner disabled", PartnerState{KeyDigest: key, Disabled: true}, time.Minute, false},
	}
	for _, tc := range cases {
		err := s.Check(tc.p, t0.Add(tc.at))
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrSessionEnded)) {
			t.Errorf("%s: Check = %v", tc.name, err)
		}
	}
}

func TestSessionTouch(t *testing.T) {
	_, s, _ := NewSession(fixedRand(9), "ptn_1", [32]byte{1}, t0)
	for at, want := range map[time.Duration]bool{0: false, 59 * time.Second: false, time.Minute: true, time.Hour: true} {
		if got := s.NeedsTouch(t0.Add(at)); got != want {
			t.Errorf("NeedsTouch(+%s) = %v", at, got)
		}
	}
}

func TestWellFormedSessionID(t *testing.T) {
	id, _, _ := NewSession(fixedRand(1), "p", [32]byte{}, t0)
	for in, want := range map[string]bool{id: true, id[:42]: false, id + "A": false, strings.Repeat("!", 43): false, "": false} {
		if got := WellFormedSessionID(in); got != want {
			t.Errorf("WellFormedSessionID(%q) = %v", in, got)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{" A@B.Co ": "a@b.co", "x@y.z": "x@y.z"} {
		if got := NormalizeEmail(in); got != want {
			t.Errorf("NormalizeEmail(%q) = %q", in, got)
		}
	}
}

// A code's digest is keyed: it is neither the SHA-256 of the code nor of
// the address and code, it differs under another key, and neither a short
// key nor another key checks the code.
func TestCodeDigestKeyed(t *testing.T) {
	code, c, err := NewCode(fixedRand(9), testKey, "a@b.co", "ptn_1", t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range [][32]byte{sha256.Sum256([]byte(code)), sha256.Sum256([]byte("a@b.co\x00" + code))} {
		if c.Digest == plain {
			t.Fatal("the stored digest is an unkeyed SHA-256 of the code")
		}
	}
	other := bytes.Repeat([]byte{0xa5}, CodeKeyLen)
	if CodeDigest(other, "a@b.co", code) == c.Digest {
		t.Fatal("the digest does not depend on the key")
	}
	if err := c.Check(other, code, t0); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("another key's check: %v", err)
	}
	if _, _, err := NewCode(fixedRand(9), testKey[:16], "a@b.co", "ptn_1", t0); !errors.Is(err, ErrNoCodeKey) {
		t.Fatalf("a short key: %v", err)
	}
	if err := c.Check(nil, code, t0); !errors.Is(err, ErrNoCodeKey) {
		t.Fatalf("no key: %v", err)
	}
	if err := c.Check(testKey, code, t0); err != nil {
		t.Fatalf("the right key: %v", err)
	}
}
