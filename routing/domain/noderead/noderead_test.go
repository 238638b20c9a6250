package noderead

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// hang is a node that never answers: it returns when its context ends.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestReadTellsTheNodesTimeoutFromOtherFailures: a read the node did not
// answer within the timeout is ErrTimeout and UPSTREAM_TIMEOUT; a node's
// error, and a caller's deadline ending first, are RPC_FAILURE.
func TestReadTellsTheNodesTimeoutFromOtherFailures(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		name     string
		caller   time.Duration // the caller's own deadline (0: none)
		timeout  time.Duration
		read     func(context.Context) error
		timedOut bool
		code     string
	}{
		{"node never answers", 0, 20 * time.Millisecond, hang, true, apierr.UpstreamTimeout},
		{"node errors", 0, time.Minute, func(context.Context) error { return refused }, false, apierr.RPCFailure},
		{"caller's deadline first", 20 * time.Millisecond, time.Minute, hang, false, apierr.RPCFailure},
		{"answered", 0, time.Minute, func(context.Context) error { return nil }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.caller)
				defer cancel()
			}
			err := Read(ctx, tt.timeout, tt.read)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if got := errors.Is(err, ErrTimeout); got != tt.timedOut {
				t.Errorf("errors.Is(%v, ErrTimeout) = %v, want %v", err, got, tt.timedOut)
			}
			if got := Failure("read failed", err); got.Code != tt.code || !errors.Is(got, err) {
				t.Errorf("Failure = %s (%v), want %s keeping the cause", got.Code, got.Cause, tt.code)
			}
		})
	}
}
