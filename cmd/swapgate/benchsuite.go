package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/swapgate/swapgate/bench/suite"
	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

const benchSuiteUsage = `usage: swapgate bench-suite [--preset full|quick|smoke] [--out DIR] [flags]

Measures Swapgate against the machine's HTTP limit, in one run on this
machine: it starts the bare server (swapgate bench-bare), Swapgate in sandbox
mode with a temporary data directory (and a second one whose aggregator
tools stall past its quote deadline), for quote-live local stand-ins of the
live upstreams (swapgate standins) and a Swapgate in live mode against them,
and a local HTTPS webhook receiver;
provisions partners through the partner CLI and fee wallets and a webhook
over HTTP; then runs every scenario open-loop at a fixed rate, in rounds,
Swapgate's and the bare server's pings alternating, and searches the
highest sustainable rate where asked. It prints a progress line every
interval and, at the end, a table of rps, p50, p99 and errors with each
figure's ratio to the bare server's ping of the same round (median and
min–max over rounds), the generator's and the server's CPU, and max/s. It
writes results.json, report.html (self-contained, inline SVG charts) and
table.txt to a new folder under --out. Everything is bounded, only loopback
is loaded, and every process it starts is stopped at the end.

With --store postgres://…, a second Swapgate like the first runs on that
PostgreSQL database (its own --data for its local files), and
quote-partner, quote-fee and webhook-storm run on it too, each right after
its run on Pebble: their rows (target postgres) sit beside Pebble's
(target swapgate), and quote-fee is searched for its highest rate on both,
the notes giving PostgreSQL's rate over Pebble's against the 0.8 target.

With --cluster N (and --store, on whose server a database is created for
each cluster and dropped at the end), the scenarios any node answers alike
run on clusters of 1, 2, … N Swapgate nodes too (targets cluster-1, …),
each node pinned to --cluster-cores cores of its own (taskset, GOMAXPROCS)
and the load spread over a cluster's nodes in turn, as a round-robin
balancer would; quote-partner is searched for its highest rate on each
cluster, the notes giving N nodes' rate over N × one node's against the
0.8 target.

Presets: full (make bench), quick (make bench-quick: the same table in
under two minutes), smoke (toy durations, for the tests). Flags given
override the preset.

Scenarios:
%s
flags:
`

// runBenchSuite runs `swapgate bench-suite`.
func runBenchSuite(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate bench-suite", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	preset := fs.String("preset", "full", "full, quick or smoke")
	out := fs.String("out", "", "parent folder of the run's results folder (default bench/results)")
	binary := fs.String("binary", "", "the swapgate binary to run the servers with (default: this one)")
	rounds := fs.Int("rounds", 0, "rounds of every scenario (default: the preset's)")
	rate := fs.Float64("rate", 0, "offered rate of every fixed-rate run, requests/s (default: the preset's)")
	warmup := fs.Duration("warmup", -1, "warm-up of each run, excluded from the figures (default: the preset's)")
	measure := fs.Duration("measure", 0, "measured part of each run (default: the preset's)")
	workers := fs.Int("workers", 0, "connections of each run (default: the preset's)")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run (default: all; ping always runs)")
	findMax := fs.String("find-max", "", `comma-separated scenarios searched for their highest sustainable rate, "all" or "none" (default: the preset's)`)
	p99Bound := fs.Duration("p99-bound", 0, "the p99 a sustained find-max step stays within (default: the preset's)")
	webhookRate := fs.Float64("webhook-rate", 0, "test events per second of webhook-storm (default: the preset's)")
	liveLatency := fs.Duration("live-latency", -1, "how long every upstream stand-in of quote-live takes to answer (default: the preset's)")
	liveRate := fs.Float64("live-rate", 0, "offered rate of quote-live, requests/s (default: the preset's)")
	liveWorkers := fs.Int("live-workers", 0, "connections of quote-live (default: the preset's)")
	store := fs.String("store", "", "PostgreSQL URL (postgres://…) of an empty database: quote-partner, quote-fee and webhook-storm also run on a second Swapgate on that store, their rows beside Pebble's, and quote-fee is searched on both (not $SWAPGATE_STORE: the default run is Pebble's alone)")
	clusterN := fs.Int("cluster", 0, "also run on clusters of 1 … N nodes (needs --store)")
	clusterCores := fs.Int("cluster-cores", 0, "cores each cluster node is pinned to (default 1)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			for _, s := range suite.Scenarios() {
				fmt.Fprintf(&b, "  %-20s %s\n", s.Name, s.Doc)
			}
			fmt.Fprintf(stdout, benchSuiteUsage, b.String())
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}
	cfg, err := suite.Preset(*preset)
	if err != nil {
		return usageFailure(stderr, err.Error())
	}
	if *out != "" {
		cfg.ResultsDir = *out
	}
	cfg.Binary = *binary
	if cfg.Binary == "" {
		if cfg.Binary, err = os.Executable(); err != nil {
			return failure(stderr, fmt.Errorf("bench-suite: this binary's path: %w", err))
		}
	}
	if *rounds != 0 {
		cfg.Rounds = *rounds
	}
	if *rate != 0 {
		cfg.Rate = *rate
	}
	if *warmup >= 0 {
		cfg.Warmup = *warmup
	}
	if *measure != 0 {
		cfg.Measure = *measure
	}
	if *workers != 0 {
		cfg.Workers = *workers
	}
	if *scenarios != "" {
		cfg.Scenarios = strings.Split(*scenarios, ",")
	}
	switch *findMax {
	case "":
	case "none":
		cfg.FindMax = nil
	default:
		cfg.FindMax = strings.Split(*findMax, ",")
	}
	if *p99Bound != 0 {
		cfg.Search.P99Bound = *p99Bound
	}
	if *webhookRate != 0 {
		cfg.WebhookRate = *webhookRate
	}
	if *liveLatency >= 0 {
		cfg.LiveLatency = *liveLatency
	}
	if *liveRate != 0 {
		cfg.LiveRate = *liveRate
	}
	if *liveWorkers != 0 {
		cfg.LiveWorkers = *liveWorkers
	}
	if err := app.CheckStoreURL(*store); err != nil {
		return usageFailure(stderr, "--store "+err.Error())
	}
	cfg.Store = *store
	cfg.Cluster, cfg.ClusterCores = *clusterN, *clusterCores
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := suite.Run(ctx, cfg, stdout)
	if err != nil {
		if rep == nil {
			return usageFailure(stderr, err.Error())
		}
		return failure(stderr, fmt.Errorf("bench-suite: %w", err))
	}
	fmt.Fprintf(stdout, "bench suite done in %s\n", time.Since(start).Round(time.Second))
	return 0
}
