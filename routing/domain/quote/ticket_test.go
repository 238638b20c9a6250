package quote

import (
	"strings"
	"testing"
	"time"
)

func TestQuoteIDCarriesItsIssueTime(t *testing.T) {
	for _, at := range []time.Time{time.Unix(0, 0), time.Unix(1_767_225_600, 999), time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)} {
		id := NewID(at)
		if len(id) != IDLength || !strings.HasPrefix(id, "qt_") {
			t.Fatalf("NewID(%v) = %q", at, id)
		}
		got, ok := IssuedAt(id)
		if !ok || !got.Equal(at.Truncate(time.Second)) {
			t.Fatalf("IssuedAt(%q) = %v %v, want %v", id, got, ok, at.Truncate(time.Second))
		}
	}
	if a, b := NewID(time.Unix(5, 0)), NewID(time.Unix(5, 0)); a == b {
		t.Fatalf("two ids issued in one second are equal: %s", a)
	}
	for _, bad := range []string{"", "qt_", "qt_0123456789abcdef0123456789abcdef", "qt_0123456789ABCDEF0123456789", "xx_0123456789abcdef0123456789",
		"qt_0123456789abcdef01234567g9", "qt_0123456789abcdef0123456789a"} {
		if _, ok := IssuedAt(bad); ok {
			t.Errorf("IssuedAt(%q) accepted a malformed id", bad)
		}
	}
}
