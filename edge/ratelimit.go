package edge

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket is the rate-limit class of an endpoint: heavy (quote, routes,
// execute, status) or read (reference data, ping, partner endpoints).
type Bucket uint8

// Buckets. BucketNone endpoints count against nothing.
const (
	BucketNone Bucket = iota
	BucketHeavy
	BucketRead
)

// String names the bucket as metrics label it.
func (b Bucket) String() string {
	switch b {
	case BucketHeavy:
		return "heavy"
	case BucketRead:
		return "read"
	}
	return "none"
}

// Window is the length of a rate-limit window.
const Window = 60 * time.Second

// RateResult is what one Allow call decided, and what meta.rateLimit shows.
type RateResult struct {
	// Bucket is the bucket the request counted against.
	Bucket    Bucket
	Limit     int
	Remaining int
	Reset     int64 // Unix seconds when the window resets
	Allowed   bool
}

// Limiter counts requests in fixed 60-second windows that start with a key's
// first request. Counting is exact under concurrency: each key lives in one
// shard whose mutex serialises its check-and-increment, so in one window
// exactly limit requests pass however many goroutines race. Keys whose
// windows have ended are swept, at most once a window per shard, so anonymous traffic
// from many addresses does not grow memory without bound.
type Limiter struct {
	seed   maphash.Seed
	shards [64]limiterShard
	// countsUsage makes Allow count partners' requests by hour for
	// usage.go; set before the first Allow, when a usage store is given,
	// since nothing drains the counts otherwise.
	countsUsage bool
}

type limiterShard struct {
	mu        sync.Mutex
	windows   map[RateKey]*window
	lastSweep time.Time
	// refused counts the requests refused, by bucket. Counted in the
	// shard, under its lock, it costs no contention beyond the lock the
	// request already took; a scrape sums the shards.
	refused [BucketRead + 1]atomic.Uint64
	// usage counts partners' requests, admitted and refused, by bucket
	// and hour, under the same lock, until usage.go's flusher drains
	// them into the store; anonymous keys are not counted here.
	usage map[usageKey]usageTally
}

// RateKey names one counter: a bucket of one partner, or of one client IP
// on the anonymous tier. It is a comparable value, so counting a request
// allocates nothing.
type RateKey struct {
	Bucket  Bucket
	Partner string
	IP      netip.Addr
}

type window struct {
	start time.Time
	count int
}

// NewLimiter returns an empty limiter.
func NewLimiter() *Limiter {
	l := &Limiter{seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].windows = make(map[RateKey]*window)
		l.shards[i].usage = make(map[usageKey]usageTally)
	}
	return l
}

// Allow counts one request for key against limit at time now. Its
// RateResult is the decision: whether the request passes, and the limit,
// remaining count and reset that meta.rateLimit and the RateLimit headers
// (ratelimit_headers.go) read from it and from nothing else.
func (l *Limiter) Allow(key RateKey, limit int, now time.Time) RateResult {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) >= Window {
		s.sweep(now)
		s.lastSweep = now
	}
	w, ok := s.windows[key]
	if !ok || now.Sub(w.start) >= Window {
		if !ok {
			w = &window{}
			s.windows[key] = w
		}
		w.start, w.count = now, 0
	}
	res := RateResult{Bucket: key.Bucket, Limit: limit, Reset: w.start.Add(Window).Unix()}
	if w.count >= limit {
		if int(key.Bucket) < len(s.refused) {
			s.refused[key.Bucket].Add(1)
		}
		if l.countsUsage && key.Partner != "" {
			s.countUsage(key, now, false)
		}
		return res
	}
	w.count++
	res.Allowed = true
	res.Remaining = limit - w.count
	if l.countsUsage && key.Partner != "" {
		s.countUsage(key, now, true)
	}
	return res
}

// Peek is the state of key's window at now without counting a request:
// what Allow would report as limit, remaining and reset, and how many
// requests the window admitted. With no window open, nothing is used and
// a window opened now would reset a Window later.
func (l *Limiter) Peek(key RateKey, limit int, now time.Time) (res RateResult, used int) {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.windows[key]
	if !ok || now.Sub(w.start) >= Window {
		return RateResult{Bucket: key.Bucket, Limit: limit, Remaining: limit, Reset: now.Add(Window).Unix(), Allowed: limit > 0}, 0
	}
	return RateResult{Bucket: key.Bucket, Limit: limit, Remaining: max(limit-w.count, 0), Reset: w.start.Add(Window).Unix(),
		Allowed: w.count < limit}, w.count
}

// shard is the shard that owns key.
func (l *Limiter) shard(key RateKey) *limiterShard {
	return &l.shards[maphash.Comparable(l.seed, key)%uint64(len(l.shards))]
}

// Refusals is how many requests of bucket b were refused so far.
func (l *Limiter) Refusals(b Bucket) uint64 {
	if int(b) >= len(l.shards[0].refused) {
		return 0
	}
	var n uint64
	for i := range l.shards {
		n += l.shards[i].refused[b].Load()
	}
	return n
}

func (s *limiterShard) sweep(now time.Time) {
	for k, w := range s.windows {
		if now.Sub(w.start) >= Window {
			delete(s.windows, k)
		}
	}
}
