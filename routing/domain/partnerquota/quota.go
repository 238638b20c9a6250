// Package partnerquota is the arithmetic of a partner's rate limit when
// several nodes admit its requests: one owner (the partner's grain) keeps
// each bucket's window and hands admissions out in blocks, which the nodes
// spend locally. It decides; the grain applies and the store keeps.
//
// A window is 60 seconds long and starts with the first admission asked
// for after the previous one ended (as the single node's windows start
// with a key's first request). Within a window the owner grants at most
// the limit in total. A block is min(want, max(1, remaining/(2×requesters))):
// half of what remains shared among the nodes asking, so that blocks shrink
// as the window fills and a node that stops receiving traffic holds little
// of it unspent; once fewer than 2×requesters remain, blocks are of one.
// With every node offering more than its share, what the nodes hold unspent
// at any moment is at most the blocks last granted, and those are spent by
// the traffic that keeps coming: at least 0.99 L is admitted.
package partnerquota

import (
	"errors"
	"time"
)

// Window is the length of a rate-limit window, the edge's.
const Window = 60 * time.Second

// ErrStaleEpoch is a store's answer to a write fenced by an epoch that is
// no longer the partner's: another activation of its grain took over.
var ErrStaleEpoch = errors.New("partnerquota: stale epoch")

// Grant is one acquire's grant as the store keeps it: a block of
// admissions of one bucket's window, asked for by requester (a node) under
// requestID (the same for every retry of one acquire), and what the
// requester gave back of its previous block of that window with it.
// The window has granted the sum of Granted less the sum of Returned of its
// rows: a later activation counts a block given back as free again.
type Grant struct {
	Bucket      string
	RequestID   string
	Requester   string
	WindowStart time.Time
	Granted     int
	Returned    int
}

// Block is how many admissions one acquire gets: want, capped at half the
// remainder shared among requesters, and at least one while anything
// remains; none when want or the remainder is not positive.
func Block(want, remaining, requesters int) int {
	if want <= 0 || remaining <= 0 {
		return 0
	}
	requesters = max(requesters, 1)
	return min(want, max(1, remaining/(2*requesters)))
}

// State is one bucket's window: when it started (zero: none yet) and what
// it granted so far.
type State struct {
	Start   time.Time
	Granted int
}

// Current reports whether the window still runs at now. A now before the
// window's start (the owner moved to a node whose clock is behind) is
// inside it.
func (s State) Current(now time.Time) bool {
	return !s.Start.IsZero() && now.Sub(s.Start) < Window
}

// Reset is when the window ends.
func (s State) Reset() time.Time { return s.Start.Add(Window) }

// Remaining is what the window can still grant under limit.
func (s State) Remaining(limit int) int { return max(0, limit-s.Granted) }

// Acquire decides one acquire at now: the window it is served from (a new
// one when none runs, unless nothing is wanted) and the block granted.
// The caller persists the grant, then keeps next.
func Acquire(s State, now time.Time, limit, want, requesters int) (next State, granted int) {
	if !s.Current(now) {
		if want <= 0 {
			return State{}, 0
		}
		s = State{Start: now}
	}
	granted = Block(want, s.Remaining(limit), requesters)
	s.Granted += granted
	return s, granted
}
