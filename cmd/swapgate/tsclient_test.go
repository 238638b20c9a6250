package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tsClientDir is the TypeScript client's npm package, from this package.
const tsClientDir = "../../clients/typescript"

// TestTypeScriptSchemaIsGenerated fails when the committed
// clients/typescript/src/schema.d.ts is not what `npm run generate` makes of
// the current api/openapi.json, so that the document and the client cannot
// drift apart. It runs the package's own generate script on a copy of the
// package (its node_modules linked) next to a copy of the document, laid out
// as in the repository, and compares the output byte for byte.
func TestTypeScriptSchemaIsGenerated(t *testing.T) {
	dir := typescriptClient(t)

	root := t.TempDir()
	pkg := filepath.Join(root, "clients", "typescript")
	copyFile(t, filepath.Join(dir, "..", "..", "api", "openapi.json"), filepath.Join(root, "api", "openapi.json"))
	copyFile(t, filepath.Join(dir, "package.json"), filepath.Join(pkg, "package.json"))
	if err := os.MkdirAll(filepath.Join(pkg, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(pkg, "node_modules")); err != nil {
		t.Fatal(err)
	}
	npm(t, pkg, 2*time.Minute, nil, "run", "generate")

	fresh, err := os.ReadFile(filepath.Join(pkg, "src", "schema.d.ts"))
	if err != nil {
		t.Fatalf("npm run generate wrote no src/schema.d.ts: %v", err)
	}
	committed, err := os.ReadFile(filepath.Join(dir, "src", "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("clients/typescript/src/schema.d.ts is not generated from the current api/openapi.json: "+
			"run `npm run generate` in clients/typescript and commit it\nfirst difference: %s", firstDifference(committed, fresh))
	}
}

// firstDifference names the first line where the committed file and the
// generated one differ.
func firstDifference(committed, fresh []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(fresh), "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d\ncommitted: %q\ngenerated: %q", i+1, x, y)
		}
	}
	return "none"
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// typescriptClient returns the client package's absolute directory with its
// dependencies installed as package-lock.json pins them, holding the
// package (an flock on its directory) until the test ends, since the tests
// write node_modules and dist there. `npm ci` runs only when the lock file
// or package.json changed since the last install: a marker in node_modules
// records the digest of both. Node and npm must be installed.
func typescriptClient(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (scripts/test-deps installs it, as make test does): %v", tool, err)
		}
	}
	dir, err := filepath.Abs(tsClientDir)
	if err != nil {
		t.Fatal(err)
	}
	lockPackage(t, dir)

	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	want := hex.EncodeToString(h.Sum(nil)) + "\n"
	marker := filepath.Join(dir, "node_modules", ".swapgate-installed")
	if got, err := os.ReadFile(marker); err == nil && string(got) == want {
		return dir
	}
	start := time.Now()
	npm(t, dir, 5*time.Minute, nil, "ci", "--no-audit", "--no-fund")
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("npm ci in %s took %s", dir, time.Since(start).Round(time.Millisecond))
	return dir
}

// lockPackage holds an exclusive flock on dir until the test ends, so that
// two test processes never install or build in it at once.
func lockPackage(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", dir, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// npm runs npm with args in dir, with the test's environment plus env,
// within timeout (and the test's own context), and returns what it printed;
// a failure or a timeout fails the test with that output. npm and what it
// starts run in a process group of their own, killed whole on a timeout.
func npm(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("npm %s in %s: no end within %s:\n%s", strings.Join(args, " "), dir, timeout, out.String())
	}
	if err != nil {
		t.Fatalf("npm %s in %s: %v after %s:\n%s", strings.Join(args, " "), dir, err, took, out.String())
	}
	t.Logf("npm %s: %s\n%s", strings.Join(args, " "), took, out.String())
	return out.String()
}
