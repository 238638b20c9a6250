package pebblestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/swapgate/swapgate/store"
)

// helperEnv makes the test binary act as a second process that holds a store
// open, so the cross-process lock path (fcntl) is exercised, not only the
// in-process check.
const helperEnv = "SWAPGATE_PERSISTENCE_LOCK_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(holdLock(dir))
	}
	os.Exit(m.Run())
}

// holdLock opens the store, announces it on stdout and waits for stdin to
// close before releasing it.
func holdLock(dir string) int {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func openTest(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestOpenTwiceInProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, Options{})
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open error = %v, want ErrLocked", err)
	}
}

func TestOpenHeldByOtherProcessIsLocked(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper did not become ready: %q, %v", line, err)
	}

	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("Open while another process holds the store: %v, want ErrLocked", err)
	}

	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	// Once the other process has gone, the directory opens normally.
	openTest(t, dir, Options{})
}

func TestCloseReleasesLockAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping on open store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Ping after Close = %v, want store.ErrClosed", err)
	}
	if _, err := s.Partner(context.Background(), "ptn_x"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Partner after Close = %v, want store.ErrClosed", err)
	}
	openTest(t, dir, Options{})
}

func TestPingHonoursContext(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with cancelled context = %v", err)
	}
}

func TestSchemaTooNewIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Set(keySchema, []byte{0, 0, 0, SchemaVersion + 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Open on newer schema = %v, want store.ErrSchemaTooNew", err)
	}
	// The failed Open must have released the lock, or this would be ErrLocked.
	s2, err := Open(dir, Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("second Open = %v, want store.ErrSchemaTooNew (not ErrLocked)", err)
	}
	if s2 != nil {
		t.Fatal("Open returned a store with an error")
	}
}

func TestOpenCreatesMissingDirectory(t *testing.T) {
	dir := t.TempDir() + "/nested/data"
	openTest(t, dir, Options{})
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("data directory not created: %v", err)
	}
}
