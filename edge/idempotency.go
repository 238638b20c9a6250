package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
)

// IdempotencyStore keeps the answers of idempotent requests. The store
// satisfies it. IdempotentAnswer returns the answer remembered under a key,
// expired or not, or account.ErrNotFound; RememberAnswer replaces it and
// returns once the answer would survive a crash.
type IdempotencyStore interface {
	IdempotentAnswer(ctx context.Context, k idempotency.Key) (*idempotency.Record, error)
	RememberAnswer(ctx context.Context, k idempotency.Key, rec *idempotency.Record) error
}

// DefaultIdempotencyWait is how long a request waits for another one with
// the same Idempotency-Key to finish before it is refused as in progress.
// It covers the slowest creating handler (a webhook's URL check may take 5
// seconds) with room to spare.
const DefaultIdempotencyWait = 10 * time.Second

// headerReplayed marks an answer sent again for a repeated Idempotency-Key.
var headerReplayed = []byte("Idempotent-Replayed")

// A route declared idempotent (route.idempotent) accepts the
// Idempotency-Key header; without the header it behaves exactly as any
// other route. With it, the rules of routing/domain/idempotency apply, and the
// edge adds these:
//
//   - The key is checked after authentication and the rate limit: a replay
//     is a request like any other and counts against the caller's bucket.
//     A malformed key, or the header given more than once, is
//     INVALID_PARAMS with details {param: "Idempotency-Key", reason:
//     "malformed"}.
//   - A replay sends the remembered status and body byte for byte, meta
//     included: meta.requestId and meta.timestamp are those of the request
//     that acted, so a client that lost the first answer gets exactly that
//     answer, and X-Request-Id repeats that request's id as it does
//     everywhere, which leads whoever looks it up to the action. The
//     header Idempotent-Replayed: true marks a replay.
//   - A key already answered for another method, path or body is
//     INVALID_PARAMS with details {param: "Idempotency-Key", reason:
//     "conflict"}.
//   - One request per key acts at a time. Another one with the same key
//     waits for it (up to Config.IdempotencyWait, default 10 s) and then
//     replays its answer, conflicts with it, or acts itself if the first
//     one's answer was an error (not remembered). Waiting too long is
//     INVALID_PARAMS with details {param: "Idempotency-Key", reason:
//     "in_progress"}: the contract has no 409, and the request may simply
//     be sent again.
//   - The answer is remembered, synced, before it is sent. The action and
//     the record are two writes: a crash after the action committed and
//     before its answer was recorded loses the record, not the action, and
//     a retry with the same key acts again (for a webhook, a second
//     registration). A record that cannot be written is logged and the
//     answer is still sent, since the action did happen.
//   - Which requests wait for one another is decided in this process's
//     memory, and, in a cluster, by a claim in the shared store
//     (Deps.IdempotencyClaims, idempotency_claims.go), so that the same key
//     sent to two nodes at once acts once; a node that died acting holds
//     its keys until the claim lapses (IdempotencyClaimTTL).

// flights tracks the keys whose request is acting, so that a second request
// with the same key waits instead of acting too.
type flights struct {
	mu sync.Mutex
	m  map[idempotency.Key]chan struct{}
}

// acquire marks k as acting and returns the function that ends it, or, when
// another request holds k, a channel closed once it ends.
func (f *flights) acquire(k idempotency.Key) (release func(), busy <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.m[k]; ok {
		return nil, ch
	}
	if f.m == nil {
		f.m = make(map[idempotency.Key]chan struct{})
	}
	ch := make(chan struct{})
	f.m[k] = ch
	return func() {
		f.mu.Lock()
		delete(f.m, k)
		f.mu.Unlock()
		close(ch)
	}, nil
}

func idempotencyError(reason, message string) *apierr.Error {
	return apierr.Param(idempotency.Header, message).With("reason", reason)
}

// serveIdempotent runs h under the Idempotency-Key rules above. It writes a
// replay itself and returns the errors the wrapper writes.
func (s *Server) serveIdempotent(r *Request, h handlerFunc) error {
	vals := r.Ctx.Request.Header.PeekAll(idempotency.Header)
	switch len(vals) {
	case 0:
		return h(r)
	case 1:
	default:
		return idempotencyError("malformed", idempotency.Header+" must be given once")
	}
	if err := idempotency.ValidKey(vals[0]); err != nil {
		return idempotencyError("malformed", idempotency.Header+" "+err.Error())
	}
	key := string(vals[0]) // before anything else reads a header
	k := idempotency.Key{Scope: s.idempotencyScope(r), Value: key}
	fp := idempotency.FingerprintOf(r.Ctx.Method(), requestTarget(r), r.Ctx.PostBody())
	var timer *time.Timer
	for {
		release, busy := s.flights.acquire(k)
		if release != nil {
			var cerr error
			if release, busy, cerr = s.claimAcrossNodes(r, k, release); cerr != nil {
				return cerr
			}
		}
		stored, err := s.deps.Idempotency.IdempotentAnswer(r.Context(), k)
		switch {
		case errors.Is(err, account.ErrNotFound):
			stored = nil
		case err != nil:
			if release != nil {
				release()
			}
			return fmt.Errorf("edge: read idempotency record: %w", err)
		}
		d := idempotency.Decide(stored, release == nil, fp, r.Now)
		if d != idempotency.Act && release != nil {
			release()
		}
		switch d {
		case idempotency.Replay:
			writeReplay(r, stored)
			return nil
		case idempotency.Conflict:
			return idempotencyError("conflict", "this "+idempotency.Header+
				" was already used for another request (method, path or body); use a new key for a new request")
		case idempotency.InFlight:
			if timer == nil {
				timer = time.NewTimer(s.cfg.IdempotencyWait)
				defer timer.Stop()
			}
			select {
			case <-busy:
				continue
			case <-timer.C:
				return idempotencyError("in_progress", "a request with this "+idempotency.Header+
					" is still in progress; send it again later")
			}
		}
		defer release()
		return s.act(r, h, k, fp)
	}
}

// act serves the request and remembers a success answer before it is sent.
func (s *Server) act(r *Request, h handlerFunc, k idempotency.Key, fp idempotency.Fingerprint) error {
	if err := h(r); err != nil {
		return err
	}
	status := r.Ctx.Response.StatusCode()
	if !idempotency.Remembered(status) {
		return nil
	}
	rec := idempotency.NewRecord(fp, status, r.Ctx.Response.Body(), r.Now)
	rec.RequestID = string(r.ID[:])
	if err := s.deps.Idempotency.RememberAnswer(r.Context(), k, rec); err != nil {
		s.log.Error("remember idempotent answer", slog.String("requestId", string(r.ID[:])),
			slog.String("scope", k.Scope), slog.Any("err", err))
	}
	return nil
}

// idempotencyScope is whose keys a request's key is among: its partner's,
// or, anonymous, its client IP's.
func (s *Server) idempotencyScope(r *Request) string {
	if r.Partner != nil {
		return idempotency.PartnerScope(r.Partner.ID)
	}
	return idempotency.ClientScope(s.clientIP(r.Ctx))
}

// requestTarget is the request's path and, if it has one, its query
// string: what the fingerprint counts as the request's address.
func requestTarget(r *Request) []byte {
	path, q := r.Ctx.Path(), r.Ctx.URI().QueryString()
	if len(q) == 0 {
		return path
	}
	t := make([]byte, 0, len(path)+1+len(q))
	t = append(t, path...)
	t = append(t, '?')
	return append(t, q...)
}
