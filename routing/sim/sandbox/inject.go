package sandbox

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Inject plays the tool's configured misbehaviour before it prices a route:
// latency (cut short by ctx), a hang until ctx is done, a panic, or a
// deterministic failure. A nil return means the tool answers.
func (m *Market) Inject(ctx context.Context, quoteID string, t *tools.Tool) error {
	tc := m.cfg.Tools[t.Key]
	if tc.LatencyMs > 0 {
		timer := time.NewTimer(time.Duration(tc.LatencyMs) * time.Millisecond)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("sandbox: %s: waiting out latency: %w", t.Key, ctx.Err())
		}
	}
	if tc.Hang {
		<-ctx.Done()
		return fmt.Errorf("sandbox: %s: hung: %w", t.Key, ctx.Err())
	}
	if tc.Panic {
		panic(fmt.Sprintf("sandbox: %s: injected panic", t.Key))
	}
	if Fails(quoteID, t.Key, tc.FailureRate) {
		return apierr.New(apierr.UpstreamError, fmt.Sprintf("%s failed to quote (sandbox failure injection)", t.Name)).
			With("tool", t.Key)
	}
	return ctx.Err()
}

// Fails reports whether a tool with the given failure rate fails the quote:
// the first eight bytes of keccak256(quoteID + "/" + tool), read as a
// fraction of 2^64, are compared with rate. The same quote id and tool always
// decide the same way.
func Fails(quoteID, tool string, rate float64) bool {
	if rate <= 0 {
		return false
	}
	if rate >= 1 {
		return true
	}
	sum := crypto.Keccak256([]byte(quoteID + "/" + tool))
	u := float64(binary.BigEndian.Uint64(sum[:8])) / (1 << 64)
	return u < rate
}
