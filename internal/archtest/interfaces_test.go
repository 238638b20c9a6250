package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxStoreMethods is the most methods an interface of the store may have:
// a backend promises each kind of state separately, and a consumer is
// handed only the kind it uses. A union of everything (the composition
// root once joined its consumers' interfaces into one of 66 methods) is
// what this refuses.
const maxStoreMethods = 20

// iface is one interface type declared in the module: its package's
// directory, and its declaration.
type iface struct {
	dir  string
	file *ast.File
	typ  *ast.InterfaceType
}

// interfaceIndex is every top-level interface type of the module's
// non-test files, by "dir.Name" (dir relative to the module root).
type interfaceIndex map[string]iface

// parseDir adds dir's interfaces to idx and returns its non-test files.
func (idx interfaceIndex) parseDir(t *testing.T, fset *token.FileSet, root, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					idx[dir+"."+ts.Name.Name] = iface{dir: dir, file: f, typ: it}
				}
			}
		}
	}
	return files
}

// methods is the method set of the interface named key, its embedded
// interfaces expanded (a name of its own package, or one qualified by an
// import of the module); an embedded interface it cannot find is reported
// in unknown, so that an unresolved one is never counted as empty.
func (idx interfaceIndex) methods(key string, set map[string]bool, unknown *[]string) {
	in, ok := idx[key]
	if !ok {
		*unknown = append(*unknown, key)
		return
	}
	for _, f := range in.typ.Methods.List {
		if len(f.Names) > 0 {
			for _, n := range f.Names {
				set[n.Name] = true
			}
			continue
		}
		idx.methods(idx.resolve(in.dir, in.file, f.Type), set, unknown)
	}
}

// resolve names the interface a type expression in file (of package dir)
// refers to, as an index key.
func (idx interfaceIndex) resolve(dir string, file *ast.File, e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return dir + "." + x.Name
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		if !ok {
			return "?"
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if name == pkg.Name || (imp.Name == nil && strings.HasPrefix(path, module) && idx.pkgName(path) == pkg.Name) {
				return strings.TrimPrefix(path, module) + "." + x.Sel.Name
			}
		}
		return pkg.Name + "." + x.Sel.Name
	}
	return "?"
}

// pkgName is the last element of a module path: the package name of every
// package the store's interfaces embed.
func (idx interfaceIndex) pkgName(path string) string { return filepath.Base(path) }

// guarded lists the interfaces files (a backend's) hold the backend to:
// the T of each `var _ T = (*Store)(nil)`-style guard.
func guarded(idx interfaceIndex, dir string, files []*ast.File) []string {
	var keys []string
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if vs.Type != nil && len(vs.Names) == 1 && vs.Names[0].Name == "_" {
					keys = append(keys, idx.resolve(dir, f, vs.Type))
				}
			}
		}
	}
	return keys
}

// oversized reports every interface of the store (declared under store/,
// or held to a backend by a guard) with more than max methods.
func oversized(t *testing.T, root string, max int) []string {
	t.Helper()
	fset := token.NewFileSet()
	idx := interfaceIndex{}
	storeFiles := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if n := d.Name(); rel != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
			return filepath.SkipDir
		}
		files := idx.parseDir(t, fset, root, rel)
		if under(rel, "store") {
			storeFiles[rel] = files
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(storeFiles) == 0 {
		t.Fatalf("no package under %s/store: the store moved?", root)
	}
	checked := map[string]bool{}
	for dir, files := range storeFiles {
		for key, in := range idx {
			if in.dir == dir {
				checked[key] = true
			}
		}
		for _, key := range guarded(idx, dir, files) {
			checked[key] = true
		}
	}
	var bad []string
	for key := range checked {
		set, unknown := map[string]bool{}, []string(nil)
		idx.methods(key, set, &unknown)
		if len(unknown) > 0 {
			bad = append(bad, key+": embeds interfaces this test cannot find: "+strings.Join(unknown, ", "))
			continue
		}
		if len(set) > max {
			bad = append(bad, key+": "+strconv.Itoa(len(set))+" methods, more than "+strconv.Itoa(max))
		}
	}
	sort.Strings(bad)
	return bad
}

// TestStoreInterfacesAreSmall: no interface of the store, and none a
// backend is held to, has more than maxStoreMethods methods.
func TestStoreInterfacesAreSmall(t *testing.T) {
	for _, b := range oversized(t, "../..", maxStoreMethods) {
		t.Errorf("store interface %s: split it by kind of state", b)
	}
}

// TestStoreInterfaceSizeBites: the count sees an oversized interface
// whether it declares its methods or embeds them, and one a backend's
// guard holds it to.
func TestStoreInterfaceSizeBites(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var eleven strings.Builder
	for i := range 11 {
		eleven.WriteString("\tM" + strconv.Itoa(i) + "()\n")
	}
	var ten strings.Builder
	for i := range 10 {
		ten.WriteString("\tN" + strconv.Itoa(i) + "()\n")
	}
	write("store/store.go", "package store\n\ntype A interface {\n"+eleven.String()+"}\n\ntype B interface {\n"+ten.String()+"}\n\n"+
		"type Declared interface {\n"+eleven.String()+ten.String()+"}\n\ntype Embedded interface {\n\tA\n\tB\n}\n")
	write("consumer/c.go", "package consumer\n\ntype Big interface {\n\tX()\n"+eleven.String()+ten.String()+"}\n")
	write("store/pebble/p.go", "package pebble\n\nimport \"github.com/swapgate/swapgate/consumer\"\n\ntype Store struct{}\n\n"+
		"var _ consumer.Big = (*Store)(nil)\n")
	got := oversized(t, root, maxStoreMethods)
	want := []string{"consumer.Big: 22 methods, more than 20", "store.Declared: 21 methods, more than 20", "store.Embedded: 21 methods, more than 20"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("oversized = %q, want %q", got, want)
	}
}
