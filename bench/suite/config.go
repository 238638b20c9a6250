package suite

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Config is one suite run. Full, Quick and Smoke are the presets behind
// `make bench`, `make bench-quick` and the end-to-end test.
type Config struct {
	// Preset names the preset the config came from, for the report.
	Preset string `json:"preset"`
	// Binary is the swapgate binary the suite runs as its servers, the
	// webhook receiver and the partner CLI.
	Binary string `json:"binary"`
	// ResultsDir is where the run's folder, named by its start time, is
	// written (bench/results by default).
	ResultsDir string `json:"resultsDir"`
	// Rounds is how many times every scenario runs; figures are medians
	// over the rounds.
	Rounds int `json:"rounds"`
	// Warmup and Measure are the two parts of each fixed-rate run; only
	// the measured part makes the figures.
	Warmup  time.Duration `json:"warmup"`
	Measure time.Duration `json:"measure"`
	// Rate is the open-loop rate every fixed-rate run offers (fixed
	// arrivals), the same for all scenarios and for the bare server, so
	// that latencies are compared at equal load.
	Rate float64 `json:"rate"`
	// Workers is the connections each run may use; enough for Rate times
	// the slowest latency expected (the slow provider's deadline).
	Workers int `json:"workers"`
	// Timeout bounds each request.
	Timeout time.Duration `json:"timeout"`
	// Interval is the progress and timeline period.
	Interval time.Duration `json:"interval"`
	// Scenarios selects scenarios by name; empty runs them all. ping
	// always runs: it is the reference of every ratio.
	Scenarios []string `json:"scenarios,omitempty"`
	// FindMax lists the scenarios whose highest sustainable rate is
	// searched in every round ("all": every one where it applies); ping's
	// search runs against the bare server too, and is the reference of the
	// max/s ratios.
	FindMax []string `json:"findMax,omitempty"`
	// Search is the stepping of those searches; Start 0 means Rate.
	Search FindMaxConfig `json:"search"`
	// StepWarmup and StepMeasure are the parts of each search step.
	StepWarmup  time.Duration `json:"stepWarmup"`
	StepMeasure time.Duration `json:"stepMeasure"`
	// WebhookRate is the rate of test events webhook-storm generates.
	WebhookRate float64 `json:"webhookRate"`
	// WebhookFailShare is the share of deliveries the receiver answers 500.
	WebhookFailShare float64 `json:"webhookFailShare"`
	// WebhookRetryBase is Swapgate's --webhook-retry-base in the suite.
	WebhookRetryBase time.Duration `json:"webhookRetryBase"`
	// WebhookDrain bounds the wait for retries to finish after a storm.
	WebhookDrain time.Duration `json:"webhookDrain"`
	// QuoteDeadline is the slow-provider server's --quote-deadline, and
	// StallLatency the latency its aggregator tools are given (above it).
	QuoteDeadline time.Duration `json:"quoteDeadline"`
	StallLatency  time.Duration `json:"stallLatency"`
	// StrategyMinWait is quote-slow-provider-strategy's minWaitMs, below
	// QuoteDeadline: the race ends then, its one expected route in.
	StrategyMinWait time.Duration `json:"strategyMinWait"`
	// LiveLatency is how long every upstream stand-in takes to answer in
	// quote-live (swapgate standins --latency); LiveRate is the rate
	// quote-live offers and LiveWorkers the connections it may use: enough
	// for LiveRate times the slowest quote (a multi-step quote waits for
	// two upstreams in turn).
	LiveLatency time.Duration `json:"liveLatency"`
	LiveRate    float64       `json:"liveRate"`
	LiveWorkers int           `json:"liveWorkers"`
	// StatusSwaps is how many sandbox swaps the status polls follow.
	StatusSwaps int `json:"statusSwaps"`
	// SampleInterval is the period of the servers' CPU and memory samples.
	SampleInterval time.Duration `json:"sampleInterval"`
	// StartTimeout bounds each server's start.
	StartTimeout time.Duration `json:"startTimeout"`
	// Store is a PostgreSQL connection string (postgres://… or libpq's
	// keyword=value form, checked by the caller as `swapgate serve` checks
	// its --store). When set, a second
	// Swapgate like main runs on that store (SWAPGATE_STORE, with a
	// --data of its own for its local files), and the scenarios that
	// write the store (quote-partner, quote-fee, webhook-storm) run on it
	// too, each right after its run on main (Pebble), their rows beside
	// Pebble's; quote-fee is then searched for its highest rate on both,
	// for the ratio of PostgreSQL's to Pebble's. Left out of results.json:
	// a URL may carry a password.
	Store string `json:"-"`
	// Postgres records that the run had a PostgreSQL store.
	Postgres bool `json:"postgres,omitempty"`
	// Cluster, when above zero, runs the scenarios of clusterScenarios
	// on clusters of 1, 2, … Cluster nodes too (targets cluster-1, …),
	// each on a database of its own created on Store's server, and
	// searches quote-partner's highest rate on each (see cluster.go).
	Cluster int `json:"cluster,omitempty"`
	// ClusterCores is the cores each cluster node is pinned to (and its
	// GOMAXPROCS); 0 means 1.
	ClusterCores int `json:"clusterCores,omitempty"`
}

