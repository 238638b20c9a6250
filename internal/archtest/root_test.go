package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// compositionRoot builds and starts the service; its one caller is the
// binary (cmd/swapgate, whose end-to-end tests start it in-process too).
// A tool that needs a running service (the examples generator, the bench
// suite) runs `swapgate serve` as a child process and talks to it as a
// client does, so that what it sees is what an operator's server answers
// and the root's shape can change without it.
const compositionRoot = "cmd/swapgate/app"

// rootImportedOutside reports whether pkg, importing imp, reaches into the
// composition root from outside the binary.
func rootImportedOutside(pkg, imp string) bool {
	return !under(pkg, "cmd/swapgate") && under(imp, compositionRoot)
}

// TestCompositionRootImportedOnlyByTheBinary holds every package, and its
// tests, to rootImportedOutside.
func TestCompositionRootImportedOnlyByTheBinary(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	n := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		n++
		pkg := strings.TrimPrefix(p.ImportPath, module)
		for _, imports := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imports {
				if rootImportedOutside(pkg, strings.TrimPrefix(imp, module)) {
					t.Errorf("only cmd/swapgate imports the composition root: %s imports %s", pkg, imp)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list found %d packages: not the module", n)
	}
}

// TestCompositionRootRuleBites: the rule refuses the imports it exists to
// refuse and lets the binary's own through.
func TestCompositionRootRuleBites(t *testing.T) {
	cases := []struct {
		pkg, imp string
		refused  bool
	}{
		{"api/cmd/examples", "cmd/swapgate/app", true},
		{"bench/suite", "cmd/swapgate/app", true},
		{"persistence/storetest", "cmd/swapgate/app", true},
		{"cmd/swapgateish", "cmd/swapgate/app", true},
		{"cmd/swapgate", "cmd/swapgate/app", false},
		{"cmd/swapgate/app", "cmd/swapgate/app/sub", false},
		{"api/cmd/examples", "edge/admin", false},
	}
	for _, c := range cases {
		if got := rootImportedOutside(c.pkg, c.imp); got != c.refused {
			t.Errorf("%s importing %s: refused %v, want %v", c.pkg, c.imp, got, c.refused)
		}
	}
}
