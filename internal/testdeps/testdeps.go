// Package testdeps is how a test says that something it needs beyond Go
// is not on this machine: a command-line tool, a PostgreSQL server, a
// backend the test cannot run on.
//
// On a developer's machine such a test is skipped, with the reason. Under
// CI=true, which make test sets for its passes unless CI is already set,
// it fails instead: scripts/test-deps installs everything the tests need,
// so a test that would skip there is a test that never runs, and a suite
// that passes with it skipped promises what nobody checked.
package testdeps

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// EnvCI is the variable that makes Unmet fail instead of skip: "true" or
// "1" (as CI services set it), or anything strconv.ParseBool reads as true.
const EnvCI = "CI"

// Strict reports whether Unmet fails the test (CI is set true) rather than
// skipping it.
func Strict() bool {
	v, err := strconv.ParseBool(os.Getenv(EnvCI))
	return err == nil && v
}

// Unmet ends the test because what it needs is missing: a skip with the
// reason, or under CI=true a failure with it.
func Unmet(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatalf("%s (%s=true: scripts/test-deps installs what the tests need; a skipped test would pass unseen)", msg, EnvCI)
	}
	t.Skip(msg)
}

// LookPath returns the path of tool, or ends the test as Unmet when it is
// not installed.
func LookPath(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		Unmet(t, "%s is not installed: %v", tool, err)
	}
	return p
}
