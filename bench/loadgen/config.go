package loadgen

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Limits that keep a mistyped flag from turning into a runaway run.
const (
	MaxWorkers  = 4096
	MaxDuration = time.Hour
)

// Arrival processes of the open loop.
const (
	// ArrivalPoisson spaces requests by exponentially distributed gaps, as
	// independent clients would.
	ArrivalPoisson = "poisson"
	// ArrivalFixed spaces requests evenly.
	ArrivalFixed = "fixed"
)

// Config describes one run.
type Config struct {
	// BaseURL is where the service listens; it must be on loopback.
	BaseURL string
	// SpreadURLs are further loopback addresses of the same service (the
	// other nodes of a cluster), with BaseURL's scheme and path: the
	// client dials its connections across BaseURL and these in turn and
	// takes idle connections oldest first, so that requests spread evenly
	// over the nodes, as a round-robin balancer in front of them would,
	// without a proxy's hop on the generator's CPU.
	SpreadURLs []string
	// Scenario is the request mix.
	Scenario Scenario
	// Workers is the number of concurrent requests at most (and, in the
	// closed loop, exactly).
	Workers int
	// Duration bounds the run's wall time, warm-up included.
	Duration time.Duration
	// Warmup is the first part of the run whose requests (by start time in
	// the closed loop, by intended send time in the open loop) are sent and
	// shown in the interval lines but left out of the summary's counts and
	// percentiles: connections, caches and the server's pools fill up
	// during it, which is not the steady state a figure should describe.
	// It must be shorter than Duration.
	Warmup time.Duration
	// MaxRequests bounds the number of requests sent.
	MaxRequests int64
	// Rate, when above zero, selects the open loop at that many requests
	// per second.
	Rate float64
	// Arrival is ArrivalPoisson (default) or ArrivalFixed; open loop only.
	Arrival string
	// RampUp, open loop only, raises the offered rate linearly from a
	// tenth of Rate to Rate over the run's first RampUp, which must lie
	// within the warm-up: a cold server hit at full rate at once spends
	// its first seconds growing pools, connections and stacks, and a
	// breaker that judges those seconds opens for reasons no steady state
	// has. Zero offers Rate from the first request.
	RampUp time.Duration
	// APIKey, when set, is sent as X-API-Key.
	APIKey string
	// Timeout bounds each request, including the wait for a free
	// connection. Zero means 5s.
	Timeout time.Duration
	// Interval is the reporting period. Zero means one second.
	Interval time.Duration
	// JSONLines makes the per-interval lines JSON objects.
	JSONLines bool
	// OnInterval, when set, is called with each interval line after it is
	// written, from the goroutine that called Run, so that a caller can
	// keep the timeline or print its own progress without parsing text.
	OnInterval func(Line)
	// Seed seeds the Poisson arrivals; zero picks one from the clock.
	Seed uint64
	// Resolver resolves the base URL's host for the loopback guard; nil
	// means net.DefaultResolver.
	Resolver Resolver
	// Clock supplies time and the reporting ticker; nil means the real one.
	Clock Clock
}

func (c *Config) applyDefaults() {
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Arrival == "" {
		c.Arrival = ArrivalPoisson
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Scenario == nil {
		errs = append(errs, errors.New("no scenario"))
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		errs = append(errs, fmt.Errorf("workers must be in [1, %d], got %d", MaxWorkers, c.Workers))
	}
	if c.Duration <= 0 || c.Duration > MaxDuration {
		errs = append(errs, fmt.Errorf("duration must be in (0, %s], got %s", MaxDuration, c.Duration))
	}
	if c.MaxRequests < 1 {
		errs = append(errs, fmt.Errorf("max requests must be at least 1, got %d", c.MaxRequests))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate must not be negative, got %g", c.Rate))
	}
	if c.Arrival != ArrivalPoisson && c.Arrival != ArrivalFixed {
		errs = append(errs, fmt.Errorf("arrival must be %q or %q, got %q", ArrivalPoisson, ArrivalFixed, c.Arrival))
	}
	if c.RampUp < 0 || c.RampUp > c.Warmup {
		errs = append(errs, fmt.Errorf("ramp-up must be in [0, warm-up %s], got %s", c.Warmup, c.RampUp))
	}
	if c.Warmup < 0 || (c.Duration > 0 && c.Warmup >= c.Duration) {
		errs = append(errs, fmt.Errorf("warm-up must be in [0, duration), got %s", c.Warmup))
	}
	if c.Timeout < 0 || c.Interval < 0 {
		errs = append(errs, errors.New("timeout and interval must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid load configuration: %w", err)
	}
	return nil
}

// Clock is the time source of a run. Tests substitute one whose ticks they
// send by hand.
type Clock interface {
	Now() time.Time
	// NewTicker returns a channel that receives the time every d and a
	// function that stops it.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
