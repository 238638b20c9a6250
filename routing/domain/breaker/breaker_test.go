package breaker

import (
	"fmt"
	"testing"
	"time"
)

// step is one event in a breaker's life at a time on a fake clock: a call
// asked for (allow) or judged (record), and what the breaker must say and
// be afterwards.
type step struct {
	at     time.Duration
	op     string // "allow", or "ok", "fail", "neutral" to record
	probe  bool   // record: the call was a probe
	want   bool   // allow: let through; record: opened
	wantPr bool   // allow: as the probe
	state  State
	status Status
}

func allow(at time.Duration, ok, probe bool, st State, status Status) step {
	return step{at: at, op: "allow", want: ok, wantPr: probe, state: st, status: status}
}

func record(at time.Duration, op string, probe, opened bool, st State, status Status) step {
	return step{at: at, op: op, probe: probe, want: opened, state: st, status: status}
}

// calls records n non-probe calls at at with result op, none opening the
// breaker, leaving it closed with status.
func calls(at time.Duration, n int, op string, status Status) []step {
	var out []step
	for i := 0; i < n; i++ {
		out = append(out, record(at, op, false, false, Closed, status))
	}
	return out
}

func seq(parts ...any) []step {
	var out []step
	for _, p := range parts {
		switch v := p.(type) {
		case step:
			out = append(out, v)
		case []step:
			out = append(out, v...)
		}
	}
	return out
}

// TestBreakerTransitions plays each transition of the state machine on a
// fake clock with Window 10, FailureRatio 0.5, MinCalls 4 and a 10 s
// cool-down.
func TestBreakerTransitions(t *testing.T) {
	cfg := Config{Window: 10, FailureRatio: 0.5, MinCalls: 4, CoolDown: 10 * time.Second}
	s := time.Second
	tests := []struct {
		name  string
		steps []step
	}{
		{"closed lets every call through", seq(
			allow(0, true, false, Closed, StatusOK),
			calls(0, 20, "ok", StatusOK),
			allow(0, true, false, Closed, StatusOK))},
		{"too few calls never open, however they fail", seq(
			calls(0, 3, "fail", StatusDegraded),
			allow(0, true, false, Closed, StatusDegraded))},
		{"the failure ratio reached with MinCalls opens", seq(
			calls(0, 3, "ok", StatusOK),
			calls(0, 2, "fail", StatusDegraded), // 2 of 5: above half the ratio
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(s, false, false, Open, StatusUnavailable))},
		{"failures below the ratio keep it closed, degraded from half the ratio", seq(
			calls(0, 9, "ok", StatusOK),
			calls(0, 2, "fail", StatusOK), // 2 of the last 10: below 0.25
			calls(0, 1, "fail", StatusDegraded),
			allow(0, true, false, Closed, StatusDegraded))},
		{"a success may open it too, once MinCalls are in", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "ok", false, true, Open, StatusUnavailable))},
		{"the window slides: old failures leave it", seq(
			calls(0, 10, "ok", StatusOK),
			calls(0, 2, "fail", StatusOK),
			calls(0, 1, "fail", StatusDegraded), // 3 of 10
			calls(0, 7, "ok", StatusDegraded),   // still 3 of the last 10
			calls(0, 3, "ok", StatusOK),         // none of the last 10
			calls(0, 2, "fail", StatusOK),
			calls(0, 2, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable))}, // 5 of 10
		{"neutral calls are not judged", seq(
			calls(0, 3, "fail", StatusDegraded),
			calls(0, 20, "neutral", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable))},
		{"open refuses until the cool-down, then one probe; success closes", seq(
			calls(0, 4, "fail", StatusDegraded)[:3],
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(9*s, false, false, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			allow(10*s, false, false, HalfOpen, StatusDegraded), // the probe is in flight
			record(11*s, "ok", true, false, Closed, StatusOK),
			allow(11*s, true, false, Closed, StatusOK))},
		{"a failed probe opens again for another cool-down", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			record(12*s, "fail", true, true, Open, StatusUnavailable),
			allow(21*s, false, false, Open, StatusUnavailable),
			allow(22*s, true, true, HalfOpen, StatusDegraded))},
		{"a neutral probe lets the next call probe", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			record(10*s, "neutral", true, false, HalfOpen, StatusDegraded),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			record(10*s, "ok", true, false, Closed, StatusOK))},
		{"past its cool-down an open breaker reads half-open", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(15*s, true, true, HalfOpen, StatusDegraded))},
		{"a probe never judged is given up after a cool-down", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			allow(19*s, false, false, HalfOpen, StatusDegraded),
			allow(20*s, true, true, HalfOpen, StatusDegraded),
			record(20*s, "ok", true, false, Closed, StatusOK))},
		{"calls judged while open or half-open change nothing", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			record(s, "ok", false, false, Open, StatusUnavailable),
			record(s, "fail", false, false, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			record(10*s, "fail", false, false, HalfOpen, StatusDegraded),
			record(10*s, "ok", false, false, HalfOpen, StatusDegraded))},
		{"closing empties the window", seq(
			calls(0, 3, "fail", StatusDegraded),
			record(0, "fail", false, true, Open, StatusUnavailable),
			allow(10*s, true, true, HalfOpen, StatusDegraded),
			record(10*s, "ok", true, false, Closed, StatusOK),
			calls(10*s, 3, "fail", StatusDegraded), // 3 calls: below MinCalls again
			record(10*s, "fail", false, true, Open, StatusUnavailable))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(cfg)
			epoch := time.Unix(1_767_225_600, 0)
			for i, st := range tt.steps {
				now := epoch.Add(st.at)
				var got string
				switch st.op {
				case "allow":
					ok, probe := b.Allow(now)
					if ok != st.want || probe != st.wantPr {
						got = fmt.Sprintf("allow = %v, probe %v; want %v, %v", ok, probe, st.want, st.wantPr)
					}
				default:
					r := map[string]Result{"ok": Success, "fail": Failure, "neutral": Neutral}[st.op]
					if opened := b.Record(now, st.probe, r); opened != st.want {
						got = fmt.Sprintf("record %s opened = %v, want %v", st.op, opened, st.want)
					}
				}
				if s, status := b.State(now), b.Status(now); got == "" && (s != st.state || status != st.status) {
					got = fmt.Sprintf("%v/%s, want %v/%s", s, status, st.state, st.status)
				}
				if got != "" {
					t.Fatalf("step %d (%s at %v): %s", i, st.op, st.at, got)
				}
			}
		})
	}
}

