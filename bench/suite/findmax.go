package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/swapgate/swapgate/bench/loadgen"
)

// Step is one offered rate tried by FindMax and what came of it.
type Step struct {
	// Rate is the offered (open-loop) rate, requests per second.
	Rate float64 `json:"rate"`
	// RPS is the rate achieved over the measured part of the step.
	RPS      float64 `json:"rps"`
	P50Us    int64   `json:"p50Us"`
	P99Us    int64   `json:"p99Us"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Unsent   int64   `json:"unsent"`
	// GenCPU and ServerCPU are the generator's and the server's CPU use
	// over the step, as shares of all cores: when the generator's is high
	// at the maximum, the machine was the limit rather than the server.
	GenCPU    float64 `json:"generatorCpu"`
	ServerCPU float64 `json:"serverCpu"`
	// Pass tells whether the step was sustained; Reason says why not.
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
}

// Probe offers rate for one step and reports the outcome; FindMax judges
// it.
type Probe func(ctx context.Context, rate float64) (Step, error)

// FindMaxConfig is the stepping of a search for the highest sustainable
// rate. A rate is sustained when no request fails, the p99 latency (from
// each request's intended send time) stays within P99Bound and at least
// MinAchieved of the offered rate is completed.
type FindMaxConfig struct {
	// Start is the first rate tried.
	Start float64
	// Factor multiplies the rate after each sustained step (and divides it
	// after each failed one until one is sustained); above 1.
	Factor float64
	// Refine is the number of steps spent bisecting (geometrically)
	// between the highest sustained rate and the lowest failed one.
	Refine int
	// MaxSteps bounds the search.
	MaxSteps int
	// MinRate and MaxRate bound the rates tried; a search still passing at
	// MaxRate stops there and says so.
	MinRate, MaxRate float64
	// P99Bound is the latency a sustained step stays within.
	P99Bound time.Duration
	// MinAchieved is the least share of the offered rate a sustained step
	// completes; zero means 0.95.
	MinAchieved float64
}

// FindMaxResult is the outcome of a search.
type FindMaxResult struct {
	// MaxRate is the highest offered rate sustained, 0 if none was.
	MaxRate float64 `json:"maxRate"`
	// AtMax is the step that sustained MaxRate.
	AtMax *Step `json:"atMax,omitempty"`
	// Capped is set when MaxRate is the configured ceiling, still passing:
	// the real limit is higher.
	Capped   bool    `json:"capped,omitempty"`
	P99Bound float64 `json:"p99BoundMs"`
	Steps    []Step  `json:"steps"`
}

func (c *FindMaxConfig) validate() error {
	if c.Start <= 0 || c.Factor <= 1 || c.MaxSteps < 1 || c.Refine < 0 || c.P99Bound <= 0 ||
		c.MinRate < 0 || c.MaxRate < c.Start || c.MinRate > c.Start {
		return fmt.Errorf("find-max: invalid stepping %+v", *c)
	}
	if c.MinAchieved == 0 {
		c.MinAchieved = 0.95
	}
	return nil
}

// judge decides whether s was sustained.
func (c *FindMaxConfig) judge(s *Step) {
	switch {
	case s.Requests == 0:
		s.Reason = "no request completed"
	case s.Errors > 0:
		s.Reason = fmt.Sprintf("%d errors", s.Errors)
	case time.Duration(s.P99Us)*time.Microsecond > c.P99Bound:
		s.Reason = fmt.Sprintf("p99 %s above %s", fmtUs(float64(s.P99Us)), c.P99Bound)
	case s.RPS < c.MinAchieved*s.Rate:
		s.Reason = fmt.Sprintf("achieved %.0f/s of %.0f/s offered", s.RPS, s.Rate)
	default:
		s.Pass = true
	}
}

// FindMax steps the offered rate up by Factor while steps are sustained,
// down while none has been, then bisects between the highest sustained
// rate and the lowest failed one for Refine steps. Each step is a fresh
// open-loop run, so a failed step's backlog does not spill into the next.
func FindMax(ctx context.Context, cfg FindMaxConfig, probe Probe) (FindMaxResult, error) {
	if err := cfg.validate(); err != nil {
		return FindMaxResult{}, err
	}
	res := FindMaxResult{P99Bound: float64(cfg.P99Bound) / float64(time.Millisecond)}
	var lo, hi float64 // highest sustained, lowest failed; 0 when none yet
	rate, refined := cfg.Start, 0
	for len(res.Steps) < cfg.MaxSteps {
		s, err := probe(ctx, rate)
		if err != nil {
			return res, err
		}
		s.Rate = rate
		cfg.judge(&s)
		res.Steps = append(res.Steps, s)
		if s.Pass {
			if rate > lo {
				lo = rate
				at := s
				res.AtMax = &at
			}
		} else if hi == 0 || rate < hi {
			hi = rate
		}
		switch {
		case hi == 0: // everything sustained so far: go up
			if rate >= cfg.MaxRate {
				res.Capped = true
				res.MaxRate = lo
				return res, nil
			}
			rate = math.Min(rate*cfg.Factor, cfg.MaxRate)
		case lo == 0: // nothing sustained yet: go down
			if rate <= cfg.MinRate {
				return res, nil
			}
			rate = math.Max(rate/cfg.Factor, cfg.MinRate)
		default: // bracketed: bisect
			if refined >= cfg.Refine || hi/lo < 1.02 {
				res.MaxRate = lo
				return res, nil
			}
			rate = math.Round(math.Sqrt(lo * hi))
			refined++
		}
	}
	res.MaxRate = lo
	return res, nil
}

// LoadProbe returns a Probe that runs each step as an open-loop loadgen run
// of base (its scenario, target, key and connections) at the step's rate
// with fixed arrivals, for warmup plus measure. serverPIDs are the
// server's processes (a cluster's nodes) whose CPU use, together, each step
// reports; progress, when set, gets
// each interval line.
func LoadProbe(base loadgen.Config, warmup, measure time.Duration, serverPIDs []int, progress func(rate float64, l loadgen.Line)) Probe {
	cores := runtime.NumCPU()
	return func(ctx context.Context, rate float64) (Step, error) {
		cfg := base
		cfg.Rate, cfg.Arrival = rate, loadgen.ArrivalFixed
		cfg.Warmup, cfg.Duration = warmup, warmup+measure
		if cfg.MaxRequests == 0 {
			cfg.MaxRequests = math.MaxInt64
		}
		if progress != nil {
			cfg.OnInterval = func(l loadgen.Line) { progress(rate, l) }
		}
		gen0, _ := SelfCPU()
		srv0 := procsCPU(serverPIDs)
		start := time.Now()
		sum, err := loadgen.Run(ctx, cfg, io.Discard)
		if sum == nil {
			return Step{}, err
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return Step{}, err
		}
		wall := time.Since(start)
		gen1, _ := SelfCPU()
		s := Step{Rate: rate, RPS: sum.RPS, P50Us: sum.Latency.P50, P99Us: sum.Latency.P99,
			Requests: sum.Requests, Errors: sum.Errors, Unsent: sum.Unsent, GenCPU: CPUShare(gen1-gen0, wall, cores)}
		if len(serverPIDs) > 0 {
			s.ServerCPU = CPUShare(procsCPU(serverPIDs)-srv0, wall, cores)
		}
		return s, ctx.Err()
	}
}

// procsCPU is the CPU time the processes used so far, together (a
// cluster's nodes); one that cannot be read counts nothing.
func procsCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		if d, err := ProcCPU(pid); err == nil {
			sum += d
		}
	}
	return sum
}
