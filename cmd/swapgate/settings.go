package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/adapters/smtpmail"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// setting is one row of the serve options' validation: the flag it
// checks (its environment variable and config-file key are the same
// setting) and the check of its value in a loaded configuration. The
// bounds are wide: they refuse values that cannot work (a pool of no
// workers, a zero timeout, a rate above one) or that are surely a slip of a
// unit (a deadline of an hour), not values an operator might choose.
type setting struct {
	flag  string
	check func(c *app.Config) error
}

// uncheckedFlags are the serve flags that have no row, each with why: any
// value is acceptable.
var uncheckedFlags = withUpstreamCredentials(map[string]string{
	"config":                  "read before the others; a missing or malformed file is refused as it is read",
	"log-level":               "checked where it is parsed, with slog's own message",
	"allow-loopback-webhooks": "a boolean",
	"no-breakers":             "a boolean",
})

// Size bounds shared by several rows.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// serveSettings is the validation table of `swapgate serve`: one row per
// flag but those of uncheckedFlags, the upstreams' settings last, as each
// upstream declares them (upstreamSettings).
var serveSettings = append([]setting{
	{"mode", func(c *app.Config) error {
		if err := oneOf(func(c *app.Config) string { return c.Mode }, app.ModeSandbox, app.ModeLive)(c); err != nil {
			return err
		}
		return app.CheckLiveUpstreams(c)
	}},
	{"addr", func(c *app.Config) error { return hostPort(c.Addr) }},
	{"data", func(c *app.Config) error {
		if strings.TrimSpace(c.DataDir) == "" {
			return errors.New("must name a directory")
		}
		return nil
	}},
	{"store", func(c *app.Config) error { return app.CheckStoreURL(c.Store) }},
	{"cluster-name", app.CheckCluster},
	{"cluster-bind", func(c *app.Config) error {
		if c.Cluster.Bind == "" {
			return nil
		}
		return hostPort(c.Cluster.Bind)
	}},
	{"cluster-peers", func(c *app.Config) error {
		for _, p := range app.SplitList(c.Cluster.Peers) {
			if err := hostPort(p); err != nil {
				return err
			}
		}
		return nil
	}},
	{"cluster-etcd", func(c *app.Config) error {
		for _, e := range app.SplitList(c.Cluster.Etcd) {
			if strings.Contains(e, "://") {
				if err := httpURL(e); err != nil {
					return err
				}
			} else if err := hostPort(e); err != nil {
				return err
			}
		}
		return nil
	}},
	durIn(func(c *app.Config) time.Duration { return c.ReadTimeout }, "read-timeout", 100*time.Millisecond, 10*time.Minute),
	durIn(func(c *app.Config) time.Duration { return c.WriteTimeout }, "write-timeout", 100*time.Millisecond, 10*time.Minute),
	durIn(func(c *app.Config) time.Duration { return c.IdleTimeout }, "idle-timeout", time.Second, time.Hour),
	durIn(func(c *app.Config) time.Duration { return c.ShutdownTimeout }, "shutdown-timeout", time.Second, 10*time.Minute),
	intIn(func(c *app.Config) int { return c.AnonHeavyPerMin }, "anon-heavy-per-min", 0, 1_000_000_000),
	intIn(func(c *app.Config) int { return c.AnonReadPerMin }, "anon-read-per-min", 0, 1_000_000_000),
	{"trusted-proxies", func(c *app.Config) error { _, err := app.ParseTrustedProxies(c.TrustedProxies); return err }},
	durIn(func(c *app.Config) time.Duration { return c.PriceInterval }, "price-interval", 100*time.Millisecond, time.Hour),
	{"price-max-age", func(c *app.Config) error {
		// Older than the interval, or every price would vanish between two
		// refreshes.
		if v := c.PriceMaxAge; v <= c.PriceInterval || v > 24*time.Hour {
			return fmt.Errorf("must be longer than --price-interval (%v) and at most 24h0m0s, got %v", c.PriceInterval, v)
		}
		return nil
	}},
	durIn(func(c *app.Config) time.Duration { return c.GasInterval }, "gas-interval", 100*time.Millisecond, time.Hour),
	{"gas-max-age", func(c *app.Config) error {
		// Longer than the interval, or every record would vanish between
		// two refreshes.
		iv := c.GasInterval
		if iv < 100*time.Millisecond || iv > time.Hour {
			iv = 0 // --gas-interval is refused on its own row
		}
		if v := c.GasMaxAge; v <= iv || v > 24*time.Hour {
			return fmt.Errorf("must be longer than --gas-interval (%v) and at most 24h0m0s, got %v", c.GasInterval, v)
		}
		return nil
	}},
	durIn(func(c *app.Config) time.Duration { return c.RefreshTimeout }, "refdata-refresh-timeout", 100*time.Millisecond, time.Minute),
	intZeroOrIn(func(c *app.Config) int { return c.RefdataCacheSize }, "refdata-cache-size", 16, 1<<20),
	{"gas-rpc", func(c *app.Config) error { return rpcURLs(c.GasRPC) }},
	durIn(func(c *app.Config) time.Duration { return c.RPCTimeout }, "rpc-timeout", 100*time.Millisecond, time.Minute),
	durIn(func(c *app.Config) time.Duration { return c.Quote.Deadline }, "quote-deadline", 10*time.Millisecond, time.Minute),
	durUpToDeadline(func(c *app.Config) time.Duration { return c.Quote.MinWait }, "quote-min-wait"),
	intIn(func(c *app.Config) int { return c.Quote.ExpectedResults }, "quote-expected-results", 0, quote.MaxExpectedResults),
	durUpToDeadline(func(c *app.Config) time.Duration { return c.Quote.ReduceEvery }, "quote-reduce-every"),
	intIn(func(c *app.Config) int { return c.Quote.BreakerWindow }, "breaker-window", 1, 10_000),
	floatIn(func(c *app.Config) float64 { return c.Quote.BreakerFailureRatio }, "breaker-failure-ratio", 0.01, 1),
	{"breaker-min-calls", func(c *app.Config) error {
		v, w := c.Quote.BreakerMinCalls, c.Quote.BreakerWindow
		if w < 1 || w > 10_000 {
			w = 10_000 // --breaker-window is refused on its own row
		}
		if v < 1 || v > w {
			return fmt.Errorf("must be between 1 and --breaker-window (%d), got %d", w, v)
		}
		return nil
	}},
	durIn(func(c *app.Config) time.Duration { return c.Quote.BreakerCoolDown }, "breaker-cooldown", 100*time.Millisecond, time.Hour),
	intIn(func(c *app.Config) int { return c.Quote.PoolSize }, "provider-pool-size", 1, 4096),
	{"provider-pool-sizes", func(c *app.Config) error { return poolSizes(c.Quote.PoolSizes) }},
	intIn(func(c *app.Config) int { return c.Quote.QueuePerWorker }, "provider-queue-per-worker", 1, 1024),
	intZeroOrIn(func(c *app.Config) int { return c.StoreMemTableSize }, "store-memtable-size", mib, 4*gib-1),
	intZeroOrIn(func(c *app.Config) int { return c.StoreCacheSize }, "store-cache-size", mib, 1024*gib),
	intIn(func(c *app.Config) int { return c.Quote.WarmGoroutines }, "warm-goroutines", 0, 65536),
	intIn(func(c *app.Config) int { return c.Quote.WarmThroughput }, "warm-throughput", 1, 100_000),
	intIn(func(c *app.Config) int { return c.MutexProfileFraction }, "pprof-mutex-fraction", 0, 1_000_000),
	intIn(func(c *app.Config) int { return c.BlockProfileRate }, "pprof-block-rate", 0, 1_000_000_000),
	durIn(func(c *app.Config) time.Duration { return c.Quote.LedgerSyncInterval }, "ledger-sync-interval", 0, time.Second),
	intIn(func(c *app.Config) int { return c.Quote.LedgerMaxBatch }, "ledger-max-batch", 1, 65536),
	intIn(func(c *app.Config) int { return c.Quote.LedgerBusyBatch }, "ledger-busy-batch", 1, 65536),
	intIn(func(c *app.Config) int { return c.Quote.LedgerMaxUnsynced }, "ledger-max-unsynced", 1, 1<<24),
	intIn(func(c *app.Config) int { return c.Quote.TicketBufferBytes }, "ticket-buffer-bytes", 64*kib, gib),
	durIn(func(c *app.Config) time.Duration { return c.Quote.TicketGrace }, "ticket-grace", time.Second, 24*time.Hour),
	durIn(func(c *app.Config) time.Duration { return c.Quote.TicketSweepInterval }, "ticket-sweep-interval", time.Second, time.Hour),
	durIn(func(c *app.Config) time.Duration { return c.Quote.QuoteRetention }, "quote-retention", 0, 30*24*time.Hour),
	durIn(func(c *app.Config) time.Duration { return c.Quote.TicketCommitInterval }, "ticket-commit-interval", time.Millisecond, time.Second),
	durIn(func(c *app.Config) time.Duration { return c.IdempotencyWait }, "idempotency-wait", 100*time.Millisecond, 5*time.Minute),
	intIn(func(c *app.Config) int { return c.AuthCacheSize }, "auth-cache-size", 1, 1<<24),
	{"sandbox-tools", sandboxTools},
	{"onramp-provider", onrampProvider},
	moonPaySetting("moonpay-api-url", func(c *app.Config) string { return c.MoonPay.APIURL }, false, httpURL),
	moonPaySetting("moonpay-widget-url", func(c *app.Config) string { return c.MoonPay.WidgetURL }, false, widgetURL),
	moonPaySetting("moonpay-api-key", func(c *app.Config) string { return c.MoonPay.APIKey }, true, nil),
	moonPaySetting("moonpay-secret-key", func(c *app.Config) string { return c.MoonPay.SecretKey }, true, nil),
	moonPaySetting("moonpay-webhook-key", func(c *app.Config) string { return c.MoonPay.WebhookKey }, true, nil),
	durIn(func(c *app.Config) time.Duration { return c.Quote.UpstreamTimeout }, "upstream-timeout", 100*time.Millisecond, 5*time.Minute),
	{"pulse-rpc", func(c *app.Config) error { return rpcURLs(c.Quote.PulseRPC) }},
	{"pulse-reserves-max-age", func(c *app.Config) error {
		// Under a second, a snapshot would go stale between two polls of
		// the node's block number.
		if v := c.Quote.PulseReservesMaxAge; v != 0 && (v < time.Second || v > time.Hour) {
			return fmt.Errorf("must be 0 (the router prices every leg) or between 1s and 1h0m0s, got %s", v)
		}
		return nil
	}},
	{"pulse-sender-contract", func(c *app.Config) error {
		return app.PulseContracts{Senders: c.Quote.Pulse.Senders}.Check()
	}},
	{"pulse-inbound-receiver", func(c *app.Config) error {
		return app.PulseContracts{Receivers: c.Quote.Pulse.Receivers}.Check()
	}},
	floatIn(func(c *app.Config) float64 { return c.SandboxBridgeScale }, "sandbox-bridge-scale", 0, 1000),
	floatIn(func(c *app.Config) float64 { return c.SandboxBridgeFailureRate }, "sandbox-bridge-failure-rate", 0, 1),
	durIn(func(c *app.Config) time.Duration { return c.SandboxOnrampStep }, "sandbox-onramp-step", 0, time.Hour),
	durIn(func(c *app.Config) time.Duration { return c.SandboxArbitragePeriod }, "sandbox-arbitrage-period", -time.Hour, time.Hour),
	{"public-url", func(c *app.Config) error { return httpURL(c.PublicURL) }},
	{"smtp-url", func(c *app.Config) error {
		if c.SMTPURL == "" {
			return nil
		}
		_, err := smtpmail.ParseURL(c.SMTPURL)
		return err
	}},
	{"smtp-from", func(c *app.Config) error {
		switch {
		case c.SMTPURL == "" && c.SMTPFrom == "":
			return nil
		case c.SMTPURL == "":
			return errors.New("needs --smtp-url")
		}
		return smtpmail.CheckFrom(c.SMTPFrom)
	}},
	{"evm-rpc", func(c *app.Config) error { return rpcURLs(c.EVMRPC) }},
	{"signer-url", func(c *app.Config) error {
		if flag, err := c.Operator.CheckSigner(); flag == "signer-url" {
			return err
		}
		return nil
	}},
	{"signer-address", func(c *app.Config) error {
		if flag, err := c.Operator.CheckSigner(); flag == "signer-address" {
			return err
		}
		return nil
	}},
	{"confirmations", func(c *app.Config) error {
		if v := c.Tx.Confirmations; v > 1000 {
			return fmt.Errorf("must be between 0 and 1000, got %d", v)
		}
		return nil
	}},
	durIn(func(c *app.Config) time.Duration { return c.Tx.BumpAfter }, "tx-bump-after", time.Second, time.Hour),
	{"tx-fee-cap", func(c *app.Config) error {
		for id, g := range c.Tx.FeeCapGwei {
			if !(g > 0 && g <= 1e12) {
				return fmt.Errorf("chain %d: must be between 0 and 1e12 gwei (exclusive of 0), got %g", id, g)
			}
		}
		return nil
	}},
	floatIn(func(c *app.Config) float64 { return c.Tx.MinBalance }, "operator-min-balance", 0, 1e12),
	intIn(func(c *app.Config) int { return c.WebhookPoolSize }, "webhook-pool-size", 1, 1024),
	durIn(func(c *app.Config) time.Duration { return c.WebhookRetryBase }, "webhook-retry-base", time.Millisecond, time.Hour),
	intIn(func(c *app.Config) int { return c.WebhookMaxAttempts }, "webhook-max-attempts", 1, 100),
	durIn(func(c *app.Config) time.Duration { return c.WebhookTimeout }, "webhook-timeout", 100*time.Millisecond, 5*time.Minute),
	durIn(func(c *app.Config) time.Duration { return c.WebhookScanInterval }, "webhook-scan-interval", 10*time.Millisecond, time.Hour),
	intIn(func(c *app.Config) int { return c.WebhookScanBatch }, "webhook-scan-batch", 1, 1<<20),
	intIn(func(c *app.Config) int { return c.WebhookQueuePerWebhook }, "webhook-queue-per-webhook", 1, 65536),
	intIn(func(c *app.Config) int { return c.WebhookCommitBatch }, "webhook-commit-batch", 1, 65536),
	{"webhook-inflight-per-webhook", func(c *app.Config) error {
		return zeroOrUpToPool(c.WebhookInflightPerWebhook, c.WebhookPoolSize)
	}},
	{"webhook-inflight-per-partner", func(c *app.Config) error {
		return zeroOrUpToPool(c.WebhookInflightPerPartner, c.WebhookPoolSize)
	}},
	intIn(func(c *app.Config) int { return c.TrackerWorkers }, "tracker-workers", 1, 4096),
	durIn(func(c *app.Config) time.Duration { return c.TrackerPollTimeout }, "tracker-poll-timeout", 100*time.Millisecond, 5*time.Minute),
}, upstreamSettings()...)

