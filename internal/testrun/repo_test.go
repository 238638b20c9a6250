package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// These tests hold make test to the repository's tests: every test and
// fuzz target it is meant to run is in one of its passes, and none of its
// passes can hide a failure.

// root is the repository's root, from this package's folder.
const root = "../.."

// testFunc is a top-level Test or Fuzz function of a _test.go file.
type testFunc struct {
	dir  string // the package's folder, as ./a/b
	name string
	decl *ast.FuncDecl
}

// testFuncs parses every _test.go file of the repository.
func testFuncs(t *testing.T) []testFunc {
	t.Helper()
	var out []testFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && (strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "Fuzz")) {
				out = append(out, testFunc{"./" + filepath.ToSlash(rel), fn.Name.Name, fn})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// calls reports whether fn's body calls the function named name (a
// selector's name or a plain identifier).
func calls(fn *ast.FuncDecl, name string) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		switch f := c.Fun.(type) {
		case *ast.Ident:
			found = found || f.Name == name
		case *ast.SelectorExpr:
			found = found || f.Sel.Name == name
		}
		return !found
	})
	return found
}

// makeVar is the value of a ":=" variable of the Makefile, with make's
// "$$" read as "$".
func makeVar(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*:=\s*(.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the Makefile has no %s", name)
	}
	return strings.ReplaceAll(strings.TrimSpace(string(m[1])), "$$", "$")
}

// TestFuzzTargetsListed: every fuzz function is in scripts/fuzz-targets,
// which make test and make fuzz fuzz, and every line there names one.
func TestFuzzTargetsListed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "scripts", "fuzz-targets"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			listed[f[0]+" "+f[1]] = true
		}
	}
	found := map[string]bool{}
	for _, f := range testFuncs(t) {
		if strings.HasPrefix(f.name, "Fuzz") {
			found[f.dir+" "+f.name] = true
			if !listed[f.dir+" "+f.name] {
				t.Errorf("%s %s is not in scripts/fuzz-targets: make test never fuzzes it", f.dir, f.name)
			}
		}
	}
	for l := range listed {
		if !found[l] {
			t.Errorf("scripts/fuzz-targets names %s, which is no fuzz function", l)
		}
	}
}

// TestAllocationTestsRunWithoutRace: every test that counts allocations
// (testing.AllocsPerRun skips under the race detector, whose
// instrumentation allocates) is in make test's pass without -race.
func TestAllocationTestsRunWithoutRace(t *testing.T) {
	pkgs := strings.Fields(makeVar(t, "NORACE_PKGS"))
	tests := regexp.MustCompile(makeVar(t, "NORACE_TESTS"))
	n := 0
	for _, f := range testFuncs(t) {
		if !calls(f.decl, "AllocsPerRun") {
			continue
		}
		n++
		if !slices.Contains(pkgs, f.dir) || !tests.MatchString(f.name) {
			t.Errorf("%s %s counts allocations: the Makefile's NORACE_PKGS and NORACE_TESTS must name it, or make test never runs it", f.dir, f.name)
		}
	}
	if n == 0 {
		t.Fatal("no allocation test found: is the search broken?")
	}
}

// TestPebbleOnlyTestsLeftOut: make test's PostgreSQL pass leaves out the
// end-to-end tests that write the Pebble store directly (seedStore), which
// would fail there under CI, and only those and the test that runs each
// backend itself.
func TestPebbleOnlyTestsLeftOut(t *testing.T) {
	pg := regexp.MustCompile(makeVar(t, "PG_E2E"))
	pebble := regexp.MustCompile(makeVar(t, "PG_E2E_PEBBLE"))
	want := map[string]bool{"TestStoreBackendsEndToEnd": true}
	names := map[string]bool{}
	for _, f := range testFuncs(t) {
		if f.dir != "./cmd/swapgate" {
			continue
		}
		names[f.name] = true
		if calls(f.decl, "seedStore") && pg.MatchString(f.name) {
			want[f.name] = true
		}
	}
	for name := range names {
		if pebble.MatchString(name) != want[name] {
			t.Errorf("%s: in PG_E2E_PEBBLE %v, writes the Pebble store directly or runs each backend itself %v", name, pebble.MatchString(name), want[name])
		}
	}
	for name := range want {
		if !names[name] {
			t.Errorf("%s is no test of cmd/swapgate", name)
		}
	}
}

