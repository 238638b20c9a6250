// Package app wires Swapgate together: it opens the store, loads the
// registry, starts the actor system and its background refreshers, builds
// the HTTP edge and the admin listener, and takes them down again in the
// reverse order. The binary's serve command and the end-to-end tests both
// run the service through it, so the tests exercise the real wiring.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/actors/engine"
	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/tickets"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/actors/txm"
	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/adapters/extsigner"
	"github.com/swapgate/swapgate/routing/adapters/gasrpc"
	"github.com/swapgate/swapgate/routing/adapters/moonpay"
	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/breaker"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/routing/sim/simgas"
)

// Modes of the service, reported by GET /v1/ping.
const (
	// ModeSandbox (the default) runs the sandbox chain: the sandbox
	// endpoints (broadcast, faucet, transaction receipts) and GET
	// /v1/balances are served from it, so that a client can play the
	// wallet for every sandbox quote.
	ModeSandbox = "sandbox"
	// ModeLive runs no sandbox chain; those endpoints do not exist. The
	// multi-step deposit registration is served where inbound receivers
	// (the operator account) and --evm-rpc nodes are configured, its
	// evidence read from the source chain's node.
	ModeLive = "live"
)

// Config is everything serve can be told.
type Config struct {
	// Mode is ModeSandbox (also when empty) or ModeLive.
	Mode            string
	Addr            string
	DataDir         string
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	IdleTimeout     time.Duration
	ShutdownTimeout time.Duration
	AnonHeavyPerMin int
	AnonReadPerMin  int
	// TrustedProxies is a comma-separated list of CIDRs or addresses whose
	// X-Forwarded-For header is believed.
	TrustedProxies string
	PriceInterval  time.Duration
	GasInterval    time.Duration
	// PriceMaxAge is how old a price may be, from its observation, and
	// still be served (see refdata.Config.MaxAge).
	PriceMaxAge time.Duration
	// GasMaxAge is how old a gas record may be, from the gas oracle's
	// last answer, and still be served (see refdata.Config.GasMaxAge).
	GasMaxAge time.Duration
	// RefreshTimeout bounds one price or gas read of the reference data's
	// refreshers; RefdataCacheSize is the entries of each of their caches
	// (0: sized from the registry). See refdata.Config.
	RefreshTimeout   time.Duration
	RefdataCacheSize int
	// IdempotencyWait is how long a request waits for another with its
	// Idempotency-Key; AuthCacheSize bounds the partners cached by API key.
	// See edge.Config.
	IdempotencyWait time.Duration
	AuthCacheSize   int
	// GasRPC maps chain ids to JSON-RPC URLs; those chains' gas prices are
	// read with eth_feeHistory instead of the sandbox oracle.
	GasRPC map[uint64]string
	// Quote configures the quote engine and its upstreams.
	Quote  QuoteConfig
	Logger *slog.Logger
	// Webhook delivery; the retry schedule is configurable so that tests run it in seconds. WebhookTLS nil verifies receivers against the system roots (which honour SSL_CERT_FILE).
	WebhookPoolSize, WebhookMaxAttempts int
	WebhookRetryBase                    time.Duration
	AllowLoopbackWebhooks               bool
	WebhookTLS                          *tls.Config
	// The delivery pool's bounds (see webhook.Config): an attempt's
	// timeout, the outbox scan's interval and batch, the due entries held
	// per webhook, the outcomes per synced commit, and the attempts in
	// flight per webhook and per partner (0: derived from the pool size).
	WebhookTimeout, WebhookScanInterval                  time.Duration
	WebhookScanBatch, WebhookQueuePerWebhook             int
	WebhookCommitBatch                                   int
	WebhookInflightPerWebhook, WebhookInflightPerPartner int
	// TrackerWorkers bounds the tracked swaps polled at once and
	// TrackerPollTimeout one poll (see tracker.Options).
	TrackerWorkers     int
	TrackerPollTimeout time.Duration
	// SwapSchedule is how tracked swaps are polled (zero: the default,
	// first after 2 s, backing off to once a minute, for 6 hours).
	SwapSchedule swap.Schedule
	// UsageFlushInterval is how often the edge adds partners' hourly
	// usage counts to the store (zero: edge.DefaultUsageFlushInterval).
	UsageFlushInterval time.Duration
	// StatusStream tunes GET /v1/status/stream (zero fields: the edge's
	// defaults; its horizon is always SwapSchedule's).
	StatusStream edge.StatusStreamConfig
	// SandboxBridgeScale multiplies the quoted duration of a sandbox
	// bridge (0 delivers at the first poll; a multi-step deposit's bridge
	// to 369 takes the scale times a minute). SandboxBridgeFailureRate is
	// the share of sandbox bridges that fail, decided by the source
	// transaction's hash (sandbox.BridgeFails): a swap's or an intents
	// deposit's input is then refunded on its source chain (DONE,
	// REFUNDED), and a multi-step deposit ends FAILED with its USDC left
	// for an operator. It exists so that these endings can be seen and
	// tested through the real service; 0, the default, fails none.
	SandboxBridgeScale       float64
	SandboxBridgeFailureRate float64
	// SandboxOnrampStep is how long the sandbox on-ramp takes from a
	// payment to sending the crypto, and from there to completion (zero:
	// onrampdesk.DefaultStepDelay).
	SandboxOnrampStep time.Duration
	// SandboxArbitragePeriod is how often the sandbox's arbitrage trades
	// chain 369's PulseX pools back to their reference prices after swaps
	// moved them (zero: sandboxchain.DefaultArbitragePeriod; negative: no
	// arbitrage, so that a moved pool stays moved).
	SandboxArbitragePeriod time.Duration
	// Now is the on-ramp desk's clock: when it expires unpaid orders and
	// the time of each transition it makes (nil: time.Now). Tests set it to
	// run the desk later than the real time, as a restart after an order's
	// expiry would; everything else, the edge included, keeps the real
	// clock.
	Now func() time.Time
	// OnrampProvider is live mode's on-ramp provider: "" runs no on-ramp
	// in live mode, OnrampMoonPay runs the desk in live mode on MoonPay
	// with the MoonPay settings (see onramp.go). Sandbox mode's provider is
	// always the hosted sandbox checkout.
	OnrampProvider string
	MoonPay        moonpay.Config
	// OnrampLookupInterval paces live mode's lookups of open orders at the
	// provider (zero: onrampdesk.DefaultLookupInterval).
	OnrampLookupInterval time.Duration
	// SMTPURL (smtp://[user:password@]host[:port]) and SMTPFrom send the
	// partner portal's sign-in codes; without SMTPURL, sandbox mode keeps
	// them in the sandbox mailbox and live mode serves no portal.
	SMTPURL, SMTPFrom string
	// PublicURL is the service's address as users' browsers reach it, the
	// base of on-ramp checkout URLs; empty means http:// and the address
	// the edge listens on.
	PublicURL string
	// EVMRPC maps chain ids to JSON-RPC URLs whose nodes answer
	// GET /v1/balances for those chains and, in sandbox mode, show the
	// step-1 transaction of a multi-step deposit registered there (the
	// sandbox chain answers for the others in sandbox mode).
	EVMRPC map[uint64]string
	// RPCTimeout bounds every read from a chain's JSON-RPC node (those of
	// EVMRPC, GasRPC and Quote.PulseRPC): a node that does not answer
	// within it is UPSTREAM_TIMEOUT to a client waiting on the read (see
	// routing/domain/noderead). Zero takes noderead.DefaultTimeout.
	RPCTimeout time.Duration
	// MutexProfileFraction and BlockProfileRate turn on Go's mutex and
	// block profiles, served with the others on the admin listener. They
	// are process-wide runtime settings, so the binary applies them before
	// Start (runtime.SetMutexProfileFraction, runtime.SetBlockProfileRate);
	// zero leaves the profiles off, which costs nothing.
	MutexProfileFraction int
	BlockProfileRate     int
	// Store is the PostgreSQL URL of the durable state (postgres://…);
	// empty keeps it in Pebble under DataDir (OpenStore, backend.go).
	Store string
	// StoreMemTableSize and StoreCacheSize size the Pebble store's
	// memtable and block cache in bytes (0: the Pebble store's defaults).
	StoreMemTableSize int
	StoreCacheSize    int
	// Cluster makes the node a member of a cluster sharing Store (see
	// cluster.go); zero runs one process.
	Cluster ClusterConfig
	// Operator is how the transaction manager's account signs: the sealed
	// key, or an external signer (operator.go).
	Operator OperatorConfig
	// Tx is the transaction manager's settings (txmanager.go).
	Tx TxConfig
}

