package idempotency

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestValidKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want error
	}{
		{"uuid", "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", nil},
		{"one character", "x", nil},
		{"every visible character", "!\"#$%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~", nil},
		{"longest", strings.Repeat("k", MaxKeyLen), nil},
		{"empty", "", ErrKeyEmpty},
		{"too long", strings.Repeat("k", MaxKeyLen+1), ErrKeyTooLong},
		{"space", "a b", ErrKeyChars},
		{"tab", "a\tb", ErrKeyChars},
		{"control", "a\x00", ErrKeyChars},
		{"DEL", "a\x7f", ErrKeyChars},
		{"non-ASCII", "clé", ErrKeyChars},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidKey([]byte(tt.key)); !errors.Is(got, tt.want) {
				t.Fatalf("ValidKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{PartnerScope("ptn_abc"), "partner.ptn_abc"},
		{ClientScope(netip.MustParseAddr("203.0.113.7")), "ip.203.0.113.7"},
		{ClientScope(netip.MustParseAddr("::ffff:203.0.113.7")), "ip.203.0.113.7"},
		{ClientScope(netip.MustParseAddr("fe80::1%eth0")), "ip.fe80::1"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("scope %q, want %q", tt.got, tt.want)
		}
		if strings.Contains(tt.got, "/") {
			t.Errorf("scope %q contains '/'", tt.got)
		}
	}
}

func TestFingerprintOf(t *testing.T) {
	base := FingerprintOf([]byte("POST"), []byte("/v1/partner/webhooks"), []byte(`{"a":1}`))
	if base != FingerprintOf([]byte("POST"), []byte("/v1/partner/webhooks"), []byte(`{"a":1}`)) {
		t.Fatal("the same request has two fingerprints")
	}
	others := []struct {
		name               string
		method, path, body string
	}{
		{"other body", "POST", "/v1/partner/webhooks", `{"a":2}`},
		{"other whitespace", "POST", "/v1/partner/webhooks", `{"a": 1}`},
		{"other path", "POST", "/v1/partner/webhooks/wh_1/test", `{"a":1}`},
		{"other method", "PUT", "/v1/partner/webhooks", `{"a":1}`},
		// Without length prefixes these two would hash the same bytes.
		{"path and body run together", "POST", "/v1/partner/webhooks{", `"a":1}`},
	}
	for _, o := range others {
		if FingerprintOf([]byte(o.method), []byte(o.path), []byte(o.body)) == base {
			t.Errorf("%s: same fingerprint as the base request", o.name)
		}
	}
}

func TestNewRecord(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"data":{}}`)
	r := NewRecord(Fingerprint{1}, 201, body, now)
	body[0] = 'X'
	if !bytes.Equal(r.Body, []byte(`{"data":{}}`)) {
		t.Fatalf("the record shares the caller's buffer: %s", r.Body)
	}
	if !r.ExpiresAt.Equal(now.Add(24*time.Hour)) || !r.CreatedAt.Equal(now) || r.Status != 201 {
		t.Fatalf("record %+v", r)
	}
	for _, tt := range []struct {
		at   time.Time
		live bool
	}{
		{now, true},
		{now.Add(Lifetime - time.Nanosecond), true},
		{now.Add(Lifetime), false},
		{now.Add(48 * time.Hour), false},
	} {
		if got := r.Live(tt.at); got != tt.live {
			t.Errorf("Live(%s) = %v, want %v", tt.at.Sub(now), got, tt.live)
		}
	}
	var none *Record
	if none.Live(now) {
		t.Error("a nil record is live")
	}
}

func TestRemembered(t *testing.T) {
	for status, want := range map[int]bool{200: true, 201: true, 202: true, 299: true,
		199: false, 300: false, 400: false, 401: false, 429: false, 500: false, 502: false} {
		if got := Remembered(status); got != want {
			t.Errorf("Remembered(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fp, other := Fingerprint{1}, Fingerprint{2}
	live := func(f Fingerprint) *Record { return NewRecord(f, 201, []byte("{}"), now.Add(-time.Hour)) }
	expired := func(f Fingerprint) *Record { return NewRecord(f, 201, []byte("{}"), now.Add(-Lifetime)) }
	tests := []struct {
		name     string
		stored   *Record
		inFlight bool
		want     Decision
	}{
		{"nothing stored, nothing in flight", nil, false, Act},
		{"nothing stored, one in flight", nil, true, InFlight},
		{"same request answered", live(fp), false, Replay},
		{"same request answered, another in flight", live(fp), true, Replay},
		{"other request answered", live(other), false, Conflict},
		{"other request answered, another in flight", live(other), true, Conflict},
		{"same request answered a day ago", expired(fp), false, Act},
		{"other request answered a day ago", expired(other), false, Act},
		{"expired answer, one in flight", expired(other), true, InFlight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.stored, tt.inFlight, fp, now); got != tt.want {
				t.Fatalf("Decide = %v, want %v", got, tt.want)
			}
		})
	}
}
