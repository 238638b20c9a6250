package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/bench/bare"
	"github.com/swapgate/swapgate/bench/loadgen"
	"github.com/swapgate/swapgate/edge"
)

const benchBareUsage = `usage: swapgate bench-bare [--addr 127.0.0.1:PORT] [--mode sandbox|live]

Serves GET /v1/ping with exactly the bytes Swapgate's ping answers (same
headers, same envelope, a fresh request id each time) from a fasthttp server
configured like Swapgate's, and nothing else: the bare-server limit the
bench suite (swapgate bench-suite) compares Swapgate with. It listens on
loopback only and logs one JSON line with its address when it is ready;
SIGINT or SIGTERM stops it.

flags:
`

// runBenchBare runs `swapgate bench-bare`: the bare server lives in the
// swapgate binary so that the suite starts it from the binary it already
// runs, with no second build.
func runBenchBare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("swapgate bench-bare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address; must be on loopback")
	mode := fs.String("mode", "sandbox", "the mode the ping body reports, as swapgate serve --mode")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, benchBareUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return usageFailure(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, fmt.Sprintf("unexpected arguments: %v", fs.Args()))
	}
	if *mode != "sandbox" && *mode != "live" {
		return usageFailure(stderr, fmt.Sprintf("--mode must be sandbox or live, got %q", *mode))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := loadgen.ResolveTarget(ctx, net.DefaultResolver, "http://"+*addr); err != nil {
		return usageFailure(stderr, fmt.Sprintf("bench-bare: --addr: %v", err))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failure(stderr, fmt.Errorf("bench-bare: %w", err))
	}
	srv := newBareServer(*mode)
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("bench-bare serving", slog.String("addr", ln.Addr().String()), slog.String("mode", *mode))
	select {
	case <-ctx.Done():
	case err := <-served:
		return failure(stderr, fmt.Errorf("bench-bare: %w", err))
	}
	if err := srv.Shutdown(); err != nil {
		return failure(stderr, fmt.Errorf("bench-bare: shutdown: %w", err))
	}
	return 0
}

// newBareServer is the bare server with Swapgate's version, timeouts and
// body limit, as bench-bare serves it.
func newBareServer(mode string) *fasthttp.Server {
	ec := edge.DefaultConfig()
	return bare.NewServer(bare.Config{
		Version: edge.Version, Mode: mode, ReadTimeout: ec.ReadTimeout, WriteTimeout: ec.WriteTimeout,
		IdleTimeout: ec.IdleTimeout, MaxRequestBodySize: edge.MaxBodySize,
	})
}
