package webhook

import (
	"math/rand/v2"
	"time"
)

// Default retry schedule: base 30 s doubling, 8 attempts. A failed delivery
// is retried with exponential backoff and jitter, about 8 attempts over about
// an hour, before it is dead-lettered: the seven waits between attempts add
// up to 30 s × (2^7 − 1) = 63.5 minutes.
const (
	DefaultRetryBase   = 30 * time.Second
	DefaultMaxAttempts = 8
	// DefaultJitter spreads retries ±20 % so that receivers recovering from
	// an outage are not hit by every queued delivery in the same second.
	DefaultJitter = 0.2
)

// Backoff is a retry schedule: the wait after failed attempt n (1-based) is
// Base × 2^(n−1), scaled by a random factor in [1−Jitter, 1+Jitter]; after
// MaxAttempts failures the delivery is dead.
type Backoff struct {
	Base        time.Duration
	MaxAttempts int
	Jitter      float64
	// Rand returns a uniform value in [0, 1); nil means math/rand/v2.
	Rand func() float64
}

// Next returns the wait before the attempt after failed attempt n, and false
// when n was the last attempt allowed (the delivery is dead-lettered).
func (b Backoff) Next(n int) (time.Duration, bool) {
	if n < 1 {
		n = 1
	}
	if n >= b.MaxAttempts {
		return 0, false
	}
	shift := min(n-1, 30) // 2^30 × any sane base already exceeds any useful wait.
	d := float64(b.Base) * float64(int64(1)<<shift)
	if b.Jitter > 0 {
		r := b.Rand
		if r == nil {
			r = rand.Float64
		}
		d *= 1 - b.Jitter + 2*b.Jitter*r()
	}
	return time.Duration(d), true
}
