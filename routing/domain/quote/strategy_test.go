package quote

import (
	"testing"
	"time"
)

// simLeg is a leg of a simulated race: when it answers (never, when
// negative), and with a route of that value or (value 0) without one.
type simLeg struct {
	name  string
	at    time.Duration
	value float64
}

// simulate runs Decide on a fake clock the way the engine runs it with
// real timers: asking at the start, whenever a leg answers and whenever
// the time Decide named comes. It returns when and why the race ended and
// the best route in by then ("" when none).
func simulate(t *testing.T, s Strategy, deadline time.Duration, legs []simLeg) (time.Duration, StopReason, string) {
	t.Helper()
	var now time.Duration
	for steps := 0; steps < 10_000; steps++ {
		answered, routes, best, bestValue := 0, 0, "", 0.0
		nextAnswer := time.Duration(-1)
		for _, l := range legs {
			switch {
			case l.at >= 0 && l.at <= now:
				answered++
				if l.value > 0 {
					routes++
					if l.value > bestValue {
						best, bestValue = l.name, l.value
					}
				}
			case l.at > now && (nextAnswer < 0 || l.at < nextAnswer):
				nextAnswer = l.at
			}
		}
		d := s.Decide(deadline, now, len(legs), answered, routes)
		if d.Stop {
			return now, d.Reason, best
		}
		if d.Next <= 0 {
			t.Fatalf("at %v the race goes on with no time to ask again (%+v)", now, d)
		}
		step := now + d.Next
		if nextAnswer >= 0 && nextAnswer < step {
			step = nextAnswer
		}
		now = step
	}
	t.Fatal("the race never ended")
	return 0, 0, ""
}

// TestStrategyDecidesWhenTheRaceEnds plays one race, three legs answering
// at 5 ms (worth 10), 40 ms (worth 30) and 300 ms (worth 50) and one that
// hangs, under each parameter, and checks when it ends, why, and which
// route wins.
func TestStrategyDecidesWhenTheRaceEnds(t *testing.T) {
	const deadline = time.Second
	ms := time.Millisecond
	race := []simLeg{{"fast", 5 * ms, 10}, {"mid", 40 * ms, 30}, {"slow", 300 * ms, 50}, {"hung", -1, 0}}
	tests := []struct {
		name   string
		s      Strategy
		legs   []simLeg
		at     time.Duration
		reason StopReason
		winner string
	}{
		{"default: every leg, so the deadline", Strategy{}, race, deadline, StopDeadline, "slow"},
		{"maxWait shorter than the deadline", Strategy{MaxWait: 100 * ms}, race, 100 * ms, StopMaxWait, "mid"},
		{"maxWait past the deadline is the deadline", Strategy{MaxWait: 5 * time.Second}, race, deadline, StopDeadline, "slow"},
		{"expectedResults 1: the first route", Strategy{ExpectedResults: 1}, race, 5 * ms, StopExpectedResults, "fast"},
		{"expectedResults 2", Strategy{ExpectedResults: 2}, race, 40 * ms, StopExpectedResults, "mid"},
		{"expectedResults 3", Strategy{ExpectedResults: 3}, race, 300 * ms, StopExpectedResults, "slow"},
		{"minWait holds the first route back", Strategy{MinWait: 20 * ms, ExpectedResults: 1}, race, 20 * ms, StopExpectedResults, "fast"},
		{"minWait lets a later, better route in", Strategy{MinWait: 50 * ms, ExpectedResults: 1}, race, 50 * ms, StopExpectedResults, "mid"},
		{"reduceEvery 100 ms: 4 expected, 2 at 200 ms", Strategy{ReduceEvery: 100 * ms}, race, 200 * ms, StopExpectedResults, "mid"},
		{"reduceEvery 200 ms: 3 expected from 200 ms, in at 300", Strategy{ReduceEvery: 200 * ms}, race, 300 * ms, StopExpectedResults, "slow"},
		{"reduceEvery 50 ms: 2 expected at 100 ms", Strategy{ReduceEvery: 50 * ms}, race, 100 * ms, StopExpectedResults, "mid"},
		{"reduceEvery 10 ms: 1 expected at 30 ms", Strategy{ReduceEvery: 10 * ms}, race, 30 * ms, StopExpectedResults, "fast"},
		{"reduceEvery counts from minWait", Strategy{MinWait: 100 * ms, ReduceEvery: 50 * ms}, race, 200 * ms, StopExpectedResults, "mid"},
		{"LI.FI's example: 600 ms, 4, then one fewer every 300", Strategy{MinWait: 600 * ms, ExpectedResults: 4, ReduceEvery: 300 * ms}, race, 900 * ms, StopExpectedResults, "slow"},
		{"LI.FI's example with 3 expected: at minWait", Strategy{MinWait: 600 * ms, ExpectedResults: 3, ReduceEvery: 300 * ms}, race, 600 * ms, StopExpectedResults, "slow"},
		{"the expectation never drops below one route", Strategy{ReduceEvery: ms},
			[]simLeg{{"none", 2 * ms, 0}, {"late", 70 * ms, 5}, {"hung", -1, 0}}, 70 * ms, StopExpectedResults, "late"},
		{"maxWait ends a race still short of its expectation", Strategy{MaxWait: 250 * ms, ExpectedResults: 3}, race, 250 * ms, StopMaxWait, "mid"},
		{"every leg answered, before minWait", Strategy{MinWait: 500 * ms, ExpectedResults: 4},
			[]simLeg{{"a", 5 * ms, 1}, {"b", 7 * ms, 0}}, 7 * ms, StopAllAnswered, "a"},
		{"every leg answered without a route", Strategy{ExpectedResults: 1},
			[]simLeg{{"a", 5 * ms, 0}, {"b", 9 * ms, 0}}, 9 * ms, StopAllAnswered, ""},
		{"no route and failures are answers, not results", Strategy{ExpectedResults: 2},
			[]simLeg{{"a", 5 * ms, 0}, {"b", 9 * ms, 3}, {"c", 12 * ms, 0}, {"hung", -1, 0}}, deadline, StopDeadline, "b"},
		{"no legs", Strategy{}, nil, 0, StopAllAnswered, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, reason, winner := simulate(t, tt.s, deadline, tt.legs)
			if at != tt.at || reason != tt.reason || winner != tt.winner {
				t.Errorf("ended at %v (%v) won by %q; want %v (%v) won by %q", at, reason, winner, tt.at, tt.reason, tt.winner)
			}
		})
	}
}

