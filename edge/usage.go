package edge

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// UsageStore keeps partners' hourly request counts; both store backends
// are one. AddUsage adds each count to its (partner, bucket, hour) row,
// creating it at zero, in one durable write: it never overwrites, so that
// every node sharing the store adds its own. UsageSince returns a
// partner's rows of the hours starting at or after since, in any order.
type UsageStore interface {
	AddUsage(ctx context.Context, counts []account.UsageCount) error
	UsageSince(ctx context.Context, partnerID string, since time.Time) ([]account.UsageCount, error)
}

// DefaultUsageFlushInterval is how often the counts in memory go to the
// store: what a crash can lose, and how late another node sharing the
// store sees them.
const DefaultUsageFlushInterval = 5 * time.Second

// usageKey names one pending count: a partner's bucket in one hour (Unix
// seconds of its start).
type usageKey struct {
	partner string
	bucket  Bucket
	hour    int64
}

// usageTally is a pending count.
type usageTally struct{ admitted, refused uint64 }

func (t *usageTally) add(o usageTally) {
	t.admitted += o.admitted
	t.refused += o.refused
}

// countUsage counts one partner request in its hour; the caller holds the
// shard's lock. Once a key is in the map, counting allocates nothing.
func (s *limiterShard) countUsage(key RateKey, now time.Time, admitted bool) {
	k := usageKey{partner: key.Partner, bucket: key.Bucket, hour: account.UsageHourOf(now).Unix()}
	t := s.usage[k]
	if admitted {
		t.admitted++
	} else {
		t.refused++
	}
	s.usage[k] = t
}

// drainUsage moves every shard's pending counts into into, leaving the
// shards empty; each shard is locked only while its map is swapped.
func (l *Limiter) drainUsage(into map[usageKey]usageTally) {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		pending := s.usage
		if len(pending) == 0 {
			// Still the shard's map: reading it past the lock would
			// race with the next count.
			s.mu.Unlock()
			continue
		}
		s.usage = make(map[usageKey]usageTally, len(pending))
		s.mu.Unlock()
		for k, t := range pending {
			sum := into[k]
			sum.add(t)
			into[k] = sum
		}
	}
}

// pendingUsage adds to into the counts of partner still in the shards.
func (l *Limiter) pendingUsage(partner string, into map[usageKey]usageTally) {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for k, t := range s.usage {
			if k.partner == partner {
				sum := into[k]
				sum.add(t)
				into[k] = sum
			}
		}
		s.mu.Unlock()
	}
}

// usageBook flushes the limiter's usage counts to the store every
// interval, and on close, and reads a partner's history back exactly:
// mu is held across a flush and across a read, so that a read sees each
// count once, in the store, in unsaved, or still in the shards.
type usageBook struct {
	store UsageStore
	lim   *Limiter
	log   *slog.Logger
	every time.Duration

	mu sync.Mutex
	// unsaved holds counts drained whose write failed; the next flush
	// writes them with the new ones. It is bounded by the partners,
	// buckets and hours seen while the store refused.
	unsaved map[usageKey]usageTally

	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

func newUsageBook(store UsageStore, lim *Limiter, log *slog.Logger, every time.Duration) *usageBook {
	if every <= 0 {
		every = DefaultUsageFlushInterval
	}
	u := &usageBook{store: store, lim: lim, log: log, every: every, unsaved: map[usageKey]usageTally{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go u.run()
	return u
}

func (u *usageBook) run() {
	defer close(u.stopped)
	tick := time.NewTicker(u.every)
	defer tick.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), 2*u.every+5*time.Second)
			if err := u.flush(ctx); err != nil {
				u.log.Warn("usage counts not stored; kept for the next flush", slog.Any("err", err))
			}
			cancel()
		}
	}
}

// flush writes every count drained so far, and those a failed flush kept.
func (u *usageBook) flush(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lim.drainUsage(u.unsaved)
	if len(u.unsaved) == 0 {
		return nil
	}
	counts := make([]account.UsageCount, 0, len(u.unsaved))
	for k, t := range u.unsaved {
		counts = append(counts, account.UsageCount{PartnerID: k.partner, Bucket: k.bucket.String(),
			Hour: time.Unix(k.hour, 0).UTC(), Admitted: t.admitted, Refused: t.refused})
	}
	if err := u.store.AddUsage(ctx, counts); err != nil {
		return fmt.Errorf("edge: store %d usage counts: %w", len(counts), err)
	}
	clear(u.unsaved)
	return nil
}

// close stops the periodic flush and flushes what is left.
func (u *usageBook) close(ctx context.Context) error {
	u.stopOnce.Do(func() { close(u.stop) })
	<-u.stopped
	return u.flush(ctx)
}

