package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/swapgate/swapgate/"

// pkg is what go list says of one package: its path and the module
// packages its non-test files import.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listModule lists every package of the module with its imports of the
// module's own packages, paths relative to the module.
func listModule(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		var own []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = own
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: not the module", len(pkgs))
	}
	return pkgs
}

// under reports whether path is dir or a package below it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

func anyUnder(path string, dirs ...string) bool {
	for _, d := range dirs {
		if under(path, d) {
			return true
		}
	}
	return false
}

// simulator is the sandbox's code: its market, chains and gas oracle, and
// the actor that owns the sandbox chains.
func simulator(path string) bool { return anyUnder(path, "routing/sim", "actors/sandboxchain") }

// rules says, for packages matching from, which imports are refused and
// why. The first rule is the one live mode depends on: only the
// composition root (cmd/swapgate/app) chooses the simulator; the tools
// that run a sandbox server as its client (the examples generator, the
// bench suite) may drive it too.
var rules = []struct {
	name   string
	from   func(string) bool
	refuse func(string) bool
}{
	{"only the composition root imports the simulator",
		func(p string) bool {
			return !simulator(p) && !anyUnder(p, "cmd/swapgate/app", "api/cmd/examples", "bench/suite")
		},
		simulator},
	{"the domain imports no adapter, simulator or outer layer",
		func(p string) bool { return under(p, "routing/domain") || under(p, "routing/codec") },
		func(i string) bool {
			return anyUnder(i, "routing/adapters", "routing/sim", "actors", "edge", "store", "cmd", "bench")
		}},
	{"adapters import the domain only",
		func(p string) bool { return under(p, "routing/adapters") },
		func(i string) bool {
			return anyUnder(i, "routing/sim", "actors", "edge", "store", "cmd", "bench")
		}},
	{"the edge knows HTTP: no actors, store, adapters or simulator",
		func(p string) bool { return under(p, "edge") },
		func(i string) bool {
			return anyUnder(i, "actors", "store", "routing/adapters", "routing/sim", "cmd", "bench")
		}},
	{"the store's shared words import the domain only",
		func(p string) bool { return under(p, "store") && !backend(p) },
		func(i string) bool { return !anyUnder(i, "routing/domain", "routing/codec", "store") || backend(i) }},
	{"a backend imports the store's words and the domain only, never another backend",
		backend,
		func(i string) bool { return !anyUnder(i, "routing/domain", "routing/codec", "store") || backend(i) }},
	{"actors may import the store's words but no backend",
		func(p string) bool { return under(p, "actors") },
		backend},
	{"nothing but the composition root imports a backend",
		func(p string) bool { return !backend(p) && !under(p, "cmd/swapgate") },
		backend},
	{"actors import no edge or composition root",
		func(p string) bool { return under(p, "actors") },
		func(i string) bool { return anyUnder(i, "edge", "cmd", "bench") }},
	{"only tests import the store's contract suites and the membership fake",
		func(p string) bool { return !anyUnder(p, storeSuites, clusterFake) },
		func(i string) bool { return anyUnder(i, storeSuites, clusterFake) }},
}

// storeSuites holds the contract test suites of the store's aggregates. It
// imports the actors' and the edge's interfaces, which the suites hold
// every backend to, and is imported only by tests (which this list of
// non-test imports does not see); it lives outside store/ so that the
// store stays below the actors and the edge.
const storeSuites = "internal/storecontract"

// backend reports whether path is one of the store's backends: the
// packages that keep the bytes, which only the composition root picks.
// The rest of store/ (the shared words, store; the data directory's local
// files, store/local) is what every backend and every layer share.
func backend(path string) bool { return anyUnder(path, "store/pebble", "store/postgres") }

// clusterFake is the membership the work-owning actors' tests control.
const clusterFake = "actors/cluster/clustertest"

// TestImportRules holds every package's imports to the rules.
func TestImportRules(t *testing.T) {
	pkgs := listModule(t)
	for _, r := range rules {
		for p, imports := range pkgs {
			if !r.from(p) {
				continue
			}
			for _, i := range imports {
				if r.refuse(i) {
					t.Errorf("%s: %s imports %s", r.name, p, i)
				}
			}
		}
	}
}

// TestRulesBite: each rule refuses an import it exists to refuse, so that
// a rule that matches nothing (a moved folder) fails here instead of
// passing silently.
func TestRulesBite(t *testing.T) {
	// One case per rule, in the rules' order.
	cases := []struct{ from, imp string }{
		{"edge", "routing/sim/simchain"},
		{"routing/domain/quote", "routing/adapters/lifi"},
		{"routing/adapters/lifi", "routing/sim/sandbox"},
		{"edge", "store"},
		{"store", "routing/sim/sandboxnet"},
		{"store/postgres", "store/pebble"},
		{"actors/tracker", "store/pebble"},
		{"edge/admin", "store/postgres"},
		{"actors/engine", "edge"},
		{"cmd/swapgate/app", "internal/storecontract"},
	}
	if len(cases) != len(rules) {
		t.Fatalf("%d cases for %d rules", len(cases), len(rules))
	}
	for i, c := range cases {
		r := rules[i]
		if !r.from(c.from) || !r.refuse(c.imp) {
			t.Errorf("rule %q lets %s import %s", r.name, c.from, c.imp)
		}
	}
}
