package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxPartLines is the most lines Start and each of its parts may span: a
// screen, so that each reads whole.
const maxPartLines = 40

// TestStartReadsAsAList: Start is a list of what runs and in which order,
// and each part it runs is a function of a screen or less, so that adding
// a part is a line in the list and a function of its own rather than more
// of one long body.
func TestStartReadsAsAList(t *testing.T) {
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	lines := func(fd *ast.FuncDecl) int {
		return fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
	}
	start := funcs["Start"]
	if start == nil {
		t.Fatal("no Start")
	}
	if n := lines(start); n > maxPartLines {
		t.Errorf("Start is %d lines, more than %d: list its parts, each a function of its own", n, maxPartLines)
	}
	// The parts: the methods of App that Start's list names (a.part).
	var parts []string
	ast.Inspect(start.Body, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok {
			for _, e := range cl.Elts {
				if sel, ok := e.(*ast.SelectorExpr); ok {
					parts = append(parts, sel.Sel.Name)
				}
			}
		}
		return true
	})
	if len(parts) < 5 {
		t.Fatalf("Start lists %d parts (%v): not a list of what runs", len(parts), parts)
	}
	// The parts, and the helpers that build what they hand on.
	for _, name := range append(parts, "newStartup", "checkConfig", "edgeDeps", "edgeConfig") {
		fd := funcs[name]
		if fd == nil {
			t.Errorf("no function %s", name)
			continue
		}
		if n := lines(fd); n > maxPartLines {
			t.Errorf("%s, a part of Start, is %d lines, more than %d", name, n, maxPartLines)
		}
	}
}