// hourTally is one hour of a partner's usage, by bucket.
type hourTally [BucketRead + 1]usageTally

// history is partner's usage by hour since since (Unix seconds of each
// hour's start): the store's rows plus the counts not stored yet.
func (u *usageBook) history(ctx context.Context, partner string, since time.Time) (map[int64]*hourTally, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rows, err := u.store.UsageSince(ctx, partner, since)
	if err != nil {
		return nil, fmt.Errorf("edge: read usage of %s: %w", partner, err)
	}
	out := map[int64]*hourTally{}
	at := func(hour int64) *hourTally {
		h := out[hour]
		if h == nil {
			h = new(hourTally)
			out[hour] = h
		}
		return h
	}
	for _, r := range rows {
		b := bucketNamed(r.Bucket)
		if b == BucketNone || r.Hour.Before(since) {
			continue
		}
		at(r.Hour.Unix())[b].add(usageTally{admitted: r.Admitted, refused: r.Refused})
	}
	pending := map[usageKey]usageTally{}
	for k, t := range u.unsaved {
		if k.partner == partner {
			pending[k] = t
		}
	}
	u.lim.pendingUsage(partner, pending)
	for k, t := range pending {
		if k.hour >= since.Unix() && k.bucket != BucketNone && int(k.bucket) < len(hourTally{}) {
			at(k.hour)[k.bucket].add(t)
		}
	}
	return out, nil
}

// bucketNamed is the bucket of a usage row's name.
func bucketNamed(name string) Bucket {
	switch name {
	case account.UsageHeavy:
		return BucketHeavy
	case account.UsageRead:
		return BucketRead
	}
	return BucketNone
}

// usageView is the data of GET /v1/partner/usage.
type usageView struct {
	PartnerID     string            `json:"partnerId"`
	WindowSeconds int               `json:"windowSeconds"`
	Buckets       []usageBucketView `json:"buckets"`
	Hours         []usageHourView   `json:"hours"`
}

// usageBucketView is one bucket's window now.
type usageBucketView struct {
	Bucket    string `json:"bucket"`
	Limit     int    `json:"limit"`
	Used      int    `json:"used"`
	Remaining int    `json:"remaining"`
	Reset     int64  `json:"reset"`
}

// usageHourView is one hour's counts by bucket.
type usageHourView struct {
	Hour  int64          `json:"hour"`
	Heavy usageCountView `json:"heavy"`
	Read  usageCountView `json:"read"`
}

type usageCountView struct {
	Admitted uint64 `json:"admitted"`
	Refused  uint64 `json:"refused"`
}

// partnerUsage answers GET /v1/partner/usage: each bucket's window now
// (this request itself already counted in the read bucket) and the last
// 24 hours, oldest first, the current one last, each with the requests
// admitted and refused per bucket. The window is this node's, or in a
// cluster the partner's grain's (Deps.PartnerLimiter). The hours are
// the store's (every node's flushed counts) plus this node's counts not
// flushed yet; another node's reach the store within its flush interval.
func (s *Server) partnerUsage(r *Request) error {
	p := r.Partner
	v := usageView{PartnerID: p.ID, WindowSeconds: int(Window / time.Second)}
	for _, b := range []struct {
		bucket Bucket
		limit  int
	}{{BucketHeavy, p.HeavyPerMin}, {BucketRead, p.ReadPerMin}} {
		rr, used, err := s.peek(r.Context(), RateKey{Bucket: b.bucket, Partner: p.ID}, b.limit, r.Now)
		if err != nil {
			return apierr.New(apierr.ServiceUnavailable, "the rate-limit window is unavailable; retry").Wrap(err)
		}
		v.Buckets = append(v.Buckets, usageBucketView{Bucket: b.bucket.String(), Limit: rr.Limit, Used: used,
			Remaining: rr.Remaining, Reset: rr.Reset})
	}
	last := account.UsageHourOf(r.Now)
	first := last.Add(-(account.UsageHistory - 1) * account.UsageHour)
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	hours, err := s.usage.history(ctx, p.ID, first)
	if err != nil {
		return apierr.New(apierr.ServiceUnavailable, "usage history unavailable; retry").Wrap(err)
	}
	for h := first; !h.After(last); h = h.Add(account.UsageHour) {
		hv := usageHourView{Hour: h.Unix()}
		if t := hours[h.Unix()]; t != nil {
			hv.Heavy = usageCountView{Admitted: t[BucketHeavy].admitted, Refused: t[BucketHeavy].refused}
			hv.Read = usageCountView{Admitted: t[BucketRead].admitted, Refused: t[BucketRead].refused}
		}
		v.Hours = append(v.Hours, hv)
	}
	writeJSON(r, statusOK, v)
	return nil
}
