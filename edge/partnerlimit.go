package edge

import (
	"context"
	"log/slog"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// PartnerLimiter counts partners' requests where one node's memory is not
// the whole count: in a cluster, a partner's limit holds across every node
// (the composition root gives one backed by the partner's grain). Given in
// Deps, it counts every request made with a partner's key, and
// AllowPartner's RateResult means what the Limiter's does: the bucket, the
// limit, what is left of the window (as far as this node knows: other
// nodes may hold part of it), the reset, and whether the request is
// admitted. PeekPartner is the window's state without counting a request
// (for GET /v1/partner/usage), used being what the window has granted to
// the nodes, spent or not. An error is a count that could not be made (the
// limit's owner unreachable): the request is answered INTERNAL_ERROR,
// neither admitted nor refused. Anonymous requests are counted per client
// IP by the node's own Limiter, cluster or not.
type PartnerLimiter interface {
	AllowPartner(ctx context.Context, key RateKey, limit int, now time.Time) (RateResult, error)
	PeekPartner(ctx context.Context, key RateKey, limit int, now time.Time) (res RateResult, used int, err error)
}

// allow counts one request against key: a partner's through
// Deps.PartnerLimiter when there is one, everything else in the node's
// Limiter.
func (s *Server) allow(r *Request, key RateKey, limit int) (RateResult, *apierr.Error) {
	if key.Partner == "" || s.deps.PartnerLimiter == nil {
		return s.limiter.Allow(key, limit, r.Now), nil
	}
	res, err := s.deps.PartnerLimiter.AllowPartner(r.Context(), key, limit, r.Now)
	if err != nil {
		s.log.Error("partner rate limit unavailable", slog.String("requestId", string(r.ID[:])),
			slog.String("partner", key.Partner), slog.String("bucket", key.Bucket.String()), slog.Any("err", err))
		return RateResult{}, apierr.New(apierr.Internal, "the partner's rate limit could not be checked; send the request again")
	}
	res.Bucket = key.Bucket
	s.limiter.countDecided(key, r.Now, res.Allowed)
	return res, nil
}

// peek is the state of a partner's window without counting a request:
// through Deps.PartnerLimiter when there is one, else in the node's
// Limiter.
func (s *Server) peek(ctx context.Context, key RateKey, limit int, now time.Time) (RateResult, int, error) {
	if s.deps.PartnerLimiter == nil {
		res, used := s.limiter.Peek(key, limit, now)
		return res, used, nil
	}
	res, used, err := s.deps.PartnerLimiter.PeekPartner(ctx, key, limit, now)
	res.Bucket = key.Bucket
	return res, used, err
}

// countDecided counts a decision the PartnerLimiter made as Allow counts
// its own, in key's shard and under its lock: a refusal in the refusal
// metrics, and the request in the partner's hourly usage.
func (l *Limiter) countDecided(key RateKey, now time.Time, allowed bool) {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !allowed && int(key.Bucket) < len(s.refused) {
		s.refused[key.Bucket].Add(1)
	}
	if l.countsUsage && key.Partner != "" {
		s.countUsage(key, now, allowed)
	}
}
