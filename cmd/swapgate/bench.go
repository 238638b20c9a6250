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

	"github.com/swapgate/swapgate/bench/loadgen"
)

const benchUsage = `usage: swapgate bench [--url URL] [--scenario S] [--workers N] [--duration D]
                     [--max-requests N] [--rate R [--arrival poisson|fixed]]
                     [--api-key K] [--timeout D] [--interval D] [--json]

Drives load against a Swapgate on this machine and prints, each interval,
the requests, answers by status class (err: no answer), the achieved rate
and HDR latency percentiles in microseconds; the last line is a JSON summary
(totals, counts by status, percentiles, achieved rate, a few error bodies).
The URL must be on loopback (127.0.0.0/8 or ::1): any other target is
refused. A run stops by itself after --duration or --max-requests, whichever
comes first; Ctrl-C stops it early and still prints the summary.

Without --rate the loop is closed: --workers requests are always in flight.
With --rate the loop is open: requests are issued at that rate whatever the
answers' pace, by up to --workers connections, and latency is measured from
each request's intended send time.

Scenarios: %s.

Anonymous runs hit the per-IP limits; start the server with large
--anon-heavy-per-min/--anon-read-per-min, or create a partner, raise its
limits with "swapgate partner set-limits --id ID --heavy N --read N" and pass
its key with --api-key.

flags:
`

// runBench runs `swapgate bench ...`.
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as JSON below
	baseURL := fs.String("url", "http://127.0.0.1:8080", "base URL of the server; must be on loopback")
	scenario := fs.String("scenario", "ping", "request mix: "+strings.Join(loadgen.ScenarioNames(), ", "))
	workers := fs.Int("workers", 64, "concurrent requests (closed loop) or connections (open loop)")
	duration := fs.Duration("duration", 30*time.Second, "how long to run")
	maxReq := fs.Int64("max-requests", 10_000_000, "stop after this many requests")
	rate := fs.Float64("rate", 0, "target requests per second; 0 runs the closed loop")
	arrival := fs.String("arrival", loadgen.ArrivalPoisson, "open-loop arrivals: poisson or fixed")
	apiKey := fs.String("api-key", "", "partner API key sent as X-API-Key (default: anonymous)")
	timeout := fs.Duration("timeout", 5*time.Second, "per-request timeout, including the wait for a free connection")
	interval := fs.Duration("interval", time.Second, "reporting interval")
	asJSON := fs.Bool("json", false, "print the per-interval lines as JSON objects too")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printBenchUsage(stdout, fs)
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}
	sc, err := loadgen.NewScenario(*scenario)
	if err != nil {
		return usageFailure(stderr, err.Error())
	}
	cfg := loadgen.Config{
		BaseURL: *baseURL, Scenario: sc, Workers: *workers, Duration: *duration,
		MaxRequests: *maxReq, Rate: *rate, Arrival: *arrival, APIKey: *apiKey,
		Timeout: *timeout, Interval: *interval, JSONLines: *asJSON,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := loadgen.Run(ctx, cfg, stdout)
	if sum == nil {
		if err != nil {
			return usageFailure(stderr, fmt.Sprintf("bench: %v", err))
		}
		return 1
	}
	if werr := sum.WriteJSON(stdout); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return failure(stderr, fmt.Errorf("bench: %w", err))
	}
	return 0
}

// printBenchUsage writes the help text with the flag defaults.
func printBenchUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, benchUsage, strings.Join(loadgen.ScenarioNames(), ", "))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
