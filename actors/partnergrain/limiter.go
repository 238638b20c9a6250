package partnergrain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/routing/domain/partnerquota"
)

// Caller reaches a grain (cluster.Node does).
type Caller interface {
	Call(ctx context.Context, kind, identity, method string, body []byte) ([]byte, error)
}

// LimiterConfig is a node's partner limiter.
type LimiterConfig struct {
	Caller Caller
	// Self names this node to the grains (its cluster address).
	Self string
	// Timeout bounds one acquire, retries included (default 5 s).
	Timeout time.Duration
	// Now is the clock; nil means time.Now.
	Now     func() time.Time
	Metrics *Metrics
}

// Limiter admits a partner's requests on this node from the blocks its
// grain grants (see the package comment), and holds the node's lease of
// each partner's grain: the latest epoch an answer carried.
type Limiter struct {
	cfg    LimiterConfig
	prefix string
	seq    atomic.Uint64

	mu     sync.Mutex
	slots  map[slotKey]*slot
	epochs map[string]int64
}

type slotKey struct{ partner, bucket string }

// slot is one (partner, bucket) on this node: the block being spent, until
// when it counts (this node's clock), what the grain said remained
// ungranted, a refusal kept until reset, and the acquire in flight.
type slot struct {
	mu        sync.Mutex
	limit     int
	left      int
	reset     time.Time
	remaining int
	refused   bool
	inflight  chan struct{}
}

// Admission is what Admit decided: whether the request is admitted, the
// limit, what is left of the window as far as this node knows (its block
// and what the grain had not granted yet when it last asked; other nodes'
// blocks may hold part of it), and when the window resets.
type Admission struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Time
}

// NewLimiter returns a limiter that asks grains through cfg.Caller.
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	return &Limiter{cfg: cfg, prefix: cfg.Self + "/" + hex.EncodeToString(nonce[:]) + "/",
		slots: map[slotKey]*slot{}, epochs: map[string]int64{}}
}

func (l *Limiter) slot(partner, bucket string) *slot {
	k := slotKey{partner, bucket}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slots[k]
	if s == nil {
		s = &slot{}
		l.slots[k] = s
	}
	return s
}

// Admit counts one request of partner's bucket against limit at now: from
// the node's block while it lasts, otherwise after an acquire (one at a
// time per key: the others wait for it). It fails only when the grain
// cannot be reached within the limiter's timeout or ctx ends.
func (l *Limiter) Admit(ctx context.Context, partner, bucket string, limit int, now time.Time) (Admission, error) {
	s := l.slot(partner, bucket)
	for {
		s.mu.Lock()
		if s.limit != limit {
			// The operator changed the partner's limit: what was decided
			// under the old one no longer refuses.
			s.limit, s.refused = limit, false
		}
		if now.Before(s.reset) {
			if s.left > 0 {
				s.left--
				a := Admission{Allowed: true, Limit: limit, Remaining: s.left + s.remaining, Reset: s.reset}
				s.mu.Unlock()
				l.cfg.Metrics.localAdmits.Add(1)
				return a, nil
			}
			if s.refused {
				a := Admission{Limit: limit, Reset: s.reset}
				s.mu.Unlock()
				return a, nil
			}
		}
		if ch := s.inflight; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return Admission{}, fmt.Errorf("partnergrain: admit %s/%s: %w", partner, bucket, ctx.Err())
			}
		}
		ch := make(chan struct{})
		s.inflight = ch
		s.mu.Unlock()

		sent := l.cfg.Now()
		ans, err := l.acquire(ctx, partner, bucket, limit, limit)

		s.mu.Lock()
		s.inflight = nil
		close(ch)
		if err != nil {
			s.mu.Unlock()
			return Admission{}, err
		}
		// The window ends for this node when it ends for the grain,
		// counted from when the acquire was sent: never later.
		s.reset = sent.Add(time.Duration(ans.ResetIn))
		s.remaining = ans.Remaining
		s.left = ans.Granted
		s.refused = ans.Granted == 0
		a := Admission{Limit: limit, Reset: s.reset}
		if s.left > 0 {
			// This request takes the block's first admission.
			s.left--
			a.Allowed, a.Remaining = true, s.left+s.remaining
		}
		s.mu.Unlock()
		return a, nil
	}
}

// Peek is partner's bucket window without counting a request: an acquire
// wanting nothing, answered by the grain. Remaining is what the grain has
// not granted plus this node's block; used is what the window granted to
// the nodes, spent or not. With no window running, nothing is used and a
// window opened now would reset a Window later.
func (l *Limiter) Peek(ctx context.Context, partner, bucket string, limit int, now time.Time) (a Admission, used int, err error) {
	ans, err := l.acquire(ctx, partner, bucket, limit, 0)
	if err != nil {
		return Admission{}, 0, err
	}
	if ans.ResetIn <= 0 {
		return Admission{Allowed: limit > 0, Limit: limit, Remaining: limit, Reset: now.Add(partnerquota.Window)}, 0, nil
	}
	s := l.slot(partner, bucket)
	s.mu.Lock()
	left := 0
	if now.Before(s.reset) {
		left = s.left
	}
	s.mu.Unlock()
	remaining := min(limit, ans.Remaining+left)
	return Admission{Allowed: remaining > 0, Limit: limit, Remaining: remaining, Reset: now.Add(time.Duration(ans.ResetIn))},
		max(0, limit-ans.Remaining-left), nil
}

// acquire asks partner's grain for want admissions of bucket and records
// the epoch of its answer.
func (l *Limiter) acquire(ctx context.Context, partner, bucket string, limit, want int) (AcquireAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	l.cfg.Metrics.acquires.Add(1)
	body, err := json.Marshal(AcquireRequest{Bucket: bucket, Limit: limit, Want: want, Requester: l.cfg.Self,
		RequestID: l.prefix + fmt.Sprint(l.seq.Add(1))})
	if err != nil {
		return AcquireAnswer{}, err
	}
	out, err := l.cfg.Caller.Call(ctx, KindName, partner, MethodAcquire, body)
	if err != nil {
		l.cfg.Metrics.acquireFailures.Add(1)
		return AcquireAnswer{}, fmt.Errorf("partnergrain: acquire %s/%s: %w", partner, bucket, err)
	}
	var ans AcquireAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		l.cfg.Metrics.acquireFailures.Add(1)
		return AcquireAnswer{}, fmt.Errorf("partnergrain: acquire %s/%s: answer: %w", partner, bucket, err)
	}
	l.mu.Lock()
	if ans.Epoch > l.epochs[partner] {
		l.epochs[partner] = ans.Epoch
	}
	l.mu.Unlock()
	return ans, nil
}

// Epoch is the epoch this node's lease of partner's grain carries: the
// latest an answer carried, or, when none did yet, a refreshed one.
func (l *Limiter) Epoch(ctx context.Context, partner string) (int64, error) {
	l.mu.Lock()
	e, ok := l.epochs[partner]
	l.mu.Unlock()
	if ok {
		return e, nil
	}
	return l.Refresh(ctx, partner)
}

// Refresh renews the lease of partner's grain: an acquire wanting nothing,
// answered by the grain's current activation with its epoch.
func (l *Limiter) Refresh(ctx context.Context, partner string) (int64, error) {
	ans, err := l.acquire(ctx, partner, leaseBucket, 0, 0)
	if err != nil {
		return 0, err
	}
	return ans.Epoch, nil
}

// leaseBucket is the bucket a lease refresh names: any would do, as it
// asks for nothing.
const leaseBucket = "heavy"