// upstreamSettings are the rows of the upstreams' settings, one loop over
// their declarations: a URL is empty or an absolute http(s) URL, an EVM
// address empty or an address; a credential has no row (see
// withUpstreamCredentials).
func upstreamSettings() []setting {
	var rows []setting
	for _, u := range app.Upstreams() {
		for _, s := range u.Settings {
			get := s.Get
			switch s.Kind {
			case app.SettingURL:
				rows = append(rows, setting{s.Flag, func(c *app.Config) error { return httpURL(get(&c.Quote)) }})
			case app.SettingEVMAddress:
				rows = append(rows, setting{s.Flag, func(c *app.Config) error { return evmAddress(get(&c.Quote)) }})
			}
		}
	}
	return rows
}

// withUpstreamCredentials adds the upstreams' credentials to the
// unchecked flags: any value is acceptable.
func withUpstreamCredentials(m map[string]string) map[string]string {
	for _, u := range app.Upstreams() {
		for _, s := range u.Settings {
			if s.Kind == app.SettingCredential {
				m[s.Flag] = "an opaque credential"
			}
		}
	}
	return m
}

// evmAddress checks an optional EVM address that receives funds: empty,
// or 0x and 40 hexadecimal digits, not all zero.
func evmAddress(s string) error {
	if s == "" {
		return nil
	}
	if len(s) != 42 || !strings.HasPrefix(s, "0x") || strings.Trim(s[2:], "0123456789abcdefABCDEF") != "" {
		return fmt.Errorf("must be an EVM address (0x and 40 hexadecimal digits), got %q", s)
	}
	if strings.Trim(s[2:], "0") == "" {
		return errors.New("must not be the zero address, which no one can spend from")
	}
	return nil
}

