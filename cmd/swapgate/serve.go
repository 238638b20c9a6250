package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// serveFlags binds the serve options to cfg. Every flag may also come from
// the environment as SWAPGATE_<NAME> (dashes as underscores) and from the
// JSON --config file under its own name; precedence is flag, then
// environment, then file, then the built-in default.
func serveFlags(cfg *app.Config, configFile, logLevel *string) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Mode, "mode", cfg.Mode, "sandbox (run the sandbox chain and its endpoints) or live")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address")
	fs.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data directory (Pebble store unless --store, secrets key, ticket log, admin listener file)")
	fs.StringVar(&cfg.Store, "store", cfg.Store, "PostgreSQL URL (postgres://…) of the durable state; empty: Pebble under --data")
	fs.StringVar(&cfg.Cluster.Name, "cluster-name", cfg.Cluster.Name, "run as a member of this cluster (needs --store postgres://… shared by every node); empty: one process")
	fs.StringVar(&cfg.Cluster.Bind, "cluster-bind", cfg.Cluster.Bind, "this node's cluster address, host:port (the automanaged provider's health endpoint listens on the next port)")
	fs.StringVar(&cfg.Cluster.Peers, "cluster-peers", cfg.Cluster.Peers, "every node's cluster address, host:port, comma-separated: the automanaged provider (a fixed set of nodes)")
	fs.StringVar(&cfg.Cluster.Etcd, "cluster-etcd", cfg.Cluster.Etcd, "etcd endpoints, comma-separated: the etcd provider")
	fs.StringVar(configFile, "config", "", "optional JSON file of option names to values")
	fs.StringVar(logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "HTTP read timeout")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", cfg.WriteTimeout, "HTTP write timeout")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "HTTP keep-alive idle timeout")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "time allowed to drain in-flight requests")
	fs.IntVar(&cfg.AnonHeavyPerMin, "anon-heavy-per-min", cfg.AnonHeavyPerMin, "anonymous heavy-bucket limit per IP per minute")
	fs.IntVar(&cfg.AnonReadPerMin, "anon-read-per-min", cfg.AnonReadPerMin, "anonymous read-bucket limit per IP per minute")
	fs.StringVar(&cfg.TrustedProxies, "trusted-proxies", cfg.TrustedProxies, "comma-separated proxy addresses/CIDRs whose X-Forwarded-For is trusted")
	fs.DurationVar(&cfg.PriceInterval, "price-interval", cfg.PriceInterval, "price refresh interval")
	fs.DurationVar(&cfg.PriceMaxAge, "price-max-age", cfg.PriceMaxAge, "how old a price may be, from its observation, and still be served; older, priceUSD and the USD figures valued with it are absent")
	fs.DurationVar(&cfg.GasInterval, "gas-interval", cfg.GasInterval, "gas price refresh interval")
	fs.DurationVar(&cfg.GasMaxAge, "gas-max-age", cfg.GasMaxAge, "how old a chain's gas record may be, from the gas oracle's last answer, and still be served; older, GET /v1/gas-prices has no record for the chain and quotes no gas cost figures from it")
	fs.DurationVar(&cfg.RPCTimeout, "rpc-timeout", cfg.RPCTimeout, "timeout of one read from a chain's JSON-RPC node (--evm-rpc, --gas-rpc, --pulse-rpc); a node that does not answer within it is UPSTREAM_TIMEOUT")
	fs.DurationVar(&cfg.RefreshTimeout, "refdata-refresh-timeout", cfg.RefreshTimeout, "timeout of one price or gas read by the reference-data refreshers")
	fs.IntVar(&cfg.RefdataCacheSize, "refdata-cache-size", cfg.RefdataCacheSize, "entries of each reference-data cache, prices and gas (0: twice the registry's tokens or chains, plus 16)")
	fs.DurationVar(&cfg.IdempotencyWait, "idempotency-wait", cfg.IdempotencyWait, "how long a request waits for another with the same Idempotency-Key before it is refused as in progress")
	fs.IntVar(&cfg.AuthCacheSize, "auth-cache-size", cfg.AuthCacheSize, "partners cached by API key; a fill past it drops the cache")
	fs.IntVar(&cfg.WebhookPoolSize, "webhook-pool-size", cfg.WebhookPoolSize, "webhook delivery workers (concurrent attempts)")
	fs.DurationVar(&cfg.WebhookRetryBase, "webhook-retry-base", cfg.WebhookRetryBase, "wait after the first failed webhook attempt; doubles each retry, with jitter")
	fs.IntVar(&cfg.WebhookMaxAttempts, "webhook-max-attempts", cfg.WebhookMaxAttempts, "webhook attempts before a delivery is dead-lettered")
	fs.DurationVar(&cfg.WebhookTimeout, "webhook-timeout", cfg.WebhookTimeout, "timeout of one webhook attempt: connect, TLS, request and response headers")
	fs.DurationVar(&cfg.WebhookScanInterval, "webhook-scan-interval", cfg.WebhookScanInterval, "how often the whole webhook outbox is scanned for entries no wake-up announced (new events and retries coming due are read at once)")
	fs.IntVar(&cfg.WebhookScanBatch, "webhook-scan-batch", cfg.WebhookScanBatch, "due webhook deliveries held in memory at once")
	fs.IntVar(&cfg.WebhookQueuePerWebhook, "webhook-queue-per-webhook", cfg.WebhookQueuePerWebhook, "due deliveries of one webhook held in memory at once; the rest wait in the outbox")
	fs.IntVar(&cfg.WebhookCommitBatch, "webhook-commit-batch", cfg.WebhookCommitBatch, "webhook attempt outcomes recorded per synced commit")
	fs.IntVar(&cfg.WebhookInflightPerWebhook, "webhook-inflight-per-webhook", cfg.WebhookInflightPerWebhook, "webhook attempts in flight to one webhook (0: half the per-partner cap)")
	fs.IntVar(&cfg.WebhookInflightPerPartner, "webhook-inflight-per-partner", cfg.WebhookInflightPerPartner, "webhook attempts in flight to one partner's webhooks (0: half the pool)")
	fs.BoolVar(&cfg.AllowLoopbackWebhooks, "allow-loopback-webhooks", cfg.AllowLoopbackWebhooks, "accept and deliver to loopback webhook URLs (local testing only)")
	fs.IntVar(&cfg.TrackerWorkers, "tracker-workers", cfg.TrackerWorkers, "tracked swaps polled at their provider at once")
	fs.DurationVar(&cfg.TrackerPollTimeout, "tracker-poll-timeout", cfg.TrackerPollTimeout, "timeout of one poll of a tracked swap")
	fs.DurationVar(&cfg.Quote.Deadline, "quote-deadline", cfg.Quote.Deadline, "deadline of a quote's provider race")
	fs.DurationVar(&cfg.Quote.MinWait, "quote-min-wait", cfg.Quote.MinWait, "default timing strategy: how long every leg of a race is waited for before the expected results end it (a request's minWaitMs overrides it)")
	fs.IntVar(&cfg.Quote.ExpectedResults, "quote-expected-results", cfg.Quote.ExpectedResults, "default timing strategy: routes that end a race once the minimum wait has passed (0: every leg; a request's expectedResults overrides it)")
	fs.DurationVar(&cfg.Quote.ReduceEvery, "quote-reduce-every", cfg.Quote.ReduceEvery, "default timing strategy: one result fewer is expected each time this passes after the minimum wait (0: never; a request's reduceEveryMs overrides it)")
	fs.BoolVar(&cfg.Quote.NoBreakers, "no-breakers", cfg.Quote.NoBreakers, "turn the provider legs' breakers off: every leg is sent, whatever its recent calls (a dead tool then costs every quote its deadline)")
	fs.IntVar(&cfg.Quote.BreakerWindow, "breaker-window", cfg.Quote.BreakerWindow, "recent calls of a provider leg its breaker judges")
	fs.Float64Var(&cfg.Quote.BreakerFailureRatio, "breaker-failure-ratio", cfg.Quote.BreakerFailureRatio, "share of failed or timed-out calls in a leg's window that opens its breaker (the leg is skipped)")
	fs.IntVar(&cfg.Quote.BreakerMinCalls, "breaker-min-calls", cfg.Quote.BreakerMinCalls, "calls a leg's window must hold before its breaker may open")
	fs.DurationVar(&cfg.Quote.BreakerCoolDown, "breaker-cooldown", cfg.Quote.BreakerCoolDown, "how long an open breaker skips its leg before one probe may close it")
	fs.DurationVar(&cfg.Quote.LedgerSyncInterval, "ledger-sync-interval", cfg.Quote.LedgerSyncInterval, "least time between two synced ledger commits under load; partner quotes arriving faster share a commit")
	fs.IntVar(&cfg.Quote.LedgerMaxBatch, "ledger-max-batch", cfg.Quote.LedgerMaxBatch, "partner quote records per ledger commit at most; a full batch does not wait for the sync interval")
	fs.IntVar(&cfg.Quote.LedgerBusyBatch, "ledger-busy-batch", cfg.Quote.LedgerBusyBatch, "records in a ledger commit from which the ledger counts as busy and spaces its commits by the sync interval")
	fs.IntVar(&cfg.Quote.LedgerMaxUnsynced, "ledger-max-unsynced", cfg.Quote.LedgerMaxUnsynced, "fee-free partner quote records queued without their quote waiting; past it a quote waits for its record")
	fs.IntVar(&cfg.Quote.TicketBufferBytes, "ticket-buffer-bytes", cfg.Quote.TicketBufferBytes, "bytes of issued quotes' tickets held in memory until committed; past it a quote waits for the commit")
	fs.DurationVar(&cfg.Quote.TicketGrace, "ticket-grace", cfg.Quote.TicketGrace, "how long an issued quote's ticket is kept past its expiry")
	fs.DurationVar(&cfg.Quote.QuoteRetention, "quote-retention", cfg.Quote.QuoteRetention, "how long past its expiry an issued quote is kept for tracking (GET /v1/status by quoteId, or by a txHash broadcast without execute) though no longer executable; 0 keeps it --ticket-grace only. Each quote keeps its ticket, some 1.6 KiB on disk and 16 bytes of index in memory, and some 75 bytes of call-reference index in the store: at 1,000 quotes/s, 24h keep some 140 GB and 6.5 GB on disk and 1.4 GB of memory")
	fs.DurationVar(&cfg.Quote.TicketSweepInterval, "ticket-sweep-interval", cfg.Quote.TicketSweepInterval, "how often expired tickets are dropped")
	fs.DurationVar(&cfg.Quote.TicketCommitInterval, "ticket-commit-interval", cfg.Quote.TicketCommitInterval, "least time between two commits of tickets to the ticket log; tickets arriving meanwhile share the write")
	fs.IntVar(&cfg.Quote.WarmGoroutines, "warm-goroutines", cfg.Quote.WarmGoroutines, "long-lived goroutines running the quote path's actor mailboxes (0: 64 per core)")
	fs.IntVar(&cfg.Quote.WarmThroughput, "warm-throughput", cfg.Quote.WarmThroughput, "messages a quote-path actor's mailbox handles before it yields its goroutine")
	fs.IntVar(&cfg.Quote.PoolSize, "provider-pool-size", cfg.Quote.PoolSize, "worker actors per provider without a network upstream (one with an upstream URL or --pulse-rpc node: 1024, see --provider-pool-sizes)")
	fs.IntVar(&cfg.Quote.QueuePerWorker, "provider-queue-per-worker", cfg.Quote.QueuePerWorker, "legs a provider pool queues per worker when all are busy; past it a leg is refused at once")
	fs.Func("provider-pool-sizes", "per-provider pool sizes as JSON, e.g. {\"aggregator\":128}", func(v string) error {
		return json.Unmarshal([]byte(v), &cfg.Quote.PoolSizes)
	})
	fs.Func("sandbox-tools", "sandbox latency and failure injection per tool as JSON, e.g. {\"sbx-canal\":{\"latencyMs\":300,\"failureRate\":0.1}}", func(v string) error {
		return json.Unmarshal([]byte(v), &cfg.Quote.SandboxTools)
	})
	fs.Float64Var(&cfg.SandboxBridgeScale, "sandbox-bridge-scale", cfg.SandboxBridgeScale, "sandbox bridges take the quoted duration times this, the warp route's relayer this many minutes (0: deliver at once)")
	fs.DurationVar(&cfg.SandboxArbitragePeriod, "sandbox-arbitrage-period", cfg.SandboxArbitragePeriod, "how often the sandbox's arbitrageur trades chain 369's PulseX pools back to their reference prices (0: 5s; negative: never, a moved pool stays moved)")
	fs.DurationVar(&cfg.SandboxOnrampStep, "sandbox-onramp-step", cfg.SandboxOnrampStep, "the sandbox on-ramp's delay from payment to crypto sent, and from there to completion (0: 2s)")
	fs.StringVar(&cfg.SMTPURL, "smtp-url", cfg.SMTPURL, "SMTP relay of the partner portal's sign-in codes, smtp://[user:password@]host[:port] (STARTTLS when offered); without it, sandbox mode keeps them in the sandbox mailbox (GET /v1/sandbox/mailbox) and live mode serves no portal")
	fs.StringVar(&cfg.SMTPFrom, "smtp-from", cfg.SMTPFrom, "sender address of the portal's mail, e.g. \"Swapgate <portal@example.com>\" (required with --smtp-url)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "the service's address as browsers reach it, the base of on-ramp checkout URLs and of the logoURI of tokens, chains and tools (default: http:// and --addr)")
	fs.Float64Var(&cfg.SandboxBridgeFailureRate, "sandbox-bridge-failure-rate", cfg.SandboxBridgeFailureRate, "share of sandbox bridges that fail: a swap's is refunded on the source chain, a multi-step deposit's ends FAILED")
	// Each upstream declares its own settings (app.Upstreams).
	for _, u := range app.Upstreams() {
		for _, s := range u.Settings {
			fs.Var(upstreamValue{q: &cfg.Quote, s: s}, s.Flag, s.Usage)
		}
	}
	fs.StringVar(&cfg.OnrampProvider, "onramp-provider", cfg.OnrampProvider, "live mode's on-ramp provider: moonpay, or empty for no on-ramp in live mode (sandbox mode always serves the hosted sandbox checkout)")
	fs.StringVar(&cfg.MoonPay.APIURL, "moonpay-api-url", cfg.MoonPay.APIURL, "MoonPay API base URL (default https://api.moonpay.com)")
	fs.StringVar(&cfg.MoonPay.WidgetURL, "moonpay-widget-url", cfg.MoonPay.WidgetURL, "MoonPay widget URL the checkout sends users to (default https://buy.moonpay.com)")
	fs.StringVar(&cfg.MoonPay.APIKey, "moonpay-api-key", cfg.MoonPay.APIKey, "MoonPay publishable key (pk_…)")
	fs.StringVar(&cfg.MoonPay.SecretKey, "moonpay-secret-key", cfg.MoonPay.SecretKey, "MoonPay secret key (sk_…): signs widget URLs and authenticates transaction lookups")
	fs.StringVar(&cfg.MoonPay.WebhookKey, "moonpay-webhook-key", cfg.MoonPay.WebhookKey, "MoonPay webhook key (wk_…): verifies the webhooks MoonPay posts to /onramp/webhooks/moonpay")
	fs.DurationVar(&cfg.Quote.UpstreamTimeout, "upstream-timeout", cfg.Quote.UpstreamTimeout, "timeout of one upstream call")
	fs.IntVar(&cfg.StoreMemTableSize, "store-memtable-size", cfg.StoreMemTableSize, "bytes of the Pebble store's memtable (0: 32 MiB)")
	fs.IntVar(&cfg.StoreCacheSize, "store-cache-size", cfg.StoreCacheSize, "bytes of the Pebble store's block cache (0: 64 MiB)")
	fs.IntVar(&cfg.MutexProfileFraction, "pprof-mutex-fraction", cfg.MutexProfileFraction, "sample one in this many mutex contention events for /debug/pprof/mutex on the admin listener (0: off)")
	fs.IntVar(&cfg.BlockProfileRate, "pprof-block-rate", cfg.BlockProfileRate, "sample one blocking event per this many nanoseconds blocked for /debug/pprof/block on the admin listener (0: off)")
	fs.Func("evm-rpc", "CHAINID=URL: read GET /v1/balances of that chain, and (sandbox mode) the step-1 transactions of deposit registrations there, from its node (repeatable, or comma-separated)", func(v string) error {
		return chainURLs(v, &cfg.EVMRPC)
	})
	fs.Func("pulse-rpc", "CHAINID=URL: read pulseroute chain state on chain (repeatable, or comma-separated)", func(v string) error {
		return chainURLs(v, &cfg.Quote.PulseRPC)
	})
	fs.DurationVar(&cfg.Quote.PulseReservesMaxAge, "pulse-reserves-max-age", cfg.Quote.PulseReservesMaxAge, "price the chain-369 PulseX leg from a snapshot of the pairs' reserves read from --pulse-rpc's chain-369 node (getReserves once a block) while it was seen current within this age; older, the router's getAmountsOut prices it over eth_call (0: always the router)")
	fs.Func("pulse-sender-contract", "CHAINID=ADDRESS: Swapgate's sender contract on that warp-route chain, which live direct inbound quotes call (repeatable, or comma-separated)", func(v string) error {
		return chainURLs(v, &cfg.Quote.Pulse.Senders)
	})
	fs.Func("pulse-inbound-receiver", "CHAINID=ADDRESS: Swapgate's inbound receiver on that warp-route chain, to which live multi-step quotes deliver step 1 (repeatable, or comma-separated)", func(v string) error {
		return chainURLs(v, &cfg.Quote.Pulse.Receivers)
	})
	fs.Func("gas-rpc", "CHAINID=URL: read this chain's gas with eth_feeHistory (repeatable, or comma-separated)", func(v string) error {
		return chainURLs(v, &cfg.GasRPC)
	})
	fs.StringVar(&cfg.Operator.SignerURL, "signer-url", cfg.Operator.SignerURL, "the external signer (web3signer, Clef) that signs the operator's transactions with eth_signTransaction: an http(s) or ws(s) URL or an IPC socket's path; empty signs with the sealed key of swapgate operator-key create")
	fs.StringVar(&cfg.Operator.SignerAddress, "signer-address", cfg.Operator.SignerAddress, "the operator account the external signer at --signer-url signs for (required with it)")
	fs.Uint64Var(&cfg.Tx.Confirmations, "confirmations", cfg.Tx.Confirmations, "blocks, its own included, that make the operator's transaction final (0: 1 in sandbox mode, 12 in live mode)")
	fs.DurationVar(&cfg.Tx.BumpAfter, "tx-bump-after", cfg.Tx.BumpAfter, "how long the operator's transaction waits to be mined before it is replaced with both fees 12.5% higher")
	fs.Func("tx-fee-cap", "CHAINID=GWEI: the highest maxFeePerGas of the operator's transactions on that chain (repeatable, or comma-separated; default none)", func(v string) error {
		return chainGwei(v, &cfg.Tx.FeeCapGwei)
	})
	fs.Float64Var(&cfg.Tx.MinBalance, "operator-min-balance", cfg.Tx.MinBalance, "native coins (whole units) under which the operator's balance on a chain is logged as a warning and shown by the metrics (0: never)")
	return fs
}

