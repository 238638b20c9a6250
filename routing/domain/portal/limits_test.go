package portal

import (
	"fmt"
	"testing"
	"time"
)

// take runs Take over an in-memory map, as a store would.
func take(m map[string]Counter, limits []Limit, now time.Time) bool {
	cs := make([]Counter, len(limits))
	for i, l := range limits {
		cs[i] = m[l.Key]
	}
	if !Take(cs, limits, now) {
		return false
	}
	for i, l := range limits {
		m[l.Key] = cs[i]
	}
	return true
}

func TestSignInLimits(t *testing.T) {
	cases := []struct {
		name string
		run  func(m map[string]Counter) bool
		want []bool
	}{
		{"three codes per address", func(m map[string]Counter) bool { return take(m, CodeRequestLimits("a@b.co", "1.1.1.1"), t0) },
			[]bool{true, true, true, false, false}},
		{"the address as kept: case and spaces ignored", func() func(m map[string]Counter) bool {
			i := 0
			return func(m map[string]Counter) bool {
				i++
				return take(m, CodeRequestLimits([]string{"a@b.co", " A@B.co", "a@B.CO "}[i%3], fmt.Sprint(i)), t0)
			}
		}(), []bool{true, true, true, false}},
		{"twenty codes per IP across addresses", func() func(m map[string]Counter) bool {
			i := 0
			return func(m map[string]Counter) bool {
				i++
				return take(m, CodeRequestLimits(fmt.Sprintf("a%d@b.co", i), "1.1.1.1"), t0)
			}
		}(), append(repeat(true, 20), false)},
		{"thirty checks per IP", func(m map[string]Counter) bool { return take(m, CodeCheckLimits("1.1.1.1"), t0) }, append(repeat(true, 30), false)},
	}
	for _, tc := range cases {
		m := map[string]Counter{}
		for i, want := range tc.want {
			if got := tc.run(m); got != want {
				t.Fatalf("%s: request %d allowed %v, want %v", tc.name, i+1, got, want)
			}
		}
	}
	m := map[string]Counter{}
	for range 3 {
		take(m, CodeRequestLimits("a@b.co", "1.1.1.1"), t0)
	}
	if take(m, CodeRequestLimits("a@b.co", "2.2.2.2"), t0.Add(9*time.Minute)) {
		t.Fatal("a fourth code within the window")
	}
	if n := m[CodeRequestLimits("a@b.co", "2.2.2.2")[1].Key].N; n != 0 {
		t.Fatalf("the refused request counted under the IP: %d", n)
	}
	if !take(m, CodeRequestLimits("a@b.co", "2.2.2.2"), t0.Add(10*time.Minute)) {
		t.Fatal("no code after the window")
	}
	for _, l := range append(CodeRequestLimits("a@b.co", "1.1.1.1"), CodeCheckLimits("1.1.1.1")...) {
		if len(l.Key) != 64 || l.Key == "a@b.co" {
			t.Fatalf("limit key %q is not a digest", l.Key)
		}
	}
}

func repeat(v bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}