// TestMakeTestRunsEveryPassThroughTestrun: every go test of make test
// goes through this runner (the skip count, CI=true), and its passes are
// the ones the tests above hold.
func TestMakeTestRunsEveryPassThroughTestrun(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?ms)^test:[^\n]*\n((?:\t[^\n]*\n)+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile has no test target")
	}
	recipe := string(m[1])
	if strings.Contains(recipe, "$(GO) test") {
		t.Errorf("make test runs go test directly, not through $(TESTRUN):\n%s", recipe)
	}
	for _, want := range []string{
		"$(TESTRUN) -race -count=1 -timeout 30m $(PKGS)",
		"$(TESTRUN) -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS)",
		"-run '$(PG_E2E)' -skip '$(PG_E2E_PEBBLE)' ./cmd/swapgate",
		"scripts/fuzz-smoke",
	} {
		if !strings.Contains(recipe, want) {
			t.Errorf("make test lacks %q:\n%s", want, recipe)
		}
	}
	if v := makeVar(t, "PG_E2E_PEBBLE"); !strings.HasPrefix(v, "^(") {
		t.Errorf("PG_E2E_PEBBLE %q: anchored names, or it leaves out more than it says", v)
	}
	if !regexp.MustCompile(`(?m)^TESTRUN = CI=\$\$\{CI:-true\} `).Match(b) {
		t.Error("TESTRUN does not set CI=true: a missing tool would skip its tests in make test")
	}
}

// TestFuzzCountsDeadlineFailures runs scripts/fuzz on a stand-in go
// command: a target that ends with "context deadline exceeded" and no
// failing input is fuzzed again, and counted as failed when it fails
// again (a hanging target looks the same as the toolchain's deadline race
// the first time, never twice); one that passes the second time is not.
func TestFuzzCountsDeadlineFailures(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash: %v", err)
	}
	script, err := filepath.Abs(filepath.Join(root, "scripts", "fuzz"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := "--- FAIL: FuzzX (2.00s)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL\tp\t2.1s\n"
	for _, tt := range []struct {
		name   string
		runs   []string // what each run of go test prints and exits with: "ok" or a failure's output
		status int
		calls  int
	}{
		{"passing", []string{"ok"}, 0, 1},
		{"a real failure", []string{"--- FAIL: FuzzX\n    fuzz_test.go:10: bad\n    Failing input written to testdata/fuzz/FuzzX/abc\n"}, 1, 1},
		{"deadline then passing", []string{deadline, "ok"}, 0, 2},
		{"deadline twice", []string{deadline, deadline}, 1, 2},
		{"deadline then a real failure", []string{deadline, "--- FAIL: FuzzX\n    Failing input written to testdata/fuzz/FuzzX/abc\n"}, 1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, r := range tt.runs {
				if err := os.WriteFile(filepath.Join(dir, "run"+string(rune('0'+i))), []byte(r), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fake := filepath.Join(dir, "go")
			// Each call prints the next run's output; "ok" passes.
			body := `#!/usr/bin/env bash
n=$(cat "` + dir + `/calls" 2>/dev/null || echo 0)
echo $((n + 1)) >"` + dir + `/calls"
out=$(cat "` + dir + `/run$n")
if [ "$out" = ok ]; then echo "fuzz: elapsed: 2s, execs: 100"; echo "ok p 2.0s"; exit 0; fi
printf '%s\n' "$out"
exit 1
`
			if err := os.WriteFile(fake, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", script)
			cmd.Env = append(os.Environ(), "GO="+fake, "FUZZ_TARGETS=^FuzzValidateEVM$", "FUZZTIME=1s")
			out, err := cmd.CombinedOutput()
			status := 0
			if ee, ok := err.(*exec.ExitError); ok {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			if status != tt.status || strings.TrimSpace(string(calls)) != string(rune('0'+tt.calls)) {
				t.Fatalf("status %d after %s runs; want %d after %d\n%s", status, strings.TrimSpace(string(calls)), tt.status, tt.calls, out)
			}
		})
	}
}
