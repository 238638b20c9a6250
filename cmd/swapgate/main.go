// Command swapgate is the Swapgate service and its operator tool: `serve`
// runs the HTTP API; `partner` and `settle` manage accounts, against the data
// directory directly or through a running server's admin listener.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: swapgate <command> [flags]

commands:
  serve     run the HTTP API (see swapgate serve -h)
  webhook-receiver  a local HTTPS endpoint that prints and verifies webhook deliveries
  partner   manage partner accounts: create, list, rotate-key, set-fees, set-limits, disable
  settle    pay out pending partner earnings of one ecosystem (see swapgate settle -h)
  tx        the transaction manager's intents and their transactions: list, show
  operator-key  the operator's signing key: create (prints the address, never the key), show
  bench     drive load against a loopback server, HDR percentiles each second (see swapgate bench -h)
  bench-bare  the bare-server limit: Swapgate's ping bytes from a bare fasthttp server (see swapgate bench-bare -h)
  bench-suite  Swapgate against the bare-server limit, every scenario in rounds; table, JSON and HTML report (see swapgate bench-suite -h)
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "partner":
		return runPartner(args[1:], stdout, stderr)
	case "webhook-receiver":
		return runReceiver(args[1:], stdout, stderr)
	case "settle":
		return runSettle(args[1:], stdout, stderr)
	case "tx":
		return runTx(args[1:], stdout, stderr)
	case "operator-key":
		return runOperatorKey(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "bench-bare":
		return runBenchBare(args[1:], stdout, stderr)
	case "bench-suite":
		return runBenchSuite(args[1:], stdout, stderr)
	case "bench-tx":
		// Hidden: the bench suite's tx-throughput batch.
		return runBenchTx(args[1:], stdout, stderr)
	case "standins":
		// Hidden: local stand-ins of the live upstreams, for the bench.
		return runStandins(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "swapgate: unknown command %q\n%s", args[0], usage)
	return 2
}