// DefaultConfig is what `make run` serves with.
func DefaultConfig() Config {
	ec := edge.DefaultConfig()
	return Config{
		Mode: ModeSandbox,
		Tx:   TxConfig{BumpAfter: DefaultTxBumpAfter},
		// A quoted three-minute bridge takes 18 s in the sandbox.
		SandboxBridgeScale: 0.1,
		Addr:               "127.0.0.1:8080",
		DataDir:            "./data",
		ReadTimeout:        ec.ReadTimeout,
		WriteTimeout:       ec.WriteTimeout,
		IdleTimeout:        ec.IdleTimeout,
		ShutdownTimeout:    15 * time.Second,
		AnonHeavyPerMin:    ec.AnonHeavyPerMin,
		AnonReadPerMin:     ec.AnonReadPerMin,
		PriceInterval:      refdata.DefaultPriceInterval,
		PriceMaxAge:        refdata.DefaultPriceMaxAge,
		GasMaxAge:          refdata.DefaultGasMaxAge,
		GasInterval:        refdata.DefaultGasInterval,
		RefreshTimeout:     refdata.DefaultRefreshTimeout,
		RPCTimeout:         noderead.DefaultTimeout,
		IdempotencyWait:    ec.IdempotencyWait,
		AuthCacheSize:      ec.AuthCacheSize,
		WebhookPoolSize:    webhookpool.DefaultPoolSize, WebhookRetryBase: webhook.DefaultRetryBase, WebhookMaxAttempts: webhook.DefaultMaxAttempts,
		WebhookTimeout: webhookpool.DefaultTimeout, WebhookScanInterval: webhookpool.DefaultScanInterval,
		WebhookScanBatch: webhookpool.DefaultScanBatch, WebhookQueuePerWebhook: webhookpool.DefaultQueuePerWebhook,
		WebhookCommitBatch: webhookpool.DefaultCommitBatch,
		TrackerWorkers:     tracker.DefaultWorkers, TrackerPollTimeout: tracker.DefaultPollTimeout,
		Quote: QuoteConfig{
			Deadline: engine.DefaultDeadline, PoolSize: engine.DefaultPoolSize, QueuePerWorker: engine.DefaultQueuePerWorker,
			MinWait: engine.DefaultMinWait, ExpectedResults: engine.DefaultExpectedResults, ReduceEvery: engine.DefaultReduceEvery,
			BreakerWindow: breaker.DefaultWindow, BreakerFailureRatio: breaker.DefaultFailureRatio,
			BreakerMinCalls: breaker.DefaultMinCalls, BreakerCoolDown: breaker.DefaultCoolDown,
			WarmThroughput: DefaultWarmThroughput, UpstreamTimeout: 10 * time.Second, PulseReservesMaxAge: pulserpc.DefaultReservesMaxAge,
			LedgerSyncInterval: ledger.DefaultSyncInterval, LedgerMaxBatch: ledger.DefaultMaxBatch,
			LedgerBusyBatch: ledger.DefaultBusyBatch, LedgerMaxUnsynced: ledger.DefaultMaxUnsynced,
			TicketBufferBytes: tickets.DefaultMaxPendingBytes, TicketGrace: tickets.DefaultGrace, QuoteRetention: DefaultQuoteRetention,
			TicketSweepInterval: tickets.DefaultSweepEvery, TicketCommitInterval: tickets.DefaultCommitEvery,
		},
	}
}

