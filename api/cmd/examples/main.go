// Command examples rewrites the examples of the API document
// (api/openapi.json) with real sandbox answers: it builds this checkout's
// swapgate binary and runs `swapgate serve` as a child process in sandbox
// mode on a temporary data directory, with a local HTTPS webhook receiver
// (server.go says with which options), plays a partner's day through the
// public HTTP interface (reference data, quotes in each of the three
// shapes, a swap executed to DONE, an intents deposit, a multi-step
// deposit signed with EIP-712, the on-ramp paid on its checkout page, the
// partner's account and webhooks, and a few refusals), and writes what it
// received into the document's examples: answers, request bodies and
// webhook deliveries.
//
// Every answer is held to the document before it is written (as the
// end-to-end tests hold theirs), so an example can never contradict its
// schema. Only the examples change: the rest of the document keeps its
// bytes. Run it from the repository root after changing what an endpoint
// answers:
//
//	go run ./api/cmd/examples
//
// The service runs with PublicURL as its public address, so that the
// addresses its answers name (logoURI, checkoutUrl) are the same on every
// run, whatever port it happened to listen on. The command reaches the
// service only as its clients do, over HTTP and the admin listener; it
// does not import the composition root (cmd/swapgate/app), which
// internal/archtest holds it to.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

// PublicURL is the public address the examples' service runs with (serve
// --public-url): a name under the .example domain reserved for
// documentation (RFC 2606), so that no reader mistakes it for a host.
const PublicURL = "https://swapgate.example"

func main() {
	doc := flag.String("doc", "api/openapi.json", "the document to rewrite (run from the repository root)")
	timeout := flag.Duration("timeout", 6*time.Minute, "give up after this long (building the binary included)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *doc); err != nil {
		fmt.Fprintf(os.Stderr, "examples: %v\n", err)
		os.Exit(1)
	}
}