// validateServeConfig checks every setting of c against its row of
// serveSettings and returns every refusal, one a line, each naming its
// flag, so that an operator fixes them all in one go rather than one per
// start.
func validateServeConfig(c *app.Config) error {
	var errs []error
	for _, s := range serveSettings {
		if err := s.check(c); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", s.flag, err))
		}
	}
	return errors.Join(errs...)
}

func intIn(get func(*app.Config) int, flag string, lo, hi int) setting {
	return setting{flag, func(c *app.Config) error {
		if v := get(c); v < lo || v > hi {
			return fmt.Errorf("must be between %d and %d, got %d", lo, hi, v)
		}
		return nil
	}}
}

// intZeroOrIn is intIn for a setting whose 0 means its default.
func intZeroOrIn(get func(*app.Config) int, flag string, lo, hi int) setting {
	return setting{flag, func(c *app.Config) error {
		if v := get(c); v != 0 && (v < lo || v > hi) {
			return fmt.Errorf("must be 0 (the default) or between %d and %d, got %d", lo, hi, v)
		}
		return nil
	}}
}

func durIn(get func(*app.Config) time.Duration, flag string, lo, hi time.Duration) setting {
	return setting{flag, func(c *app.Config) error {
		if v := get(c); v < lo || v > hi {
			return fmt.Errorf("must be between %s and %s, got %s", lo, hi, v)
		}
		return nil
	}}
}