// Full is `make bench`: five rounds of every scenario, each searched for
// its highest sustainable rate (a quarter of an hour or so on two cores).
func Full() Config {
	return Config{
		Preset: "full", ResultsDir: "bench/results", Rounds: 5,
		Warmup: time.Second, Measure: 5 * time.Second, Rate: 1000, Workers: 512,
		Timeout: 5 * time.Second, Interval: time.Second,
		FindMax: []string{"all"},
		Search: FindMaxConfig{Factor: 2, Refine: 2, MaxSteps: 12, MinRate: 10, MaxRate: 400_000,
			P99Bound: 50 * time.Millisecond},
		StepWarmup: 500 * time.Millisecond, StepMeasure: 1500 * time.Millisecond,
		WebhookRate: 100, WebhookFailShare: 0.2, WebhookRetryBase: 100 * time.Millisecond, WebhookDrain: 30 * time.Second,
		QuoteDeadline: 300 * time.Millisecond, StallLatency: time.Second, StrategyMinWait: 50 * time.Millisecond, StatusSwaps: 3,
		LiveLatency: 200 * time.Millisecond, LiveRate: 2000, LiveWorkers: 2048,
		SampleInterval: 250 * time.Millisecond, StartTimeout: 2 * time.Minute,
	}
}

// Quick is `make bench-quick`: the same table in under two minutes, from
// two shorter rounds; only ping (bare and Swapgate) is searched for its
// highest rate, which gives the headline ratio to the machine's limit.
func Quick() Config {
	c := Full()
	c.Preset = "quick"
	c.Rounds = 2
	c.Warmup, c.Measure = 400*time.Millisecond, 1600*time.Millisecond
	c.FindMax = []string{"ping"}
	c.Search.Refine, c.Search.MaxSteps = 2, 10
	c.StepWarmup, c.StepMeasure = 250*time.Millisecond, 750*time.Millisecond
	c.WebhookDrain = 10 * time.Second
	return c
}

// Smoke is the suite's machinery at toy durations and rates, for the
// end-to-end test: every server, every scenario, one round, one short
// search, and the report files.
func Smoke() Config {
	c := Quick()
	c.Preset = "smoke"
	c.Rounds = 1
	c.Warmup, c.Measure = 100*time.Millisecond, 300*time.Millisecond
	c.Rate, c.Workers = 40, 32
	c.Interval = 100 * time.Millisecond
	c.Search = FindMaxConfig{Factor: 2, Refine: 0, MaxSteps: 2, MinRate: 10, MaxRate: 1000, P99Bound: 2 * time.Second}
	c.StepWarmup, c.StepMeasure = 100*time.Millisecond, 200*time.Millisecond
	c.WebhookRate, c.WebhookDrain = 20, 5*time.Second
	c.StatusSwaps = 1
	c.LiveLatency, c.LiveRate, c.LiveWorkers = 20*time.Millisecond, 40, 32
	c.SampleInterval = 50 * time.Millisecond
	return c
}

// Preset returns the preset called name.
func Preset(name string) (Config, error) {
	switch name {
	case "full":
		return Full(), nil
	case "quick":
		return Quick(), nil
	case "smoke":
		return Smoke(), nil
	}
	return Config{}, fmt.Errorf("unknown preset %q (want full, quick or smoke)", name)
}

// Bounds that keep a mistyped flag from turning into a runaway run.
const (
	maxRounds  = 50
	maxRunTime = 10 * time.Minute
	maxRate    = 1_000_000
)