func TestBreakerRetryAfterAndWorse(t *testing.T) {
	b := New(Config{Window: 2, FailureRatio: 1, MinCalls: 1, CoolDown: 10 * time.Second})
	now := time.Unix(1_767_225_600, 0)
	if b.RetryAfter(now) != 0 || !b.Record(now, false, Failure) {
		t.Fatal("one failure in one call at ratio 1 did not open")
	}
	if d := b.RetryAfter(now.Add(4 * time.Second)); d != 6*time.Second {
		t.Fatalf("RetryAfter %v, want 6s", d)
	}
	if d := b.RetryAfter(now.Add(11 * time.Second)); d != 0 {
		t.Fatalf("RetryAfter past the cool-down %v", d)
	}
	for _, c := range [][3]Status{
		{StatusOK, StatusOK, StatusOK}, {StatusOK, StatusDegraded, StatusDegraded},
		{StatusUnavailable, StatusDegraded, StatusUnavailable}, {StatusDegraded, StatusUnavailable, StatusUnavailable},
	} {
		if got := Worse(c[0], c[1]); got != c[2] {
			t.Errorf("Worse(%s, %s) = %s", c[0], c[1], got)
		}
	}
}

// TestOffBreakerNeverOpens: a breaker made Off lets every call through,
// never opens whatever it is told, and reads closed and ok.
func TestOffBreakerNeverOpens(t *testing.T) {
	b := New(Config{Window: 2, FailureRatio: 0.5, MinCalls: 1, CoolDown: time.Hour, Off: true})
	at := time.Unix(1_767_225_600, 0)
	for i := 0; i < 100; i++ {
		ok, probe := b.Allow(at)
		if !ok || probe {
			t.Fatalf("call %d: allow %v, probe %v", i, ok, probe)
		}
		if b.Record(at, probe, Failure) {
			t.Fatalf("call %d opened an Off breaker", i)
		}
		at = at.Add(time.Millisecond)
	}
	if b.State(at) != Closed || b.Status(at) != StatusOK || b.RetryAfter(at) != 0 || !b.Clean() {
		t.Fatalf("state %s, status %s, retry after %s, clean %v", b.State(at), b.Status(at), b.RetryAfter(at), b.Clean())
	}
}
