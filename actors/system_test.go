package actors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"
)

// captureHandler records every record it is asked to handle.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

func (h *captureHandler) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.records))
	for _, r := range h.records {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

func TestNewSystemWithLoggerKeepsOnlyWarnings(t *testing.T) {
	h := &captureHandler{}
	sys := NewSystemWithLogger(slog.New(h))
	defer sys.Shutdown()

	// A message to a PID that does not exist is a dead letter, which
	// protoactor logs at info level.
	sys.Root.Send(sys.NewLocalPID("nobody"), "hello")
	sys.Logger().Info("info from the library")
	sys.Logger().Warn("warning from the library")

	// Dead letters are published synchronously, so by now any log line
	// they would cause has been written.
	got := h.messages()
	if len(got) != 1 || got[0] != "WARN warning from the library" {
		t.Fatalf("captured %q, want only the warning", got)
	}
}

func TestReply(t *testing.T) {
	tests := []struct {
		name    string
		send    []int
		timeout time.Duration
		want    int
		wantErr error
	}{
		{name: "answered", send: []int{7}, timeout: time.Second, want: 7},
		{name: "second answer dropped", send: []int{1, 2}, timeout: time.Second, want: 1},
		{name: "no answer", timeout: 10 * time.Millisecond, wantErr: context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReply[int]()
			for _, v := range tc.send {
				r.Send(v) // must never block
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			got, err := r.Wait(ctx)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

type ping struct{}

// counter counts pings and answers count requests through a Reply.
type counter struct{ n int }

type countRequest struct{ reply Reply[int] }

func (c *counter) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case ping:
		c.n++
	case countRequest:
		m.reply.Send(c.n)
	}
}

func TestEverySendsUntilStopped(t *testing.T) {
	// Goroutines of earlier tests (protoactor's dead-letter throttle lives
	// for a second) are not this test's leaks.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sys := NewSystemWithLogger(slog.New(&captureHandler{}))
	defer sys.Shutdown()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &counter{} }))

	stop := Every(sys.Root, pid, 5*time.Millisecond, ping{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		req := countRequest{reply: NewReply[int]()}
		sys.Root.Send(pid, req)
		n, err := req.reply.Wait(ctx)
		if err != nil {
			t.Fatalf("count: %v", err)
		}
		if n >= 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	stop() // idempotent

	// After stop no tick may arrive any more.
	before := countOf(t, sys, pid)
	time.Sleep(30 * time.Millisecond)
	if after := countOf(t, sys, pid); after != before {
		t.Fatalf("ticks after stop: %d -> %d", before, after)
	}
	sys.Root.Stop(pid)
}

func countOf(t *testing.T, sys *actor.ActorSystem, pid *actor.PID) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := countRequest{reply: NewReply[int]()}
	sys.Root.Send(pid, req)
	n, err := req.reply.Wait(ctx)
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	return n
}