// chainGwei parses CHAINID=GWEI pairs, comma-separated, into m.
func chainGwei(v string, m *map[uint64]float64) error {
	for _, part := range strings.Split(v, ",") {
		id, g, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseUint(id, 10, 64)
		f, ferr := strconv.ParseFloat(g, 64)
		if !ok || err != nil || ferr != nil {
			return fmt.Errorf("want CHAINID=GWEI, got %q", part)
		}
		if *m == nil {
			*m = make(map[uint64]float64)
		}
		(*m)[n] = f
	}
	return nil
}

// upstreamValue is an upstream's setting as a flag.
type upstreamValue struct {
	q *app.QuoteConfig
	s app.Setting
}

func (v upstreamValue) String() string {
	if v.q == nil {
		return ""
	}
	return v.s.Get(v.q)
}

func (v upstreamValue) Set(s string) error {
	v.s.Set(v.q, s)
	return nil
}

// chainURLs parses CHAINID=URL pairs, comma-separated, into m.
func chainURLs(v string, m *map[uint64]string) error {
	for _, part := range strings.Split(v, ",") {
		id, url, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || url == "" {
			return fmt.Errorf("want CHAINID=URL, got %q", part)
		}
		if *m == nil {
			*m = make(map[uint64]string)
		}
		(*m)[n] = url
	}
	return nil
}

