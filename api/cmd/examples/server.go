package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The service the examples are captured from is a real `swapgate serve`,
// built from this checkout and run as a child process, as an operator
// runs it: the command talks to it only as a client does (HTTP, and the
// admin listener whose address the server writes into its data
// directory), and never imports the composition root.

// serveArgs are serve's options for the examples: a free loopback port, the
// fixed public URL, loopback webhooks (the receiver is a local HTTPS
// server, trusted through SSL_CERT_FILE), bridges that arrive at once and
// an on-ramp that moves an order a step every 100 ms, so that every flow
// ends within seconds. Everything else is serve's default, tracked swaps'
// schedule included (serve has no option for it: the first poll comes
// after 2 s, and finds a sandbox bridge of scale 0 arrived).
func serveArgs(dataDir string) []string {
	return []string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--public-url", PublicURL,
		"--allow-loopback-webhooks", "--sandbox-bridge-scale", "0", "--sandbox-onramp-step", "100ms"}
}

// server is the running child.
type server struct {
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}
	err    error // the child's exit, once exited is closed
	// base is the HTTP address it serves, http://host:port.
	base string
}

// syncBuffer is the child's standard error, written by the process's
// copier and read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// buildSwapgate compiles cmd/swapgate into dir with the go command ($GO,
// as make passes it, or go) and returns the binary's path. It is run
// inside the module (the repository root, or below it).
func buildSwapgate(ctx context.Context, dir string) (string, error) {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	bin := filepath.Join(dir, "swapgate")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", bin, "github.com/swapgate/swapgate/cmd/swapgate")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build swapgate (run from the repository root): %w\n%s", err, out.String())
	}
	return bin, nil
}

// startServe runs bin serve on dataDir, trusting the certificate in
// certFile for webhook deliveries, and waits until it logs that it serves
// and answers /readyz. The environment's SWAPGATE_ variables and
// SSL_CERT_FILE are not passed on: the examples' server is configured by
// its arguments alone.
func startServe(ctx context.Context, bin, dataDir, certFile string) (*server, error) {
	cmd := exec.Command(bin, serveArgs(dataDir)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") && !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SSL_CERT_FILE="+certFile)
	s := &server{cmd: cmd, log: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.Discard, s.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start swapgate serve: %w", err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitServing(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitServing reads the child's JSON log until its "swapgate serving"
// line names the address, then waits for /readyz to answer 200.
func (s *server) waitServing(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for s.base == "" {
		for _, line := range strings.Split(s.log.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "swapgate serving" && l.Addr != "" {
				s.base = "http://" + l.Addr
			}
		}
		if s.base != "" {
			break
		}
		select {
		case <-s.exited:
			return fmt.Errorf("swapgate serve exited before serving: %v\n%s", s.err, s.log.String())
		case <-ctx.Done():
			return fmt.Errorf("swapgate serve did not serve: %w\n%s", ctx.Err(), s.log.String())
		case <-tick.C:
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("swapgate serve exited before it was ready: %v\n%s", s.err, s.log.String())
		case <-ctx.Done():
			return fmt.Errorf("swapgate serve was not ready (last: %v): %w\n%s", err, ctx.Err(), s.log.String())
		case <-tick.C:
		}
	}
}

// stop ends the child as an operator does, with SIGTERM, and waits for it
// to exit; after 20 s (serve's shutdown takes at most its
// --shutdown-timeout) it is killed. A child that exited on its own, or
// did not stop cleanly, is an error carrying its log.
func (s *server) stop() error {
	select {
	case <-s.exited:
		return fmt.Errorf("swapgate serve exited while the examples ran: %v\n%s", s.err, s.log.String())
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("swapgate serve did not stop within 20 s of SIGTERM; killed\n%s", s.log.String())
	}
	var exit *exec.ExitError
	if s.err != nil && !errors.As(s.err, &exit) {
		return s.err
	}
	if s.err != nil {
		return fmt.Errorf("swapgate serve stopped with %v\n%s", s.err, s.log.String())
	}
	return nil
}