// durUpToDeadline checks a timing-strategy duration: from 0 to
// --quote-deadline, past which it would never apply.
func durUpToDeadline(get func(*app.Config) time.Duration, flag string) setting {
	return setting{flag, func(c *app.Config) error {
		if v := get(c); v < 0 || v > c.Quote.Deadline {
			return fmt.Errorf("must be between 0s and --quote-deadline (%s), got %s", c.Quote.Deadline, v)
		}
		return nil
	}}
}

func floatIn(get func(*app.Config) float64, flag string, lo, hi float64) setting {
	return setting{flag, func(c *app.Config) error {
		// A NaN fails both comparisons: it is refused by the negation.
		if v := get(c); !(v >= lo && v <= hi) {
			return fmt.Errorf("must be between %g and %g, got %g", lo, hi, v)
		}
		return nil
	}}
}

func oneOf(get func(*app.Config) string, values ...string) func(*app.Config) error {
	return func(c *app.Config) error {
		if v := get(c); !slices.Contains(values, v) {
			return fmt.Errorf("must be %s, got %q", strings.Join(values, " or "), v)
		}
		return nil
	}
}

// hostPort checks a listen address: a host (which may be empty) and a port
// number.
func hostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port, got %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port must be a number from 0 to 65535, got %q", port)
	}
	return nil
}