// App is one running Swapgate.
type App struct {
	cfg    Config
	log    *slog.Logger
	stores *Stores
	sys    *actor.ActorSystem
	// node is this process's cluster membership; nil for a single node.
	node    *cluster.Node
	ref     *refdata.Service
	hooks   *webhookpool.Pool
	quotes  *quoteStack
	tracker *tracker.Tracker
	inbound *inboundrun.Runner
	onramp  *onrampdesk.Desk
	// relayer delivers the sandbox's warp-route messages (sandbox mode).
	relayer *sandboxchain.Relayer
	// evidence reads registrations' step-1 transactions.
	evidence *inbound.EvidenceReader
	chains   *sandboxchain.Service
	// txm is the transaction manager of the operator's account; nil when
	// it does not run (live mode without an operator key).
	txm *txm.Manager
	// extSigner is the external signer the manager signs through
	// (--signer-url), nil with the sealed key.
	extSigner *extsigner.Signer
	// partners are the partner grains' wiring (cluster_partner.go); nil
	// for a single node.
	partners *clusterPartners
	edge     *edge.Server
	admin    *admin.Server
	// payouts hands settlement's transfers to the transaction manager; nil
	// until the manager's part sets it (see payouts.go).
	payouts *payoutSender
	ln      net.Listener
	served  chan error
	stopped atomic.Bool

	// sandbox is the sandbox chains as the service uses them: chains on a
	// single node, the chain grains' proxy in a cluster (sandbox mode).
	sandbox sandboxChains
	// stopArbitrage ends a cluster node's drive of chain 369's arbitrage
	// (cluster_chain.go); nil elsewhere.
	stopArbitrage func()
}

