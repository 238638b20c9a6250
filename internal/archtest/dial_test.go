package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The domain dials nothing: what reaches the network (a chain's node, a
// resolver, an HTTP upstream) is an adapter behind an interface the domain
// declares where it uses it, so that the domain's rules run and are tested
// without one. The rule is kept on imports, file by file, of the domain's
// non-test files: net/http and every other package under net/ but the two
// that only parse (net/netip, net/url), the net package itself (its
// dialers and resolvers; the domain needs none of its types), and
// go-ethereum's clients (ethclient, gethclient, rpc). go-ethereum's types,
// signers and ABI codec stay: they compute, they do not dial.

// domainRoot holds the domain's packages.
const domainRoot = "routing/domain"

// dialingImport says why a domain file may not import path, or "" when it
// may.
func dialingImport(path string) string {
	const geth = "github.com/ethereum/go-ethereum/"
	switch {
	case path == "net/netip", path == "net/url":
		return ""
	case path == "net/http" || strings.HasPrefix(path, "net/http/"):
		return "HTTP is the edge's and the adapters'"
	case path == "net":
		return "the net package dials and resolves: take an interface an adapter implements"
	case strings.HasPrefix(path, "net/"):
		return "a network protocol is an adapter's"
	case path == geth+"ethclient" || strings.HasPrefix(path, geth+"ethclient/"),
		path == geth+"rpc" || strings.HasPrefix(path, geth+"rpc/"):
		return "go-ethereum's clients dial a node: that is an adapter's"
	}
	return ""
}

// dialingImports lists, one line per offence, the imports of one Go file
// that the domain refuses.
func dialingImports(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, err
		}
		if why := dialingImport(path); why != "" {
			out = append(out, name+" imports "+path+": "+why)
		}
	}
	return out, nil
}

// TestDomainDialsNothing holds every non-test file of the domain's
// packages to dialingImport.
func TestDomainDialsNothing(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles", module+domainRoot+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	fset := token.NewFileSet()
	files := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath, Dir                   string
			GoFiles, CgoFiles, IgnoredGoFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		// Files another build's tags would compile count too, test files
		// aside (go list does not name those among the ignored).
		for _, names := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles} {
			for _, name := range names {
				if strings.HasSuffix(name, "_test.go") {
					continue
				}
				files++
				rel := filepath.ToSlash(filepath.Join(strings.TrimPrefix(p.ImportPath, module), name))
				bad, err := dialingImports(fset, filepath.Join(p.Dir, name), nil)
				if err != nil {
					t.Fatalf("%s: %v", rel, err)
				}
				for _, b := range bad {
					t.Errorf("the domain dials nothing: %s", strings.Replace(b, filepath.Join(p.Dir, name), rel, 1))
				}
			}
		}
	}
	if files < 50 {
		t.Fatalf("go list found %d files under %s: not the domain", files, domainRoot)
	}
}

// TestDomainDialRuleBites: the rule refuses each import it exists to
// refuse, in a file as the domain would write it, and lets the parsing
// packages and go-ethereum's types through.
func TestDomainDialRuleBites(t *testing.T) {
	cases := []struct {
		imp     string
		refused bool
	}{
		{"net/http", true},
		{"net/http/httptest", true},
		{"net", true},
		{"net/smtp", true},
		{"github.com/ethereum/go-ethereum/ethclient", true},
		{"github.com/ethereum/go-ethereum/ethclient/gethclient", true},
		{"github.com/ethereum/go-ethereum/rpc", true},
		{"net/netip", false},
		{"net/url", false},
		{"github.com/ethereum/go-ethereum", false},
		{"github.com/ethereum/go-ethereum/core/types", false},
		{"github.com/ethereum/go-ethereum/rpcx", false},
		{"github.com/swapgate/swapgate/routing/domain/apierr", false},
	}
	for _, c := range cases {
		src := "package inbound\n\nimport (\n\t\"context\"\n\tx " + strconv.Quote(c.imp) + "\n)\n"
		bad, err := dialingImports(token.NewFileSet(), "routing/domain/inbound/reader.go", src)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(bad) == 1; got != c.refused {
			t.Errorf("import %s: offences %q, want refused=%v", c.imp, bad, c.refused)
		}
	}
}
