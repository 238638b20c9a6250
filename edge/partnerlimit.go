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
// Deps, it counts every request made with a partner's key, and Allow's
// RateResult means what the Limiter's does: the limit, what is left of the
// window (as far as this node knows: other nodes may hold part of it), the
// reset, and whether the request is admitted. An error is a count that
// could not be made (the limit's owner unreachable): the request is
// answered INTERNAL_ERROR, neither admitted nor refused. Anonymous
// requests are counted per client IP by the node's own Limiter, cluster or
// not.
type PartnerLimiter interface {
	AllowPartner(ctx context.Context, key RateKey, limit int, now time.Time) (RateResult, error)
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
	if !res.Allowed {
		s.limiter.countRefusal(key.Bucket)
	}
	return res, nil
}

// countRefusal counts a refusal decided outside the limiter's shards (by
// the PartnerLimiter), so that the refusal metrics stay whole: a scrape
// sums the shards, and which shard holds it does not matter.
func (l *Limiter) countRefusal(b Bucket) {
	if int(b) < len(l.shards[0].refused) {
		l.shards[0].refused[b].Add(1)
	}
}
