package quote

import "time"

// A race's timing strategy says when it stops waiting for its legs. It is
// LI.FI's minWaitTime strategy under a bound: every leg is given MinWait;
// from then on the race ends as soon as ExpectedResults routes are in, and
// every ReduceEvery after MinWait one fewer is expected (never fewer than
// one: a race with no route yet waits for one). Whatever the strategy, the
// race ends when every leg has answered, and at MaxWait (the server's
// deadline when the request sets none). "Routes in" are legs that answered
// with a route: a leg that said no route or failed is an answer, not a
// result.
//
// Decide is the whole policy, a pure function of the elapsed time and the
// counts, so that it is tested on a fake clock; the engine runs it with
// real timers, asking again whenever a leg answers or the time it named
// comes.

// Strategy is a race's timing.
type Strategy struct {
	// MaxWait bounds the race; 0, or anything past the server's deadline,
	// means the deadline.
	MaxWait time.Duration
	// MinWait is how long every leg is waited for before the expectation
	// applies.
	MinWait time.Duration
	// ExpectedResults is how many routes end the race once MinWait has
	// passed; 0, or more than there are legs, means every leg.
	ExpectedResults int
	// ReduceEvery lowers the expectation by one each time it passes after
	// MinWait; 0 never lowers it.
	ReduceEvery time.Duration
}

// StrategyParams are a request's own timing parameters (maxWaitMs,
// minWaitMs, expectedResults, reduceEveryMs); each overrides the server's
// default strategy only when its Has flag is set.
type StrategyParams struct {
	MaxWait, MinWait, ReduceEvery     time.Duration
	ExpectedResults                   int
	HasMaxWait, HasMinWait, HasReduce bool
	HasExpected                       bool
}

// Override is s with the parameters a request set.
func (s Strategy) Override(p StrategyParams) Strategy {
	if p.HasMaxWait {
		s.MaxWait = p.MaxWait
	}
	if p.HasMinWait {
		s.MinWait = p.MinWait
	}
	if p.HasExpected {
		s.ExpectedResults = p.ExpectedResults
	}
	if p.HasReduce {
		s.ReduceEvery = p.ReduceEvery
	}
	return s
}

// Limit is how long the race may run under a server deadline, and the
// reason given when it runs that long: the request's MaxWait when it is
// shorter than the deadline, the deadline otherwise.
func (s Strategy) Limit(deadline time.Duration) (time.Duration, StopReason) {
	if s.MaxWait > 0 && s.MaxWait < deadline {
		return s.MaxWait, StopMaxWait
	}
	return deadline, StopDeadline
}

// Expected is how many routes end a race of legs legs at elapsed, once
// MinWait has passed: ExpectedResults (every leg when 0 or more than
// legs), one fewer per ReduceEvery past MinWait, at least one.
func (s Strategy) Expected(elapsed time.Duration, legs int) int {
	n := s.ExpectedResults
	if n <= 0 || n > legs {
		n = legs
	}
	if s.ReduceEvery > 0 && elapsed > s.MinWait {
		n -= int((elapsed - s.MinWait) / s.ReduceEvery)
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Decision is what Decide says.
type Decision struct {
	// Stop ends the race, for Reason.
	Stop   bool
	Reason StopReason
	// Next, when the race goes on, is how long from now the decision may
	// change although no leg answers: when MinWait passes, the expectation
	// drops, or the limit comes. A leg's answer may change it sooner.
	Next time.Duration
}

// Decide says whether a race that has run for elapsed under a server
// deadline, with legs legs of which answered have answered (skipped legs
// count as answered) and routes brought a route, is over, why, and if not,
// when to ask again.
func (s Strategy) Decide(deadline, elapsed time.Duration, legs, answered, routes int) Decision {
	if answered >= legs {
		return Decision{Stop: true, Reason: StopAllAnswered}
	}
	limit, atLimit := s.Limit(deadline)
	if elapsed >= limit {
		return Decision{Stop: true, Reason: atLimit}
	}
	next := limit - elapsed
	if elapsed < s.MinWait {
		return Decision{Next: min(next, s.MinWait-elapsed)}
	}
	want := s.Expected(elapsed, legs)
	if routes >= want {
		return Decision{Stop: true, Reason: StopExpectedResults}
	}
	if s.ReduceEvery > 0 && want > 1 {
		// The next drop of the expectation.
		ticks := (elapsed-s.MinWait)/s.ReduceEvery + 1
		next = min(next, s.MinWait+ticks*s.ReduceEvery-elapsed)
	}
	return Decision{Next: next}
}