// Start brings the service up and starts serving; it returns once the
// listener accepts connections. It runs the parts below in their order,
// each on what the ones before it started (start.go); a part that fails
// ends the start, and what was started is closed in reverse.
func Start(ctx context.Context, cfg Config) (_ *App, err error) {
	// a, not the named result: a failed start returns nil; cleanup needs a.
	a := &App{cfg: cfg, log: cfg.Logger, served: make(chan error, 1)}
	if a.log == nil {
		a.log = slog.Default()
	}
	defer func() {
		if err != nil {
			a.closeAll(context.Background())
		}
	}()
	s, err := newStartup(cfg, a.log) // the checked settings, registry, metrics
	if err != nil {
		return nil, err
	}
	for _, part := range []func(context.Context, *startup) error{
		a.openStore,            // the durable state, and the actor system
		a.joinCluster,          // a cluster's membership and grains (--cluster-*)
		a.startRefData,         // prices and gas, per chain
		a.startQuoteStack,      // providers, the engine racing them, ledger, tickets
		a.startSandboxChain,    // sandbox mode: the sandbox chains
		a.startTxManager,       // the operator's transactions, signed, sent, replaced
		a.startWebhooks,        // the delivery pool over the outbox
		a.startSandboxDesks,    // sandbox mode: bridging, inbound runner, on-ramp desk
		a.startWarpRelayer,     // sandbox mode: warp-route messages delivered
		a.startLiveInbound,     // live mode: receivers checked, registration, step 2
		a.startProviderOnramp,  // live mode: the on-ramp desk on its provider
		a.startTracker,         // swaps followed to their end
		a.startEdge,            // the HTTP server over all of the above
		a.registerStoreMetrics, // caches' and the WAL's figures
		a.startAdmin,           // the operator's loopback listener
		a.serve,                // the listener: serving from here on
	} {
		if err := part(ctx, s); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// The sandbox chain's owner is what the sandbox endpoints drive.
var _ edge.SandboxChain = (*sandboxchain.Service)(nil)

// onrampDesk is the desk as the edge takes it: nil (no on-ramp endpoints)
// when none runs, rather than a typed nil.
func onrampDesk(d *onrampdesk.Desk) edge.OnrampDesk {
	if d == nil {
		return nil
	}
	return d
}

// publicURL is the base of the addresses users' browsers are sent to.
func (a *App) publicURL() string {
	if a.cfg.PublicURL != "" {
		return strings.TrimRight(a.cfg.PublicURL, "/")
	}
	if a.ln == nil {
		return "http://" + a.cfg.Addr
	}
	return "http://" + a.ln.Addr().String()
}

// Addr is the address the edge listens on.
func (a *App) Addr() string { return a.ln.Addr().String() }

// TxManager is the transaction manager of the operator's account, nil
// when it does not run (live mode without an operator key, or no chain
// with a node).
func (a *App) TxManager() *txm.Manager { return a.txm }

// Done delivers the edge's exit error if it stops serving on its own.
func (a *App) Done() <-chan error { return a.served }

func (a *App) ready() error {
	if a.stopped.Load() {
		return errors.New("shutting down")
	}
	if a.node != nil && !a.node.InTopology() {
		// Dropped from the cluster for good (actors/cluster's package
		// comment): a balancer should stop sending it requests, and an
		// operator restart it.
		return fmt.Errorf("not a member of cluster %q: this node is out of its own view of the topology; restart it", a.node.Name())
	}
	return a.stores.Ping(context.Background())
}

// Close drains in-flight requests, then stops the actors and closes the
// store, within ctx.
func (a *App) Close(ctx context.Context) error {
	a.stopped.Store(true)
	return a.closeAll(ctx)
}

func (a *App) closeAll(ctx context.Context) error {
	var errs []error
	if a.admin != nil {
		errs = append(errs, a.admin.Stop(ctx))
	}
	if a.edge != nil && a.ln != nil {
		errs = append(errs, a.edge.Shutdown(ctx))
	}
	if a.tracker != nil {
		a.tracker.Stop()
	}
	if a.relayer != nil {
		a.relayer.Stop()
	}
	if a.txm != nil {
		a.txm.Stop()
	}
	if a.extSigner != nil {
		a.extSigner.Close()
	}
	if a.inbound != nil {
		a.inbound.Stop()
	}
	if a.onramp != nil {
		a.onramp.Stop()
	}
	if a.evidence != nil {
		a.evidence.Close()
	}
	if a.quotes != nil {
		errs = append(errs, a.quotes.stop())
	}
	if a.chains != nil {
		a.chains.Close()
	}
	if a.ref != nil {
		a.ref.Stop()
	}
	if a.hooks != nil {
		a.hooks.Stop()
	}
	a.partners.stop()
	if a.stopArbitrage != nil {
		a.stopArbitrage()
	}
	if a.node != nil {
		// Leaving deregisters this node, so that the others take over its
		// grains and work without waiting for its health to fail; it shuts
		// the actor system down with it.
		a.node.Stop()
	} else if a.sys != nil {
		a.sys.Shutdown()
	}
	if a.stores != nil {
		errs = append(errs, a.stores.Close())
	}
	return errors.Join(errs...)
}

// gasOracle reads gas prices from the nodes --gas-rpc names and, for the
// other chains, from the sandbox oracle in sandbox mode; in live mode a
// chain without a node has no gas record (never a sandbox figure).
func gasOracle(ctx context.Context, mode string, rpc map[uint64]string, timeout time.Duration) (gas.Oracle, error) {
	var fallback gas.Oracle = gas.Unavailable{}
	if mode == ModeSandbox {
		fallback = simgas.NewSandbox(time.Now)
	}
	if len(rpc) == 0 {
		return fallback, nil
	}
	over := make(map[uint64]gas.Oracle, len(rpc))
	for id, url := range rpc {
		o, err := gasrpc.Dial(ctx, url, timeout)
		if err != nil {
			return nil, fmt.Errorf("app: gas RPC for chain %d: %w", id, err)
		}
		over[id] = o
	}
	return gas.NewMulti(fallback, over), nil
}

// ParseTrustedProxies parses --trusted-proxies: comma-separated addresses
// and CIDRs, an address standing for itself alone.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("app: trusted proxy %q: %w", part, err)
			}
			part += "/" + strconv.Itoa(a.BitLen())
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("app: trusted proxy %q: %w", part, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Handler is the edge's full handler chain, for benchmarks that measure a
// request without the network.
func (a *App) Handler() fasthttp.RequestHandler { return a.edge.Handler() }

// Routes is the edge's route table, which a test holds the API document to.
func (a *App) Routes() []edge.Route { return a.edge.Routes() }
