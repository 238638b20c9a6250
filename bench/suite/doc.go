// Package suite measures Swapgate against the machine's HTTP limit, in one
// run: it starts the bare server (package bare, `swapgate bench-bare`), a
// Swapgate in sandbox mode, a second one whose aggregator tools stall past
// its quote deadline, and a local HTTPS webhook receiver, all as processes
// of the swapgate binary; provisions them as an operator and a partner
// would (the partner CLI, then HTTP); and runs every scenario open-loop at
// one fixed rate with package loadgen, in rounds, the bare and Swapgate
// pings alternating, with find-max searches where asked.
//
// Every figure is divided by the bare server's ping of the same round and
// reported as the median and range of those per-round ratios, which cancels
// what a round's conditions do to both sides. The generator's CPU
// (getrusage of this process) and the servers' (/proc) are recorded with
// every run and search step, so that a limit the generator shares with the
// server on a small machine is recognised as the machine's.
//
// Run writes results.json, a self-contained HTML report with inline SVG
// charts and table.txt; bench/README.md explains the scenarios and every
// choice. Nothing here is global state: a run's state lives in its
// environment, and the scenario and column tables are functions.
package suite