// TestStrategyNext checks when Decide asks to be asked again.
func TestStrategyNext(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		s       Strategy
		elapsed time.Duration
		routes  int
		next    time.Duration
	}{
		{"nothing but the deadline", Strategy{}, 10 * ms, 1, 990 * ms},
		{"minWait first", Strategy{MinWait: 100 * ms}, 10 * ms, 0, 90 * ms},
		{"the next reduction", Strategy{MinWait: 100 * ms, ReduceEvery: 30 * ms}, 145 * ms, 0, 15 * ms},
		{"at a reduction, the one after", Strategy{ReduceEvery: 30 * ms}, 60 * ms, 0, 30 * ms},
		{"no reduction below one route", Strategy{ReduceEvery: 30 * ms, ExpectedResults: 2}, 40 * ms, 0, 960 * ms},
		{"maxWait before a reduction", Strategy{MaxWait: 50 * ms, ReduceEvery: 45 * ms}, 46 * ms, 0, 4 * ms},
	}
	for _, tt := range tests {
		d := tt.s.Decide(time.Second, tt.elapsed, 4, tt.routes, tt.routes)
		if d.Stop || d.Next != tt.next {
			t.Errorf("%s: %+v, want next %v", tt.name, d, tt.next)
		}
	}
}

// TestStrategyOverride checks that a request's parameters replace the
// server's one by one.
func TestStrategyOverride(t *testing.T) {
	def := Strategy{MinWait: 10, ExpectedResults: 3, ReduceEvery: 20}
	got := def.Override(StrategyParams{MaxWait: 5, HasMaxWait: true, ExpectedResults: 0, HasExpected: true})
	if want := (Strategy{MaxWait: 5, MinWait: 10, ExpectedResults: 0, ReduceEvery: 20}); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
	if got := def.Override(StrategyParams{MinWait: 7}); got != def {
		t.Fatalf("an unset parameter changed the strategy: %+v", got)
	}
}
