package edge

import (
	"fmt"
	"testing"
	"time"
)

func TestPortalLimits(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		run  func(l *portalLimits) bool
		want []bool
	}{
		{"three codes per address", func(l *portalLimits) bool { return l.allowCode("a@b.co", "1.1.1.1", t0) },
			[]bool{true, true, true, false, false}},
		{"twenty codes per IP across addresses", func() func(l *portalLimits) bool {
			i := 0
			return func(l *portalLimits) bool { i++; return l.allowCode(fmt.Sprintf("a%d@b.co", i), "1.1.1.1", t0) }
		}(), append(repeat(true, 20), false)},
		{"thirty checks per IP", func(l *portalLimits) bool { return l.allowCheck("1.1.1.1", t0) }, append(repeat(true, 30), false)},
	}
	for _, tc := range cases {
		l := newPortalLimits()
		for i, want := range tc.want {
			if got := tc.run(l); got != want {
				t.Fatalf("%s: request %d allowed %v, want %v", tc.name, i+1, got, want)
			}
		}
	}
	l := newPortalLimits()
	for range 3 {
		l.allowCode("a@b.co", "1.1.1.1", t0)
	}
	if l.allowCode("a@b.co", "2.2.2.2", t0.Add(9*time.Minute)) {
		t.Fatal("a fourth code within the window")
	}
	if !l.allowCode("a@b.co", "2.2.2.2", t0.Add(10*time.Minute)) {
		t.Fatal("no code after the window")
	}
}

func repeat(v bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}