// httpURL checks an optional base URL: empty, or absolute with an http or
// https scheme and a host.
func httpURL(s string) error {
	if s == "" {
		return nil
	}
	return absoluteURL(s, "http", "https")
}

func absoluteURL(s string, schemes ...string) error {
	u, err := url.Parse(s)
	if err != nil || !slices.Contains(schemes, u.Scheme) || u.Host == "" {
		return fmt.Errorf("must be an absolute %s URL, got %q", strings.Join(schemes, " or "), s)
	}
	return nil
}

// rpcURLs checks the JSON-RPC endpoints of a CHAINID=URL flag.
func rpcURLs(m map[uint64]string) error {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := absoluteURL(m[id], "http", "https", "ws", "wss"); err != nil {
			return fmt.Errorf("chain %d: %w", id, err)
		}
	}
	return nil
}

// poolSizes checks --provider-pool-sizes: known providers, each with a
// size provider-pool-size would accept.
func poolSizes(m map[string]int) error {
	known := app.ProviderNames()
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			return fmt.Errorf("unknown provider %q (want %s)", name, strings.Join(known, ", "))
		}
		if n := m[name]; n < 1 || n > 4096 {
			return fmt.Errorf("%s: must be between 1 and 4096, got %d", name, n)
		}
	}
	return nil
}

