// Package suite measures Swapgate against the machine's HTTP limit: it runs
// the bare server (package bare) and Swapgate side by side on this machine,
// loads each scenario with package loadgen in rounds, and divides every
// figure by the bare server's ping measured in the same round.
//
// This file's package holds the pieces: CPU and memory readings of the
// servers from /proc and of the generator from getrusage, the per-round
// ratio and median arithmetic, the find-max search and the text table.
package suite
