package main

import (
	"bytes"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rawGet sends one GET over a fresh connection and returns the response
// exactly as it came off the socket.
func rawGet(t *testing.T, addr, path string) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\nUser-Agent: bench-test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	maskDate      = regexp.MustCompile(`(?m)^Date: .*\r$`)
	maskUUID      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	maskTimestamp = regexp.MustCompile(`"timestamp":\d+`)
)

// masked replaces what differs between any two answers (the date, the
// request id, the Unix time) by placeholders.
func masked(b []byte) string {
	b = maskDate.ReplaceAll(b, []byte("Date: DATE\r"))
	b = maskUUID.ReplaceAll(b, []byte("UUID"))
	b = maskTimestamp.ReplaceAll(b, []byte(`"timestamp":TS`))
	return string(b)
}

// TestBenchBareAnswersSwapgatesPingBytes compares the bare server's ping
// with a real Swapgate's, started in-process in sandbox mode: status line,
// every header (Server, Date, Content-Type, Content-Length, X-Request-Id)
// in the same order, and the body, byte for byte once the request id, the
// date and the Unix time are masked.
func TestBenchBareAnswersSwapgatesPingBytes(t *testing.T) {
	ts := startServer(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newBareServer("sandbox")
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	real := rawGet(t, strings.TrimPrefix(ts.base, "http://"), "/v1/ping")
	bare := rawGet(t, ln.Addr().String(), "/v1/ping")
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "\r\nServer: swapgate\r\n", "\r\nContent-Type: application/json\r\n", "\r\nX-Request-Id: ", "\r\nContent-Length: "} {
		if !bytes.Contains(real, []byte(want)) {
			t.Fatalf("Swapgate's ping lacks %q; the comparison is moot:\n%s", want, real)
		}
	}
	if masked(real) != masked(bare) {
		t.Fatalf("bare answer differs from Swapgate's\nSwapgate:\n%s\nbare:\n%s", real, bare)
	}
	if len(real) != len(bare) {
		t.Fatalf("lengths differ: Swapgate %d bytes, bare %d", len(real), len(bare))
	}
}

func TestBenchBareRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{{"--addr", "10.0.0.1:8081"}, {"--addr", "0.0.0.0:8081"}, {"--mode", "prod"}} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"bench-bare"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench-bare", "-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "-addr") {
		t.Fatalf("help: exit %d\n%s", code, stdout.String())
	}
}