// sandboxTools checks --sandbox-tools: tools of the sandbox catalog, with
// a latency below ten minutes, a failure rate that is a share, and no
// negative liquidity or minimum.
func sandboxTools(c *app.Config) error {
	if len(c.Quote.SandboxTools) == 0 {
		return nil
	}
	reg, err := registry.Load()
	if err != nil {
		return err
	}
	cat, err := tools.Load(reg)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(c.Quote.SandboxTools))
	for k := range c.Quote.SandboxTools {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		tc := c.Quote.SandboxTools[k]
		switch _, ok := cat.Tool(k); {
		case !ok:
			return fmt.Errorf("unknown sandbox tool %q", k)
		case tc.LatencyMs < 0 || tc.LatencyMs > 600_000:
			return fmt.Errorf("%s: latencyMs must be between 0 and 600000, got %d", k, tc.LatencyMs)
		case !(tc.FailureRate >= 0 && tc.FailureRate <= 1):
			return fmt.Errorf("%s: failureRate must be between 0 and 1, got %g", k, tc.FailureRate)
		case !(tc.LiquidityUSD >= 0) || !(tc.MinAmountUSD >= 0):
			return fmt.Errorf("%s: liquidityUSD and minAmountUSD must not be negative", k)
		}
	}
	return nil
}

// zeroOrUpToPool checks an in-flight cap of the webhook pool: 0 (derived
// from the pool size) or from 1 to the pool size, beyond which it caps
// nothing.
func zeroOrUpToPool(v, pool int) error {
	if v != 0 && (v < 1 || v > pool) {
		return fmt.Errorf("must be 0 (derived from --webhook-pool-size) or between 1 and --webhook-pool-size (%d), got %d", pool, v)
	}
	return nil
}

// onrampProvider checks --onramp-provider: none, or moonpay in live mode.
// MoonPay in sandbox mode is refused rather than ignored: sandbox mode's
// on-ramp is the hosted sandbox checkout, and an operator who names a real
// provider there has mistaken the mode.
func onrampProvider(c *app.Config) error {
	switch c.OnrampProvider {
	case "":
		return nil
	case app.OnrampMoonPay:
		if c.Mode != app.ModeLive {
			return fmt.Errorf("moonpay serves --mode live only (sandbox mode's on-ramp is the hosted sandbox checkout), got --mode %s", c.Mode)
		}
		return nil
	}
	return fmt.Errorf("must be %s or empty, got %q", app.OnrampMoonPay, c.OnrampProvider)
}

// moonPaySetting is a row of a MoonPay setting: required (a key) or
// optional (an address, MoonPay's own by default) with --onramp-provider
// moonpay, checked by check when given, and refused without it, where it
// would be silently unused.
func moonPaySetting(flag string, get func(*app.Config) string, required bool, check func(string) error) setting {
	return setting{flag, func(c *app.Config) error {
		v := get(c)
		switch {
		case c.OnrampProvider != app.OnrampMoonPay && v != "":
			return errors.New("applies only with --onramp-provider moonpay")
		case c.OnrampProvider != app.OnrampMoonPay:
			return nil
		case required && strings.TrimSpace(v) == "":
			return errors.New("is required with --onramp-provider moonpay")
		case check != nil:
			return check(v)
		}
		return nil
	}}
}

// widgetURL checks --moonpay-widget-url: an http(s) URL without a query,
// to which the signed query is appended.
func widgetURL(s string) error {
	if err := httpURL(s); err != nil {
		return err
	}
	if u, _ := url.Parse(s); u != nil && (u.RawQuery != "" || u.Fragment != "") {
		return fmt.Errorf("must have no query or fragment (the signed query is appended), got %q", s)
	}
	return nil
}
