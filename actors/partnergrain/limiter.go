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
	// ReleaseEvery is how often Run gives back the rest of blocks whose
	// lease ended (default 250 ms).
	ReleaseEvery time.Duration
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

// slot is one (partner, bucket) on this node: the limit it was decided
// under, the block being spent and the window it is of, until when the
// window counts (this node's clock) and until when the block may be spent,
// what the grain said remained ungranted, a refusal kept until the grain
// may grant again, and the acquire (or release) in flight.
type slot struct {
	mu        sync.Mutex
	limit     int
	left      int
	window    int64
	reset     time.Time
	expires   time.Time
	remaining int
	retry     time.Time
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
	if cfg.ReleaseEvery <= 0 {
		cfg.ReleaseEvery = 250 * time.Millisecond
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
// the node's block while its lease lasts, otherwise after an acquire (one
// at a time per key: the others wait for it). A limit other than the one
// the slot was decided under (the operator changed it) drops the block
// and the refusal: the acquire gives the block back and the grain decides
// again under the new limit. It fails only when the grain cannot be
// reached within the limiter's timeout or ctx ends.
func (l *Limiter) Admit(ctx context.Context, partner, bucket string, limit int, now time.Time) (Admission, error) {
	s := l.slot(partner, bucket)
	for {
		s.mu.Lock()
		if s.limit == limit {
			if s.left > 0 && now.Before(s.expires) {
				s.left--
				a := Admission{Allowed: true, Limit: limit, Remaining: s.left + s.remaining, Reset: s.reset}
				s.mu.Unlock()
				l.cfg.Metrics.localAdmits.Add(1)
				return a, nil
			}
			if s.left == 0 && now.Before(s.retry) {
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
		// Whatever is left of the block (its lease ended, or it was granted
		// under another limit) goes back with the acquire, and is never
		// spent here again, whatever the answer.
		back, backWindow := s.left, s.window
		s.left, s.retry, s.limit = 0, time.Time{}, limit
		ch := make(chan struct{})
		s.inflight = ch
		s.mu.Unlock()

		sent := l.cfg.Now()
		ans, err := l.acquire(ctx, AcquireRequest{Bucket: bucket, Limit: limit, Want: limit, Return: back, ReturnWindow: backWindow}, partner)

		s.mu.Lock()
		s.inflight = nil
		close(ch)
		if err != nil {
			s.mu.Unlock()
			return Admission{}, err
		}
		if ans.Granted > 0 && ans.ResetIn <= 0 {
			// The first answer of an acquire retried past its window's
			// end: that block is of no use now; ask again.
			s.mu.Unlock()
			continue
		}
		// The window ends for this node when it ends for the grain,
		// counted from when the acquire was sent: never later; so does the
		// block's lease, and a refusal holds until the grain may grant
		// again.
		s.reset = sent.Add(time.Duration(ans.ResetIn))
		s.expires = s.reset
		if ans.Lease > 0 {
			s.expires = minTime(s.reset, sent.Add(time.Duration(ans.Lease)))
		}
		s.window = ans.WindowStart
		s.remaining = ans.Remaining
		s.left = ans.Granted
		if ans.Granted == 0 {
			s.retry = s.reset
			if ans.RetryIn > 0 {
				s.retry = minTime(s.reset, sent.Add(time.Duration(ans.RetryIn)))
			}
		}
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

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Run gives back, every ReleaseEvery until ctx ends, what is left of the
// blocks whose lease ended (ReleaseExpired): a node whose traffic of a
// partner stops returns its rest to the window instead of sitting on it.
func (l *Limiter) Run(ctx context.Context) {
	t := time.NewTicker(l.cfg.ReleaseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.ReleaseExpired(ctx)
		}
	}
}

// ReleaseExpired gives each block whose lease ended at the limiter's now
// back to its grain (an acquire wanting nothing, returning the rest), while
// its window runs; the slot spends none of it from then on. A release that
// fails loses the rest to the window: never admitted twice.
func (l *Limiter) ReleaseExpired(ctx context.Context) {
	now := l.cfg.Now()
	l.mu.Lock()
	keys := make([]slotKey, 0, len(l.slots))
	slots := make([]*slot, 0, len(l.slots))
	for k, s := range l.slots {
		keys = append(keys, k)
		slots = append(slots, s)
	}
	l.mu.Unlock()
	for i, s := range slots {
		s.mu.Lock()
		if s.inflight != nil || s.left == 0 || now.Before(s.expires) {
			s.mu.Unlock()
			continue
		}
		back, window, limit, live := s.left, s.window, s.limit, now.Before(s.reset)
		s.left = 0
		if !live {
			s.mu.Unlock()
			continue
		}
		ch := make(chan struct{})
		s.inflight = ch
		s.mu.Unlock()
		_, _ = l.acquire(ctx, AcquireRequest{Bucket: keys[i].bucket, Limit: limit, Return: back, ReturnWindow: window}, keys[i].partner)
		s.mu.Lock()
		s.inflight = nil
		close(ch)
		s.mu.Unlock()
	}
}

// Peek is partner's bucket window without counting a request: an acquire
// wanting nothing, answered by the grain. Remaining is what the grain has
// not granted plus this node's block; used is what the window granted to
// the nodes, spent or not. With no window running, nothing is used and a
// window opened now would reset a Window later.
func (l *Limiter) Peek(ctx context.Context, partner, bucket string, limit int, now time.Time) (a Admission, used int, err error) {
	ans, err := l.acquire(ctx, AcquireRequest{Bucket: bucket, Limit: limit}, partner)
	if err != nil {
		return Admission{}, 0, err
	}
	if ans.ResetIn <= 0 {
		return Admission{Allowed: limit > 0, Limit: limit, Remaining: limit, Reset: now.Add(partnerquota.Window)}, 0, nil
	}
	s := l.slot(partner, bucket)
	s.mu.Lock()
	left := 0
	if now.Before(s.expires) {
		left = s.left
	}
	s.mu.Unlock()
	remaining := min(limit, ans.Remaining+left)
	return Admission{Allowed: remaining > 0, Limit: limit, Remaining: remaining, Reset: now.Add(time.Duration(ans.ResetIn))},
		max(0, limit-ans.Remaining-left), nil
}

// acquire sends req (its requester and request id set here) to partner's
// grain and records the epoch of its answer.
func (l *Limiter) acquire(ctx context.Context, req AcquireRequest, partner string) (AcquireAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	l.cfg.Metrics.acquires.Add(1)
	req.Requester, req.RequestID = l.cfg.Self, l.prefix+fmt.Sprint(l.seq.Add(1))
	body, err := json.Marshal(req)
	if err != nil {
		return AcquireAnswer{}, err
	}
	out, err := l.cfg.Caller.Call(ctx, KindName, partner, MethodAcquire, body)
	if err != nil {
		l.cfg.Metrics.acquireFailures.Add(1)
		return AcquireAnswer{}, fmt.Errorf("partnergrain: acquire %s/%s: %w", partner, req.Bucket, err)
	}
	var ans AcquireAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		l.cfg.Metrics.acquireFailures.Add(1)
		return AcquireAnswer{}, fmt.Errorf("partnergrain: acquire %s/%s: answer: %w", partner, req.Bucket, err)
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
	ans, err := l.acquire(ctx, AcquireRequest{Bucket: leaseBucket}, partner)
	if err != nil {
		return 0, err
	}
	return ans.Epoch, nil
}

// leaseBucket is the bucket a lease refresh names: any would do, as it
// asks for nothing.
const leaseBucket = "heavy"
