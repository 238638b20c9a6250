// Package actors holds the actor topology of Swapgate: the actor system and
// the small helpers its actors share. Message flows here avoid protoactor's
// RequestFuture, whose futures race under the race detector (upstream issues
// 1139 and 1145): a request instead carries its own reply channel, which the
// answering actor fills without ever blocking.
package actors

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// NewSystem returns an actor system that logs through slog.Default, keeping
// only warnings and errors: protoactor reports every dead letter and every
// start-up at info level, which in a service that drops late answers on
// purpose is noise, not signal.
func NewSystem() *actor.ActorSystem {
	return NewSystemWithLogger(slog.Default())
}

// NewSystemWithLogger is NewSystem with an explicit base logger, so that the
// binary can route protoactor's warnings into its own JSON log stream and
// tests can capture them.
func NewSystemWithLogger(base *slog.Logger) *actor.ActorSystem {
	logger := slog.New(minLevelHandler{min: slog.LevelWarn, next: base.Handler()}).
		With(slog.String("lib", "protoactor"))
	return actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }),
		// Late replies to requests are expected (races are decided by
		// deadline), so their dead letters are not even considered for logging.
		actor.WithDeadLetterRequestLogging(false),
	)
}

// minLevelHandler drops records below min before they reach next, whatever
// level next itself would accept.
type minLevelHandler struct {
	min  slog.Level
	next slog.Handler
}

func (h minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.next.Enabled(ctx, l)
}

func (h minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{min: h.min, next: h.next.WithAttrs(attrs)}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{min: h.min, next: h.next.WithGroup(name)}
}

// Reply is a one-shot answer channel carried inside a request message. It
// replaces RequestFuture: the requester waits on the channel with its own
// context, and the actor answers with Send, which never blocks even when the
// requester has already given up.
type Reply[T any] chan T

// NewReply returns a Reply with room for exactly one answer.
func NewReply[T any]() Reply[T] { return make(Reply[T], 1) }

// Send delivers the answer. A second answer, or an answer to a Reply nobody
// reads any more, is dropped rather than blocking the actor's mailbox.
func (r Reply[T]) Send(v T) {
	select {
	case r <- v:
	default:
	}
}

// Wait returns the answer, or the context's error when it ends first.
func (r Reply[T]) Wait(ctx context.Context) (T, error) {
	select {
	case v := <-r:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("actors: waiting for reply: %w", ctx.Err())
	}
}

// Every sends msg to pid every interval from a goroutine of its own, so that
// an actor gets periodic work as ordinary messages in its mailbox. The
// returned stop function ends the goroutine and waits for it; it is safe to
// call more than once. Actors call Every on Started and stop on Stopping.
func Every(root *actor.RootContext, pid *actor.PID, interval time.Duration, msg any) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				root.Send(pid, msg)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
