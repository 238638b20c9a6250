// Command testrun is make test's runner of go test: it runs
//
//	go test -json <args>
//
// and prints what go test prints without -v (each package's ok or FAIL
// line; a failing test's whole log and its --- FAIL line, a package's
// panic or build error), then how many tests were skipped and, for each,
// its name and the reason its t.Skip gave. A skip is a test that did not
// run: make test shows them rather than letting a pass hide them.
//
// Its exit status is go test's, and 1 when go test exited 0 but a test or
// a package failed. GO names the go command (default go).
//
//	go run ./internal/testrun -race -count=1 ./...
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json with args, reporting to stdout and stderr, and
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	cmd.Stdin = os.Stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	r := newReport(stdout)
	readErr := r.read(out)
	waitErr := cmd.Wait()
	r.summary()
	switch {
	case readErr != nil:
		fmt.Fprintf(stderr, "testrun: reading go test's output: %v\n", readErr)
		return 2
	case waitErr != nil:
		if ee, ok := waitErr.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "testrun: go test: %v\n", waitErr)
		return 2
	case r.failed:
		return 1
	}
	return 0
}

// event is one line of go test -json (cmd/test2json's TestEvent, with the
// build events of go test -json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// report follows the events of every package and prints each package's
// part once it ends, so that the parts of packages tested in parallel do
// not interleave.
type report struct {
	w        io.Writer
	packages map[string]*pkgState
	skips    []skip
	failed   bool
}

// pkgState is a package's events so far: every line of output in order,
// with the test it belongs to, and how each test ended.
type pkgState struct {
	lines []line
	ended map[string]string // test → pass, fail or skip
}

type line struct {
	test, text string
}

// skip is a skipped test and what its t.Skip said.
type skip struct {
	pkg, test, reason string
}

func newReport(w io.Writer) *report {
	return &report{w: w, packages: map[string]*pkgState{}}
}

// read consumes go test -json's output until it ends. A line that is not
// a JSON event (go test's own messages) is printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if b := sc.Bytes(); len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
			fmt.Fprintln(r.w, sc.Text())
			continue
		}
		r.handle(e)
	}
	return sc.Err()
}

func (r *report) pkg(name string) *pkgState {
	p := r.packages[name]
	if p == nil {
		p = &pkgState{ended: map[string]string{}}
		r.packages[name] = p
	}
	return p
}

func (r *report) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.w, e.Output)
		return
	case "build-fail":
		r.failed = true
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	switch e.Action {
	case "output":
		p.lines = append(p.lines, line{e.Test, e.Output})
	case "pass", "fail", "skip":
		if e.Test != "" {
			p.ended[e.Test] = e.Action
			return
		}
		if e.Action == "fail" {
			r.failed = true
		}
		r.flush(e.Package, p)
		delete(r.packages, e.Package)
	}
}

// flush prints a package's part as go test without -v would (the log of
// its failed tests, the package's own lines) and notes its skipped tests.
func (r *report) flush(name string, p *pkgState) {
	for _, l := range p.lines {
		if l.test == "" {
			// The test binary runs verbose under -json: its bare PASS
			// line is one go test does not print.
			if l.text != "PASS\n" {
				fmt.Fprint(r.w, l.text)
			}
			continue
		}
		if p.ended[l.test] == "fail" && !progress(l.text) {
			fmt.Fprint(r.w, l.text)
		}
	}
	var tests []string
	for test, how := range p.ended {
		if how == "skip" {
			tests = append(tests, test)
		}
	}
	sort.Strings(tests)
	for _, test := range tests {
		r.skips = append(r.skips, skip{name, test, reason(p.lines, test)})
	}
}

// progress reports whether a line is one of test2json's markers of a
// test's progress (=== RUN, PAUSE, CONT, NAME), which go test without -v
// does not print.
func progress(text string) bool {
	return strings.HasPrefix(text, "=== ")
}

// reason is what a skipped test logged, its t.Skip message last: its
// lines other than the progress markers and its --- SKIP line, joined.
func reason(lines []line, test string) string {
	var parts []string
	for _, l := range lines {
		if l.test != test || progress(l.text) || strings.HasPrefix(strings.TrimSpace(l.text), "--- SKIP") {
			continue
		}
		if s := strings.TrimSpace(l.text); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// summary prints what is left of packages that never ended (a killed go
// test), then the skipped tests.
func (r *report) summary() {
	names := make([]string, 0, len(r.packages))
	for name := range r.packages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r.failed = true
		p := r.packages[name]
		for _, l := range p.lines {
			if !progress(l.text) {
				fmt.Fprint(r.w, l.text)
			}
		}
		fmt.Fprintf(r.w, "FAIL\t%s\t(no result from go test)\n", name)
	}
	noun := "tests"
	if len(r.skips) == 1 {
		noun = "test"
	}
	fmt.Fprintf(r.w, "%d %s skipped\n", len(r.skips), noun)
	for _, s := range r.skips {
		fmt.Fprintf(r.w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
	}
}
