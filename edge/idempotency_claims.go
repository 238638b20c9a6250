package edge

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/swapgate/swapgate/routing/domain/idempotency"
)

// IdempotencyClaims makes one request per Idempotency-Key act at a time
// across the processes that share the store (the nodes of a cluster), as
// the edge's own flights do within one process. ClaimIdempotencyKey
// reports whether this node now holds the key's claim (false while another
// node's live claim holds it); a claim lapses after ttl, so that a node
// that died acting frees its keys; ReleaseIdempotencyKey ends this node's
// claim. The PostgreSQL store satisfies it.
//
// A claim is not fenced by a partner grain's epoch: keys are scoped by
// client IP as well as by partner, and the claim's own condition (one live
// claim per key, in one statement) is already the fence.
type IdempotencyClaims interface {
	ClaimIdempotencyKey(ctx context.Context, k idempotency.Key, ttl time.Duration) (bool, error)
	ReleaseIdempotencyKey(ctx context.Context, k idempotency.Key) error
}

// IdempotencyClaimTTL is how long a claim holds a key: well past
// Config.IdempotencyWait, so that no request still acting loses its claim,
// and short enough that a dead node's keys are free again within a minute.
const IdempotencyClaimTTL = 30 * time.Second

// idempotencyClaimPoll is how often a request whose key another node
// claimed looks again for that node's answer: that node cannot wake it.
const idempotencyClaimPoll = 50 * time.Millisecond

// claimAcrossNodes takes the store's claim of k for a request that holds
// k's flight in this process. With the claim, the release it returns ends
// both; without it (another node acts), the flight is released and busy
// fires after a poll interval, so that the request reads the answer again,
// as it would after a request of its own process. Without
// Deps.IdempotencyClaims it returns release as it is.
func (s *Server) claimAcrossNodes(r *Request, k idempotency.Key, release func()) (func(), <-chan struct{}, error) {
	claims := s.deps.IdempotencyClaims
	if claims == nil {
		return release, nil, nil
	}
	ok, err := claims.ClaimIdempotencyKey(r.Context(), k, IdempotencyClaimTTL)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("edge: claim idempotency key: %w", err)
	}
	if !ok {
		release()
		busy := make(chan struct{})
		time.AfterFunc(idempotencyClaimPoll, func() { close(busy) })
		return nil, busy, nil
	}
	return func() {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := claims.ReleaseIdempotencyKey(ctx, k); err != nil {
			// The claim lapses on its own after IdempotencyClaimTTL.
			s.log.Warn("release idempotency claim", slog.String("scope", k.Scope), slog.Any("err", err))
		}
		release()
	}, nil, nil
}
