package testdeps

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a helper ended the test
// instead of ending it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn on a recorder in a goroutine of its own, as the testing
// package runs a test, so that Goexit ends only fn.
func run(t *testing.T, fn func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// TestUnmet: a missing need skips the test on a developer's machine and
// fails it under CI, with the reason either way.
func TestUnmet(t *testing.T) {
	for _, tt := range []struct {
		ci         string
		skip, fail bool
	}{
		{"", true, false},
		{"false", true, false},
		{"0", true, false},
		{"yes", true, false}, // not a boolean: not strict
		{"true", false, true},
		{"1", false, true},
		{"TRUE", false, true},
	} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv(EnvCI, tt.ci)
			r := run(t, func(tb testing.TB) { Unmet(tb, "no %s here", "frobnicator") })
			if (r.skipped != "") != tt.skip || (r.failed != "") != tt.fail {
				t.Fatalf("skipped %q, failed %q; want skip %v, fail %v", r.skipped, r.failed, tt.skip, tt.fail)
			}
			if !strings.Contains(r.skipped+r.failed, "no frobnicator here") {
				t.Fatalf("the reason is lost: skipped %q, failed %q", r.skipped, r.failed)
			}
		})
	}
}

// TestLookPath: a tool on PATH is found; a missing one is Unmet.
func TestLookPath(t *testing.T) {
	t.Setenv(EnvCI, "true")
	var found string
	r := run(t, func(tb testing.TB) { found = LookPath(tb, "go") })
	if r.failed != "" || found == "" {
		t.Fatalf("go not found: %q", r.failed)
	}
	r = run(t, func(tb testing.TB) { LookPath(tb, "no-such-tool-swapgate") })
	if !strings.Contains(r.failed, "no-such-tool-swapgate is not installed") {
		t.Fatalf("a missing tool under CI: failed %q, skipped %q", r.failed, r.skipped)
	}
}
