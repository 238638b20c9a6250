// Package breaker is the circuit breaker of one provider leg (a provider
// and tool): the rule that stops sending a leg whose recent calls mostly
// failed or timed out, so that a dead upstream stops costing every quote
// its deadline, and lets it back once a probe succeeds.
//
// A breaker judges the last Window calls it was told of. Closed, it lets
// every call through; once at least MinCalls are in the window and the
// share of failures reaches FailureRatio, it opens: calls are refused for
// CoolDown. Then it is half-open: the next call is let through as a probe
// and every other one refused until the probe is judged; a success closes
// the breaker with an empty window, a failure opens it again for another
// CoolDown, and a call that could not be judged (the race ended before it
// could answer, for reasons of its own) lets the next call probe.
//
// It is plain state with the clock passed in, so that every transition is
// tested by tables; it is not safe for concurrent use (the engine holds
// each behind a lock).
package breaker

import (
	"fmt"
	"time"
)

// State is a breaker's state, numbered as the metrics gauge shows it.
type State uint8

// States.
const (
	Closed   State = 0
	HalfOpen State = 1
	Open     State = 2
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case HalfOpen:
		return "half-open"
	case Open:
		return "open"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Status is a tool's health as GET /v1/tools shows it.
type Status string

// Statuses.
const (
	// StatusOK: closed, and recent failures below the degraded share.
	StatusOK Status = "ok"
	// StatusDegraded: half-open, or closed with a share of recent
	// failures of at least half the failure ratio.
	StatusDegraded Status = "degraded"
	// StatusUnavailable: open; its legs are not sent.
	StatusUnavailable Status = "unavailable"
)

// Worse returns the worse of two statuses.
func Worse(a, b Status) Status {
	rank := func(s Status) int {
		switch s {
		case StatusUnavailable:
			return 2
		case StatusDegraded:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// Result is how a call is judged.
type Result uint8

// Results.
const (
	// Success: the leg answered (a route or a reasoned no route).
	Success Result = iota
	// Failure: the leg answered with an error, or did not answer within
	// the whole deadline.
	Failure
	// Neutral: nothing can be said (the race was cut short before the leg
	// could answer, or the leg was refused by a saturated pool).
	Neutral
)

// Config sets a breaker's thresholds.
type Config struct {
	// Window is how many recent calls are judged.
	Window int
	// FailureRatio is the share of failures in the window that opens the
	// breaker.
	FailureRatio float64
	// MinCalls is how many calls the window must hold before the breaker
	// may open.
	MinCalls int
	// CoolDown is how long an open breaker refuses calls before it lets a
	// probe through.
	CoolDown time.Duration
	// Off makes a breaker that judges nothing and never opens: every call
	// is let through, and the leg always reads ok.
	Off bool
}

// Defaults of Config (see README, Racing: the breaker).
const (
	DefaultWindow       = 20
	DefaultFailureRatio = 0.5
	DefaultMinCalls     = 5
	DefaultCoolDown     = 10 * time.Second
)

// DefaultConfig is the default thresholds.
func DefaultConfig() Config {
	return Config{Window: DefaultWindow, FailureRatio: DefaultFailureRatio, MinCalls: DefaultMinCalls, CoolDown: DefaultCoolDown}
}

// Breaker is one leg's breaker.
type Breaker struct {
	cfg   Config
	state State
	// window holds the recent judged calls, true for a failure, as a ring:
	// n calls, the next written at next, failures of them failed.
	window            []bool
	n, next, failures int
	// openedAt is when it last opened; probeAt when the probe in flight,
	// if probing, was let through.
	openedAt, probeAt time.Time
	probing           bool
}

// New returns a closed breaker. A Window below 1 is taken as 1, a MinCalls
// below 1 as 1.
func New(cfg Config) *Breaker {
	if cfg.Off {
		return &Breaker{cfg: cfg}
	}
	if cfg.Window < 1 {
		cfg.Window = 1
	}
	if cfg.MinCalls < 1 {
		cfg.MinCalls = 1
	}
	return &Breaker{cfg: cfg, window: make([]bool, cfg.Window)}
}

// Allow says whether a call may be made at now and whether it is the
// half-open breaker's probe, which must be judged with Record(probe=true).
// An open breaker past its cool-down becomes half-open here. A probe not
// judged within a cool-down is given up, and another let through.
func (b *Breaker) Allow(now time.Time) (ok, probe bool) {
	if b.cfg.Off {
		return true, false
	}
	switch b.state {
	case Closed:
		return true, false
	case Open:
		if now.Before(b.openedAt.Add(b.cfg.CoolDown)) {
			return false, false
		}
		b.state = HalfOpen
	}
	if b.probing && now.Before(b.probeAt.Add(b.cfg.CoolDown)) {
		return false, false
	}
	b.probing, b.probeAt = true, now
	return true, true
}

// Record judges a call made at Allow's word; probe is what Allow said. It
// returns whether the breaker opened.
func (b *Breaker) Record(now time.Time, probe bool, r Result) (opened bool) {
	if b.cfg.Off {
		return false
	}
	if probe {
		if b.state != HalfOpen || !b.probing {
			return false // a probe given up on
		}
		b.probing = false
		switch r {
		case Success:
			b.state = Closed
			b.reset()
		case Failure:
			b.state, b.openedAt = Open, now
			return true
		}
		return false
	}
	if b.state != Closed || r == Neutral {
		// A call let through before the breaker opened, judged after:
		// the breaker has judged enough already.
		return false
	}
	if b.n == len(b.window) {
		if b.window[b.next] {
			b.failures--
		}
	} else {
		b.n++
	}
	failed := r == Failure
	b.window[b.next] = failed
	b.next = (b.next + 1) % len(b.window)
	if failed {
		b.failures++
	}
	if b.failures > 0 && b.n >= b.cfg.MinCalls && float64(b.failures) >= b.cfg.FailureRatio*float64(b.n) {
		b.state, b.openedAt = Open, now
		b.reset()
		return true
	}
	return false
}

// Clean reports a closed breaker whose window is full of successes: one
// more success would change nothing, so a caller may skip telling it.
func (b *Breaker) Clean() bool {
	return b.cfg.Off || b.state == Closed && b.failures == 0 && b.n == len(b.window)
}

func (b *Breaker) reset() {
	clear(b.window)
	b.n, b.next, b.failures = 0, 0, 0
}

// State is the breaker's state at now: an open breaker past its cool-down
// reads half-open, since the next call will probe.
func (b *Breaker) State(now time.Time) State {
	if b.state == Open && !now.Before(b.openedAt.Add(b.cfg.CoolDown)) {
		return HalfOpen
	}
	return b.state
}

// Status is the leg's health at now.
func (b *Breaker) Status(now time.Time) Status {
	switch b.State(now) {
	case Open:
		return StatusUnavailable
	case HalfOpen:
		return StatusDegraded
	}
	if b.failures > 0 && float64(b.failures) >= b.cfg.FailureRatio/2*float64(b.n) {
		return StatusDegraded
	}
	return StatusOK
}

// RetryAfter is how long from now an open breaker refuses calls; 0 when
// it lets one through.
func (b *Breaker) RetryAfter(now time.Time) time.Duration {
	if b.state != Open {
		return 0
	}
	if d := b.openedAt.Add(b.cfg.CoolDown).Sub(now); d > 0 {
		return d
	}
	return 0
}
