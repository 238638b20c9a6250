package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swapgate/swapgate/bench/loadgen"
	"github.com/swapgate/swapgate/internal/standin/evmrpc"
	"github.com/swapgate/swapgate/internal/standin/lifi"
	"github.com/swapgate/swapgate/internal/standin/oneclick"
	"github.com/swapgate/swapgate/internal/standin/relay"
)

const standinsUsage = `usage: swapgate standins [--addr 127.0.0.1:PORT] [--latency 200ms]

Serves local stand-ins of Swapgate's live upstreams on one loopback
listener, for the bench suite's quote-live scenario and for trying live
mode without the internet: LI.FI under /lifi, Relay under /relay, 1Click
under /oneclick, and JSON-RPC nodes under /rpc/<chainId> (chains 369, 1,
42161 and 8453). Relay's swaps succeed on their third status poll. Their
answers are deterministic, priced from the registry's reference prices
scaled by 1.01. It logs one JSON line with the address and the flags to
give swapgate serve --mode live when it is ready; SIGINT or SIGTERM stops
it. Not a production command: it is left out of swapgate's command list.

flags:
`

// standinChains are the chains the JSON-RPC stand-in serves: PulseChain and
// the warp-route chains of the bench's quote mix.
var standinChains = []uint64{369, 1, 42161, 8453}

// runStandins runs `swapgate standins`.
func runStandins(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate standins", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address; must be on loopback")
	latency := fs.Duration("latency", 0, "how long every upstream takes to answer")
	rpcLatency := fs.Duration("rpc-latency", -1, "how long the JSON-RPC nodes take to answer (default: --latency)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, standinsUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, fmt.Sprintf("unexpected arguments: %v", fs.Args()))
	}
	if *latency < 0 || *latency > time.Minute {
		return usageFailure(stderr, fmt.Sprintf("--latency must be between 0 and 1m, got %v", *latency))
	}
	if *rpcLatency < 0 {
		*rpcLatency = *latency
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := loadgen.ResolveTarget(ctx, net.DefaultResolver, "http://"+*addr); err != nil {
		return usageFailure(stderr, fmt.Sprintf("standins: --addr: %v", err))
	}
	agg, err := lifi.New(lifi.Config{Latency: *latency})
	if err != nil {
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	relayer, err := relay.New(relay.Config{Latency: *latency, StatusPolls: 2})
	if err != nil {
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	intents, err := oneclick.New(oneclick.Config{Latency: *latency, AutoAdvance: 1})
	if err != nil {
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	nodes, err := evmrpc.New(evmrpc.Config{Latency: *rpcLatency, Chains: standinChains})
	if err != nil {
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	mux := http.NewServeMux()
	mux.Handle("/lifi/", http.StripPrefix("/lifi", agg))
	mux.Handle("/relay/", http.StripPrefix("/relay", relayer))
	mux.Handle("/oneclick/", http.StripPrefix("/oneclick", intents))
	mux.Handle("/rpc/", http.StripPrefix("/rpc", nodes))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	rpcs := make([]string, len(standinChains))
	for i, id := range standinChains {
		rpcs[i] = strconv.FormatUint(id, 10) + "=" + evmrpc.URL(base+"/rpc", id)
	}
	slog.New(slog.NewJSONHandler(stderr, nil)).Info("standins serving", slog.String("addr", ln.Addr().String()),
		slog.String("aggregatorURL", base+"/lifi"), slog.String("relayURL", base+"/relay"), slog.String("intentsURL", base+"/oneclick"),
		slog.String("rpc", strings.Join(rpcs, ",")), slog.Duration("latency", *latency), slog.Duration("rpcLatency", *rpcLatency))
	select {
	case <-ctx.Done():
	case err := <-served:
		return failure(stderr, fmt.Errorf("standins: %w", err))
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return failure(stderr, fmt.Errorf("standins: shutdown: %w", err))
	}
	return 0
}
