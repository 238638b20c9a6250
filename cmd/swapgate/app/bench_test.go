package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// benchApp starts the real service (Pebble, actors, sandbox) and returns it
// with a partner key whose limits are out of the way.
func benchApp(b *testing.B) (*App, string) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = b.TempDir()
	cfg.AnonHeavyPerMin, cfg.AnonReadPerMin = 1<<30, 1<<30
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close(context.Background()) })
	key, digest, err := account.NewAPIKey()
	if err != nil {
		b.Fatal(err)
	}
	p := &account.Partner{ID: "ptn_bench", Name: "Bench", Email: "bench@example.com", FeeTier: account.FeeTier{SwapFeeBps: 25},
		Limits: account.Limits{HeavyPerMin: 1 << 30, ReadPerMin: 1 << 30}, EnabledEcosystems: account.Ecosystems(), KeyDigest: digest}
	ctx := context.Background()
	if err := a.stores.Partners.CreatePartner(ctx, p); err != nil {
		b.Fatal(err)
	}
	if err := a.stores.FeeWallets.PutFeeWallet(ctx, p.ID, "evm", "0x8ba1f109551bD432803012645Ac136ddd64DBA72"); err != nil {
		b.Fatal(err)
	}
	return a, key
}

// drive runs one request through the full handler chain per iteration,
// with a RequestCtx reused as fasthttp's server reuses it.
func drive(b *testing.B, h fasthttp.RequestHandler, uri, key string) {
	b.Helper()
	var ctx fasthttp.RequestCtx
	var req fasthttp.Request
	req.SetRequestURI(uri)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	ctx.Init(&req, addr, nil)
	h(&ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Response.Reset()
		h(&ctx)
	}
	b.StopTimer()
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const benchQuote = "/v1/quote?fromChain=42161&toChain=8453&fromToken=0xaf88d065e77c8cC2239327C5EDb3A432268e5831" +
	"&toToken=0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913&fromAmount=1000000000&fromAddress=0x8ba1f109551bD432803012645Ac136ddd64DBA72"

func BenchmarkPing(b *testing.B) {
	a, _ := benchApp(b)
	drive(b, a.Handler(), "/v1/ping", "")
}

func BenchmarkTokensChain1(b *testing.B) {
	a, _ := benchApp(b)
	drive(b, a.Handler(), "/v1/tokens?chains=1", "")
}

func BenchmarkQuoteAnonymous(b *testing.B) {
	a, _ := benchApp(b)
	drive(b, a.Handler(), benchQuote, "")
}

func BenchmarkQuotePartner(b *testing.B) {
	a, key := benchApp(b)
	drive(b, a.Handler(), benchQuote, key)
}

// BenchmarkQuotePartnerParallel shows the ledger's group commit: concurrent
// partner quotes share WAL syncs. The 64-way variants are a high-volume
// partner; the partner/anonymous throughput ratio is the figure to watch.
func BenchmarkQuotePartnerParallel(b *testing.B)     { driveParallel(b, 16, true) }
func BenchmarkQuotePartnerParallel64(b *testing.B)   { driveParallel(b, 64, true) }
func BenchmarkQuoteAnonymousParallel(b *testing.B)   { driveParallel(b, 16, false) }
func BenchmarkQuoteAnonymousParallel64(b *testing.B) { driveParallel(b, 64, false) }

// driveParallel runs quotes from parallelism×GOMAXPROCS goroutines, each
// with its own reused RequestCtx, as a partner key or anonymously.
func driveParallel(b *testing.B, parallelism int, partner bool) {
	a, key := benchApp(b)
	h := a.Handler()
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	commits0, rows0 := a.quotes.ledger.Commits(), a.quotes.ledger.Rows()
	b.ResetTimer()
	cpu0 := processCPU()
	defer func() {
		// On two shared cores a run is CPU-bound, so CPU per quote says
		// more than ns/op about what a change saved.
		b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
		if partner {
			commits, rows := a.quotes.ledger.Commits()-commits0, a.quotes.ledger.Rows()-rows0
			b.ReportMetric(float64(rows)/float64(max(commits, 1)), "rows/commit")
		}
	}()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.SetRequestURI(benchQuote)
		if partner {
			req.Header.Set("X-API-Key", key)
		}
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}, nil)
		for pb.Next() {
			ctx.Response.Reset()
			h(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Errorf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
				return
			}
		}
	})
}