func (c *Config) validate() error {
	var errs []error
	if c.Binary == "" {
		errs = append(errs, errors.New("no swapgate binary"))
	}
	if c.ResultsDir == "" {
		errs = append(errs, errors.New("no results directory"))
	}
	if c.Rounds < 1 || c.Rounds > maxRounds {
		errs = append(errs, fmt.Errorf("rounds must be in [1, %d], got %d", maxRounds, c.Rounds))
	}
	if c.Warmup < 0 || c.Measure <= 0 || c.Warmup+c.Measure > maxRunTime {
		errs = append(errs, fmt.Errorf("warm-up %s and measure %s must be non-negative, positive and add to at most %s", c.Warmup, c.Measure, maxRunTime))
	}
	if c.StepWarmup < 0 || c.StepMeasure <= 0 || c.StepWarmup+c.StepMeasure > maxRunTime {
		errs = append(errs, fmt.Errorf("search steps: warm-up %s and measure %s out of bounds", c.StepWarmup, c.StepMeasure))
	}
	if c.Rate <= 0 || c.Rate > maxRate || c.WebhookRate <= 0 || c.WebhookRate > maxRate {
		errs = append(errs, fmt.Errorf("rates must be in (0, %d], got %g and webhook %g", maxRate, c.Rate, c.WebhookRate))
	}
	if c.Workers < 1 || c.Workers > 4096 {
		errs = append(errs, fmt.Errorf("workers must be in [1, 4096], got %d", c.Workers))
	}
	if c.LiveLatency < 0 || c.LiveLatency > time.Minute || c.LiveRate <= 0 || c.LiveRate > maxRate || c.LiveWorkers < 1 || c.LiveWorkers > 16384 {
		errs = append(errs, fmt.Errorf("quote-live: latency %s must be in [0, 1m], rate %g in (0, %d], workers %d in [1, 16384]", c.LiveLatency, c.LiveRate, maxRate, c.LiveWorkers))
	}
	if c.WebhookFailShare < 0 || c.WebhookFailShare >= 1 {
		errs = append(errs, fmt.Errorf("webhook fail share must be in [0, 1), got %g", c.WebhookFailShare))
	}
	if c.QuoteDeadline <= 0 || c.StallLatency <= c.QuoteDeadline {
		errs = append(errs, fmt.Errorf("the stall (%s) must exceed a positive quote deadline (%s)", c.StallLatency, c.QuoteDeadline))
	}
	if c.StrategyMinWait < time.Millisecond || c.StrategyMinWait >= c.QuoteDeadline {
		errs = append(errs, fmt.Errorf("the strategy's minimum wait (%s) must be at least 1ms and below the quote deadline (%s)", c.StrategyMinWait, c.QuoteDeadline))
	}
	if c.Timeout <= 0 || c.Interval <= 0 || c.SampleInterval <= 0 || c.StartTimeout <= 0 || c.WebhookDrain <= 0 || c.WebhookRetryBase <= 0 {
		errs = append(errs, errors.New("timeouts, intervals, drain and retry base must be positive"))
	}
	if c.StatusSwaps < 1 || c.StatusSwaps > 20 {
		errs = append(errs, fmt.Errorf("status swaps must be in [1, 20], got %d", c.StatusSwaps))
	}
	if c.Cluster < 0 || c.Cluster > maxCluster {
		errs = append(errs, fmt.Errorf("cluster must be in [0, %d], got %d", maxCluster, c.Cluster))
	}
	if c.Cluster > 0 && c.Store == "" {
		errs = append(errs, errors.New("a cluster run needs a PostgreSQL store (--store): the nodes share a database"))
	}
	if c.ClusterCores < 0 || c.ClusterCores > runtime.NumCPU() {
		errs = append(errs, fmt.Errorf("cluster cores must be in [1, %d] (this machine's cores), got %d", runtime.NumCPU(), c.ClusterCores))
	}
	names := ScenarioNames()
	for _, n := range c.Scenarios {
		if !slices.Contains(names, n) {
			errs = append(errs, fmt.Errorf("unknown scenario %q (want one of %v)", n, names))
		}
	}
	for _, n := range c.FindMax {
		if n != "all" && !slices.Contains(names, n) {
			errs = append(errs, fmt.Errorf("find-max: unknown scenario %q", n))
		}
	}
	if len(c.FindMax) > 0 {
		s := c.Search
		if s.Start == 0 {
			s.Start = c.Rate
		}
		if err := s.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// postgresSearched is the scenario searched for its highest rate on both
// backends when a PostgreSQL store is given, whatever FindMax says: the
// durable fee quote, whose earnings row is synced before every answer, is
// the one the PostgreSQL target is set on (its max rate at least 0.8 of
// Pebble's).
const postgresSearched = "quote-fee"

// postgresTarget is that target.
const postgresTarget = 0.8

// LoadBudget is the most time the config spends offering load: every
// fixed-rate run, and every search taking all its steps. Starting,
// provisioning and webhook drains come on top (seconds).
func (c Config) LoadBudget() time.Duration {
	runs, searches := 0, 0
	for _, d := range scenarioDefs() {
		if d.name != "ping" && (len(c.Scenarios) > 0 || d.explicit) && !slices.Contains(c.Scenarios, d.name) {
			continue
		}
		n := 1
		if d.vsBare {
			n = 2
		}
		if c.Store != "" && slices.Contains(postgresScenarios(), d.name) {
			n++
		}
		if slices.Contains(clusterScenarios(), d.name) {
			n += c.Cluster
		}
		runs += n
		if d.searchable && (slices.Contains(c.FindMax, "all") || slices.Contains(c.FindMax, d.name) ||
			(c.Store != "" && d.name == postgresSearched) || (c.Cluster > 0 && d.name == clusterSearched)) {
			searches += n
		}
	}
	per := time.Duration(runs)*(c.Warmup+c.Measure) + time.Duration(searches*c.Search.MaxSteps)*(c.StepWarmup+c.StepMeasure)
	return time.Duration(c.Rounds) * per
}