// loadServeConfig resolves the serve options from defaults, the config
// file, the environment and the flags.
func loadServeConfig(args []string, getenv func(string) string, stderr io.Writer) (app.Config, string, error) {
	var configFile, logLevel string
	probe := app.DefaultConfig()
	pfs := serveFlags(&probe, &configFile, &logLevel)
	pfs.SetOutput(io.Discard)
	if err := pfs.Parse(args); err != nil {
		pfs.SetOutput(stderr)
		pfs.Usage()
		return app.Config{}, "", err
	}
	if configFile == "" {
		configFile = getenv("SWAPGATE_CONFIG")
	}
	cfg := app.DefaultConfig()
	fs := serveFlags(&cfg, new(string), &logLevel)
	fs.SetOutput(stderr)
	if configFile != "" {
		b, err := os.ReadFile(configFile)
		if err != nil {
			return app.Config{}, "", fmt.Errorf("read config: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return app.Config{}, "", fmt.Errorf("decode config %s: %w", configFile, err)
		}
		for k, v := range m {
			val := fmt.Sprint(v)
			if _, nested := v.(map[string]any); nested {
				b, _ := json.Marshal(v)
				val = string(b)
			}
			if err := fs.Set(k, val); err != nil {
				return app.Config{}, "", fmt.Errorf("config %s: option %q: %w", configFile, k, err)
			}
		}
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "config" {
			return
		}
		env := "SWAPGATE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("environment %s: %w", env, err)
			}
		}
	})
	if envErr != nil {
		return app.Config{}, "", envErr
	}
	if err := fs.Parse(args); err != nil {
		return app.Config{}, "", err
	}
	return cfg, logLevel, nil
}

func runServe(args []string, _, stderr io.Writer) int {
	cfg, level, err := loadServeConfig(args, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = validateServeConfig(&cfg)
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "swapgate serve: %s\n", line)
		}
		return 2
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		fmt.Fprintf(stderr, "swapgate serve: --log-level: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: lv}))
	cfg.Logger = log

	runtime.SetMutexProfileFraction(cfg.MutexProfileFraction)
	runtime.SetBlockProfileRate(cfg.BlockProfileRate)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.Start(ctx, cfg)
	if err != nil {
		log.Error("start failed", slog.Any("err", err))
		return 1
	}
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-a.Done():
		log.Error("server stopped", slog.Any("err", err))
		code = 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := a.Close(sctx); err != nil {
		log.Error("shutdown", slog.Any("err", err))
		code = 1
	}
	log.Info("stopped")
	return code
}
