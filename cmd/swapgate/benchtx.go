package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/swapgate/swapgate/bench/suite"
	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

const benchTxUsage = `usage: swapgate bench-tx --url http://HOST:PORT --data DIR [--intents N] [--poll D]

Hidden: the bench suite's tx-throughput batch. It runs a transaction
manager (a fresh key funded from the sandbox faucet, its intents in a new
Pebble store under --data, one confirmation) against the sandbox chain
42161 of the Swapgate at --url through its JSON-RPC node (/rpc/42161),
submits --intents native transfers from 32 callers at once, waits until
each is confirmed and prints one JSON line: intents confirmed per second
and the time to inclusion. --data is removed at the end.
`

// runBenchTx runs `swapgate bench-tx`: the manager needs a store, which
// only the binary opens, so the suite runs it as a process of its own.
func runBenchTx(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate bench-tx", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("url", "", "the sandbox Swapgate's base URL")
	dir := fs.String("data", "", "a new directory for the manager's store")
	n := fs.Int("intents", 1000, "how many intents the batch has")
	poll := fs.Duration("poll", 20*time.Millisecond, "the manager's receipt poll")
	if err := fs.Parse(args); err != nil {
		return usageFailure(stderr, fmt.Sprintf("bench-tx: %v\n%s", err, benchTxUsage))
	}
	switch u, err := url.Parse(*base); {
	case *base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return usageFailure(stderr, "bench-tx: --url must be the sandbox server's http:// base URL")
	case *dir == "":
		return usageFailure(stderr, "bench-tx: --data is required (a new directory for the manager's store)")
	case *n < 1:
		return usageFailure(stderr, "bench-tx: --intents must be at least 1")
	case *poll <= 0:
		return usageFailure(stderr, "bench-tx: --poll must be positive")
	case fs.NArg() > 0:
		return usageFailure(stderr, fmt.Sprintf("bench-tx: unexpected argument %q", fs.Arg(0)))
	}
	if _, err := os.Stat(*dir); err == nil {
		return usageFailure(stderr, "bench-tx: --data must name a directory that does not exist yet (it is removed at the end)")
	}
	ctx := context.Background()
	defer os.RemoveAll(*dir)
	stores, err := app.OpenStore(ctx, app.StoreConfig{DataDir: *dir})
	if err != nil {
		fmt.Fprintf(stderr, "bench-tx: the manager's store: %v\n", err)
		return 1
	}
	defer stores.Close()
	res, err := suite.RunTx(ctx, suite.TxLoad{RPCURL: fmt.Sprintf("%s/rpc/%d", *base, suite.TxChainID), Fund: suite.FaucetFunder(*base),
		Intents: *n, Store: stores.TxIntents, Poll: *poll, Timeout: time.Minute + time.Duration(*n)*20*time.Millisecond})
	if err != nil {
		fmt.Fprintf(stderr, "bench-tx: %v\n", err)
		return 1
	}
	if err := writeJSONLine(stdout, res); err != nil {
		fmt.Fprintf(stderr, "bench-tx: %v\n", err)
		return 1
	}
	return 0
}
