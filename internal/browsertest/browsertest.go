// Package browsertest drives a headless Chromium from tests, through
// chromedp: it finds the browser, starts it with a fresh profile and the
// flags that keep it quiet and local, and saves screenshots as test
// artifacts. The checkout page's browser test in edge uses it, and the
// end-to-end tests in cmd/swapgate can.
//
// A missing browser fails the test rather than skipping it: a browser test
// that quietly stops running protects nothing. `make test` installs
// Chromium first (scripts/test-deps).
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package installs the browser.
const DefaultPath = "/usr/bin/chromium"

// EnvPath names a browser to use instead, for machines where Chromium (or
// Chrome) lives elsewhere.
const EnvPath = "CHROMIUM"

// EnvArtifacts names the folder screenshots go to; <repo root>/test-artifacts
// when it is unset.
const EnvArtifacts = "TEST_ARTIFACTS"

// installHint is what a test says when no browser is found.
const installHint = "install it with `sudo apt-get update && sudo apt-get install --no-install-recommends chromium` " +
	"(Debian; `make test` runs scripts/test-deps, which does this), or set " + EnvPath + " to a Chromium or Chrome binary"

// Find returns the browser to drive: $CHROMIUM when set, else
// /usr/bin/chromium, else chromium or chromium-browser on PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
		return "", fmt.Errorf("browsertest: %s=%s is not an executable; %s", EnvPath, p, installHint)
	}
	if path, err := exec.LookPath(DefaultPath); err == nil {
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("browsertest: Chromium not found at %s nor on PATH; %s", DefaultPath, installHint)
}

// flags are the browser's command-line switches besides its profile and
// window: headless and without a sandbox (tests run as root in
// containers), no GPU, no QUIC, and none of the background traffic a fresh
// profile starts (first-run pages, component updates, sync), so that a test
// reaches only the servers it started.
var flags = [...]string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync",
}

// Browser is one started browser.
type Browser struct {
	// Ctx is the chromedp context of the browser's first tab; derive a
	// context with a timeout from it for each step.
	Ctx context.Context
	t   testing.TB
	out *syncBuffer
}

// New starts Chromium for the test with a fresh temporary profile and
// returns its first tab. The browser is stopped and the profile removed
// when the test ends. A missing browser, or one that does not start, fails
// the test with what to do about it.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	profile, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900), chromedp.CombinedOutput(out)}
	for _, f := range flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		if err := os.RemoveAll(profile); err != nil {
			t.Logf("browsertest: removing the profile: %v", err)
		}
	})
	// The first Run starts the browser; it may not carry a timeout, which
	// would stop the browser with it, so the wait is bounded here instead.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(60 * time.Second):
		err = errors.New("no answer within 60 s")
	}
	if err != nil {
		t.Fatalf("browsertest: starting %s: %v\nbrowser output:\n%s", path, err, out.String())
	}
	return &Browser{Ctx: ctx, t: t, out: out}
}

// Run runs actions on the tab within timeout, failing the test on an error
// with what the step was.
func (b *Browser) Run(step string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %s: %v", step, err)
	}
}

// Eval evaluates a JavaScript expression in the page within timeout.
func Eval[T any](b *Browser, expr string, timeout time.Duration) (T, error) {
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// Text is the text content of the first element matching a CSS selector,
// waiting for it to exist.
func (b *Browser) Text(selector string, timeout time.Duration) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(selector)))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", selector, err)
	}
	return strings.TrimSpace(s)
}

// Screenshot saves a full-page PNG of the tab as a test artifact named
// name (".png" added), logs its path and returns it.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path, err := SaveArtifact(name+".png", png)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// SaveArtifact writes data under the artifact folder and returns its path.
func SaveArtifact(name string, data []byte) (string, error) {
	dir, err := ArtifactDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("browsertest: artifact folder: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("browsertest: artifact: %w", err)
	}
	return path, nil
}

// ArtifactDir is $TEST_ARTIFACTS when set, else test-artifacts in the
// module's root (the nearest folder above the test's working directory
// with a go.mod), which .gitignore leaves out.
func ArtifactDir() (string, error) {
	if d := os.Getenv(EnvArtifacts); d != "" {
		return filepath.Abs(d)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "test-artifacts"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("browsertest: no go.mod above the working directory; set " + EnvArtifacts)
		}
		dir = parent
	}
}

// syncBuffer keeps the browser's output, which its process writes from
// another goroutine, for the message of a failed start.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
