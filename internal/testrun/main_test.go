package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport: from go test -json's events, what go test without -v
// prints (a failed test's log, never a passing one's), then the skipped
// tests with their reasons.
func TestReport(t *testing.T) {
	events := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"    ok_test.go:3: chatter of a passing test\n"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"run","Package":"p","Test":"TestBad"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"    bad_test.go:9: want 2, got 3\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad"}
{"Action":"run","Package":"p","Test":"TestTool"}
{"Action":"output","Package":"p","Test":"TestTool","Output":"=== RUN   TestTool\n"}
{"Action":"output","Package":"p","Test":"TestTool","Output":"    tool_test.go:5: taskset is not installed\n"}
{"Action":"output","Package":"p","Test":"TestTool","Output":"--- SKIP: TestTool (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestTool"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
{"Action":"start","Package":"q"}
{"Action":"output","Package":"q","Output":"?   \tq\t[no test files]\n"}
{"Action":"skip","Package":"q"}
{"ImportPath":"r [r.test]","Action":"build-output","Output":"# r\n"}
{"ImportPath":"r [r.test]","Action":"build-output","Output":"r/r.go:1:1: undefined: x\n"}
{"ImportPath":"r [r.test]","Action":"build-fail"}
go: a line of go test's own
`
	for _, tt := range []struct {
		name    string
		want    []string
		wantNot []string
		failed  bool
		input   string
	}{
		{"everything", []string{
			"    bad_test.go:9: want 2, got 3\n--- FAIL: TestBad (0.00s)\n",
			"FAIL\tp\t0.01s\n",
			"?   \tq\t[no test files]\n",
			"r/r.go:1:1: undefined: x\n",
			"go: a line of go test's own\n",
			"1 test skipped\n  p TestTool: tool_test.go:5: taskset is not installed\n",
		}, []string{"chatter of a passing test", "=== RUN", "--- SKIP"}, true, events},
		{"all passing", []string{"ok  \tp\t0.01s\n", "0 tests skipped\n"}, []string{"chatter", "PASS"}, false,
			`{"Action":"output","Package":"p","Test":"TestOK","Output":"    chatter\n"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
`},
		{"a package without its end (go test killed)", []string{"panic: boom\n", "FAIL\tp\t(no result from go test)\n"}, nil, true,
			`{"Action":"output","Package":"p","Test":"TestX","Output":"panic: boom\n"}
`},
		{"a skip without a message", []string{"1 test skipped\n  p TestS: (no reason given)\n"}, nil, false,
			`{"Action":"output","Package":"p","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestS"}
{"Action":"pass","Package":"p"}
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			r := newReport(&out)
			if err := r.read(strings.NewReader(tt.input)); err != nil {
				t.Fatal(err)
			}
			r.summary()
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
			if r.failed != tt.failed {
				t.Errorf("failed %v, want %v", r.failed, tt.failed)
			}
		})
	}
}

// TestRunPropagates runs a real go test on a module of its own: a failing
// test's log is printed and the status is go test's; a passing run exits
// 0 and counts its skips.
func TestRunPropagates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module m\n\ngo 1.22\n")
	write("m_test.go", `package m

import "testing"

func TestPass(t *testing.T) { t.Log("quiet when passing") }

func TestSkip(t *testing.T) { t.Skip("needs a frobnicator") }

func TestFail(t *testing.T) { t.Fatal("the failure's own words") }
`)
	t.Chdir(dir)
	t.Setenv("GOWORK", "off")
	for _, tt := range []struct {
		run     string
		status  int
		want    []string
		wantNot string
	}{
		{"Fail", 1, []string{"the failure's own words", "--- FAIL: TestFail", "FAIL\tm\t"}, "quiet when passing"},
		{"Pass|Skip", 0, []string{"ok  \tm\t", "1 test skipped\n  m TestSkip: m_test.go:7: needs a frobnicator\n"}, "quiet when passing"},
	} {
		var stdout, stderr bytes.Buffer
		status := run([]string{"-count=1", "-run", tt.run, "."}, &stdout, &stderr)
		if status != tt.status {
			t.Errorf("-run %s: status %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.run, status, tt.status, stdout.String(), stderr.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("-run %s: output lacks %q:\n%s", tt.run, w, stdout.String())
			}
		}
		if strings.Contains(stdout.String(), tt.wantNot) {
			t.Errorf("-run %s: output has %q:\n%s", tt.run, tt.wantNot, stdout.String())
		}
	}
}

// TestMissingGo: a go command that cannot start is an error, not a pass.
func TestMissingGo(t *testing.T) {
	t.Setenv("GO", "/nonexistent/go")
	var stdout, stderr bytes.Buffer
	if status := run([]string{"./..."}, &stdout, &stderr); status == 0 {
		t.Fatalf("status 0 without a go command: %s", stderr.String())
	}
}
