package pulseroute

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomainImportsNoSimulatorOrAdapter holds the shape: pulseroute and the
// pricing package it shares with the sandbox import neither the simulator
// nor a network adapter nor anything outside routing/domain of this module,
// so that live mode can be built without the sandbox.
func TestDomainImportsNoSimulatorOrAdapter(t *testing.T) {
	const module = "github.com/swapgate/swapgate/"
	for _, dir := range []string{".", filepath.Join("..", "pricing")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, module) && !strings.HasPrefix(path, module+"routing/domain/") {
					t.Errorf("%s imports %s: the domain imports only routing/domain of this module", f, path)
				}
			}
		}
	}
}
