package quote

import (
	"errors"
	"time"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// A quote's race, as its answer shows it in data.timing: how long the race
// ran, what ended it, and what became of each leg. It is the client's view
// of why an answer took the time it took and which tools it heard from.

// StopReason is what ended a race.
type StopReason uint8

// Reasons a race ends.
const (
	// StopAllAnswered: every leg answered (or was skipped).
	StopAllAnswered StopReason = iota
	// StopExpectedResults: the timing strategy had the routes it expected
	// (after minWaitMs, expectedResults less one per reduceEveryMs).
	StopExpectedResults
	// StopMaxWait: the request's own maxWaitMs, shorter than the server's
	// deadline, ran out.
	StopMaxWait
	// StopDeadline: the server's quote deadline ran out (or the request's
	// context ended).
	StopDeadline
)

var stopReasons = [...]string{"all_answered", "expected_results", "max_wait", "deadline"}

// String is the reason as data.timing.strategy names it.
func (r StopReason) String() string {
	if int(r) < len(stopReasons) {
		return stopReasons[r]
	}
	return "unknown"
}

// LegStatus is what became of one leg of a race.
type LegStatus uint8

// What a leg came to.
const (
	// LegWon: its route is the answer (for /v1/routes: the route ranked
	// first under the request's order).
	LegWon LegStatus = iota
	// LegAnswered: it answered with a route, in time, that did not win.
	LegAnswered
	// LegNoRoute: it answered that it has no route.
	LegNoRoute
	// LegFailed: it answered with an error, or its route could not be
	// built.
	LegFailed
	// LegTimedOut: it had not answered when the race ended; it was
	// cancelled.
	LegTimedOut
	// LegSkipped: it was not sent, its breaker being open.
	LegSkipped
	// LegUnsupported: its provider cannot quote this request (an exact
	// output it cannot size) and was left out of the race; the leg's
	// Reason says why.
	LegUnsupported
	// LegDropped: it answered with a route that broke the request's
	// promise (an exact-output route short of toAmount, CheckExactOutput),
	// or whose transaction cannot be represented (ReasonTxUnrepresentable),
	// which was not answered; the leg's Reason says why.
	LegDropped
)

var legStatuses = [...]string{"won", "answered", "no_route", "failed", "timed_out", "skipped", "unsupported", "dropped"}

// String is the status as data.timing.legs[].outcome names it.
func (s LegStatus) String() string {
	if int(s) < len(legStatuses) {
		return legStatuses[s]
	}
	return "unknown"
}

// LegTiming is one leg in data.timing.
type LegTiming struct {
	Provider string
	// Tool is the leg's tool key; a live upstream's single leg names the
	// tool of the route it answered with, or is empty when it brought none.
	Tool string
	// Elapsed is the time from the race's start to the leg's answer; for a
	// leg that had not answered, the time it was waited for (the race's
	// length); 0 for a skipped leg.
	Elapsed time.Duration
	Status  LegStatus
	// Reason is why an unsupported leg was left out, why a dropped leg's
	// route was, or why a failed leg failed (its error's message: for an
	// upstream answer refused at the adapter, what was wrong with it); ""
	// otherwise.
	Reason string
	// Code is a failed leg's error code (UPSTREAM_ERROR for an upstream
	// answer refused at the adapter); "" otherwise.
	Code string
}

// Timing is a race as its answer shows it.
type Timing struct {
	Total  time.Duration
	Reason StopReason
	Legs   []LegTiming
}

// RaceEnd is how a race ended: its length and what ended it.
type RaceEnd struct {
	Total  time.Duration
	Reason StopReason
}

// timingLegs is a Timing with room for the legs of most races, so that a
// quote's timing is one allocation.
type timingLegs struct {
	t    Timing
	legs [4]LegTiming
}

// NewTiming describes a race from its outcomes, in the order the legs were
// asked; won is the route answered (nil when none was).
func NewTiming(outcomes []LegOutcome, end RaceEnd, won *Route) *Timing {
	var t *Timing
	if len(outcomes) <= len(timingLegs{}.legs) {
		tl := &timingLegs{}
		t = &tl.t
		t.Legs = tl.legs[:len(outcomes)]
	} else {
		t = &Timing{Legs: make([]LegTiming, len(outcomes))}
	}
	t.Total, t.Reason = end.Total, end.Reason
	for i := range outcomes {
		o := &outcomes[i]
		lt := LegTiming{Provider: o.Provider, Tool: o.Leg, Elapsed: o.Elapsed, Status: o.Status()}
		if o.Route != nil && o.Err == nil {
			if lt.Tool == "" {
				lt.Tool = o.Route.Tool
			}
			if o.Route == won {
				lt.Status = LegWon
			}
		}
		if lt.Status == LegTimedOut {
			lt.Elapsed = end.Total
		}
		switch lt.Status {
		case LegUnsupported, LegDropped:
			var nr *NoRoute
			if errors.As(o.Err, &nr) {
				lt.Reason = nr.Message
			}
		case LegFailed:
			if o.Err != nil {
				ae := apierr.From(o.Err)
				lt.Code, lt.Reason = ae.Code, ae.Message
			}
		}
		t.Legs[i] = lt
	}
	return t
}

// Status is what the outcome came to, before a winner is known: a route is
// LegAnswered.
func (o *LegOutcome) Status() LegStatus {
	switch {
	case o.Unsupported:
		return LegUnsupported
	case o.Skipped:
		return LegSkipped
	case !o.Answered:
		return LegTimedOut
	case o.Err == nil && o.Route != nil:
		return LegAnswered
	case dropped(o.Err):
		return LegDropped
	case errors.Is(o.Err, ErrNoRoute):
		return LegNoRoute
	default:
		return LegFailed
	}
}

// AppendTiming appends t as data.timing: {totalMs, strategy, legs:
// [{provider, tool, ms, outcome, code?, reason?}]}, reason only on an
// unsupported, dropped or failed leg, code only on a failed one, times in
// milliseconds with microsecond
// precision. The bytes are those encoding/json makes of the struct form
// kept in the tests.
func AppendTiming(b []byte, t *Timing) []byte {
	b = append(b, `{"totalMs":`...)
	b = appendMillis(b, t.Total)
	b = append(b, `,"strategy":`...)
	b = jsonenc.AppendString(b, t.Reason.String())
	b = append(b, `,"legs":[`...)
	for i := range t.Legs {
		l := &t.Legs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"provider":`...)
		b = jsonenc.AppendString(b, l.Provider)
		b = append(b, `,"tool":`...)
		b = jsonenc.AppendString(b, l.Tool)
		b = append(b, `,"ms":`...)
		b = appendMillis(b, l.Elapsed)
		b = append(b, `,"outcome":`...)
		b = jsonenc.AppendString(b, l.Status.String())
		if l.Code != "" {
			b = append(b, `,"code":`...)
			b = jsonenc.AppendString(b, l.Code)
		}
		if l.Reason != "" {
			b = append(b, `,"reason":`...)
			b = jsonenc.AppendString(b, l.Reason)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// Millis is d in milliseconds, to the microsecond, as data.timing shows
// it.
func Millis(d time.Duration) float64 {
	if d < 0 {
		d = 0
	}
	return float64(d.Microseconds()) / 1000
}

func appendMillis(b []byte, d time.Duration) []byte {
	return jsonenc.AppendFloat(b, Millis(d))
}
