package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/swapgate/swapgate/actors"
	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/actors/txm"
	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/adapters/evidencerpc"
	"github.com/swapgate/swapgate/routing/adapters/netresolve"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

// startup is what Start's parts hand on to the parts after them: the
// checked configuration, and what one part makes that a later one wires
// in. The parts that run for the whole life of the service are App's.
type startup struct {
	cfg       Config
	reg       *registry.Registry
	proxies   []netip.Prefix
	metrics   *prometheus.Registry
	contracts *pulseroute.Contracts
	// upstreams are the configured upstreams' clients, opened once.
	upstreams []opened
	// signer is the operator's, read once (operator, inbound.go); txNodes
	// the transaction manager's nodes, which step 2 reads too.
	signer     txm.Signer
	signerRead bool
	txNodes    map[uint64]txm.Node

	// What the edge is given: each nil when its part does not run in this
	// mode (see edgeDeps).
	sandboxChain    edge.SandboxChain
	bridging        tracker.Source
	inboundDeposits edge.InboundDeposits
	providerWebhook *edge.ProviderWebhookRoute
}

// checkConfig applies Config's defaults and refuses what cannot start.
func checkConfig(cfg Config) (Config, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeSandbox
	}
	if cfg.Mode != ModeSandbox && cfg.Mode != ModeLive {
		return cfg, fmt.Errorf("app: mode %q: want %s or %s", cfg.Mode, ModeSandbox, ModeLive)
	}
	if err := CheckLiveUpstreams(&cfg); err != nil {
		return cfg, fmt.Errorf("app: %w", err)
	}
	if cfg.RPCTimeout <= 0 {
		cfg.RPCTimeout = noderead.DefaultTimeout // no node read goes unbounded
	}
	cfg.Quote.rpcTimeout = cfg.RPCTimeout
	if err := checkOnrampProvider(cfg); err != nil {
		return cfg, err
	}
	if err := CheckCluster(&cfg); err != nil {
		return cfg, fmt.Errorf("app: %w", err)
	}
	return cfg, nil
}

// newStartup checks cfg and loads what every part reads: the token
// registry, the trusted proxies, the metrics registry and the one set of
// contract facts (the quotes send users to these contracts, and the
// sandbox chain deploys them there).
func newStartup(cfg Config, log *slog.Logger) (*startup, error) {
	cfg, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &startup{cfg: cfg, metrics: prometheus.NewRegistry(), contracts: pulseroute.DefaultContracts()}
	if s.proxies, err = ParseTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	if s.reg, err = registry.Load(); err != nil {
		return nil, err
	}
	s.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.cfg.Quote.Logger = log
	return s, nil
}

// openStore opens the durable state and starts the actor system. Pebble's
// error reports (a failed flush or compaction, corruption found in the
// background) go to the service's log with the rest.
func (a *App) openStore(ctx context.Context, s *startup) (err error) {
	cfg := s.cfg
	if a.stores, err = OpenStore(ctx, StoreConfig{URL: cfg.Store, DataDir: cfg.DataDir, Logger: a.log,
		MemTableSize: cfg.StoreMemTableSize, CacheSize: cfg.StoreCacheSize, OutboxLease: clusterOutboxLease(cfg), LeaseOnEnqueue: cfg.Cluster.On()}); err != nil {
		return fmt.Errorf("app: open store: %w", err)
	}
	a.sys = actors.NewSystemWithLogger(a.log)
	return nil
}

// joinCluster makes the node a member of its cluster (--cluster-*), hosting
// the chain and partner grains, and fences the ledger's appends by the
// partner grains' epochs. A single node skips it.
func (a *App) joinCluster(ctx context.Context, s *startup) error {
	if !s.cfg.Cluster.On() {
		return nil
	}
	kinds, err := a.clusterKinds(s.reg)
	if err != nil {
		return err
	}
	partnerKind, err := a.partnerKind()
	if err != nil {
		return err
	}
	if err := a.startCluster(ctx, append(kinds, partnerKind)); err != nil {
		return err
	}
	s.cfg.Quote.LedgerStore = a.partners.start(a.node)
	if err := s.metrics.Register(clusterCollector{node: a.node}); err != nil {
		return fmt.Errorf("app: register cluster metrics: %w", err)
	}
	return nil
}

// startRefData starts the per-chain refreshers of prices and gas.
func (a *App) startRefData(ctx context.Context, s *startup) error {
	cfg := s.cfg
	oracle, err := gasOracle(ctx, cfg.Mode, cfg.GasRPC, cfg.RPCTimeout)
	if err != nil {
		return err
	}
	// Each configured upstream's client is made once: its prices here, its
	// quotes, tools and status in the quote stack.
	if s.upstreams, err = openUpstreams(cfg.Mode, cfg.Quote, s.reg); err != nil {
		return err
	}
	prices, err := priceSource(s.reg, cfg, s.upstreams)
	if err != nil {
		return err
	}
	a.ref, err = refdata.Start(ctx, a.sys, s.reg, refdata.Config{
		PriceInterval: cfg.PriceInterval, MaxAge: cfg.PriceMaxAge, GasMaxAge: cfg.GasMaxAge, GasInterval: cfg.GasInterval, RefreshTimeout: cfg.RefreshTimeout,
		CacheSize: cfg.RefdataCacheSize, Prices: prices, Gas: oracle, Logger: a.log,
	})
	if err != nil {
		return fmt.Errorf("app: start reference data: %w", err)
	}
	return nil
}

// startQuoteStack starts the providers, the engine racing them, the
// ledger's group commit and the ticket keeper (quotes.go), on contracts
// whose inbound receivers are, in sandbox mode, the operator's account
// (sandboxReceivers).
func (a *App) startQuoteStack(ctx context.Context, s *startup) (err error) {
	cfg := s.cfg
	if err := a.sandboxReceivers(ctx, s); err != nil {
		return err
	}
	a.quotes, err = startQuotes(ctx, cfg.Mode, cfg.Quote, cfg.EVMRPC, a.sys, s.reg, a.ref, a.stores, cfg.DataDir, a.node != nil, s.metrics, s.contracts,
		s.upstreams)
	return err
}

// startSandboxChain starts the sandbox chains (sandbox mode): replayed from
// the store's log on a single node, the chain grains' proxy in a cluster.
func (a *App) startSandboxChain(ctx context.Context, s *startup) (err error) {
	switch {
	case s.cfg.Mode != ModeSandbox:
		return nil
	case a.node != nil:
		a.sandbox = a.remoteChains(s.reg)
		s.sandboxChain = a.sandbox
		a.quotes.readSandboxReserves(ctx, a.sandbox)
		return nil
	}
	started := time.Now()
	var stats sandboxchain.ReplayStats
	if a.chains, stats, err = sandboxchain.Start(ctx, s.reg, a.stores.ChainLog, sandboxchain.Options{Contracts: s.contracts, Logger: a.log,
		ArbitragePeriod: s.cfg.SandboxArbitragePeriod}); err != nil {
		return fmt.Errorf("app: start the sandbox chain: %w", err)
	}
	a.sandbox, s.sandboxChain = a.chains, a.chains
	a.quotes.readSandboxReserves(ctx, a.sandbox)
	a.log.Info("sandbox chain ready", slog.Int("chains", len(a.chains.ChainIDs())), slog.Int("replayed", stats.Ops),
		slog.Int("diverged", stats.Diverged), slog.Duration("took", time.Since(started)))
	return nil
}

// startTxManager starts the transaction manager of the operator's
// account on every chain with a node: sandbox mode's chains (the operator
// funded from their faucet), live mode's --evm-rpc. Live mode runs it only
// with an operator key (swapgate operator-key create).
func (a *App) startTxManager(ctx context.Context, s *startup) error {
	if s.cfg.Mode == ModeLive && len(s.cfg.EVMRPC) == 0 {
		return nil // no chain to sign for
	}
	signer, err := s.operator(ctx, a)
	if err != nil || signer == nil {
		return err // live mode without a key: nothing to sign with
	}
	nodes, err := a.txNodes(ctx, s)
	if err != nil || len(nodes) == 0 {
		return err
	}
	s.txNodes = nodes
	if a.chains != nil {
		if err := fundOperator(ctx, a.chains, s.reg, signer.Address()); err != nil {
			return err
		}
	}
	for id := range nodes {
		if _, ok := s.cfg.Tx.FeeCapGwei[id]; !ok && s.cfg.Mode == ModeLive {
			a.log.Warn("no --tx-fee-cap: replacements are not capped", slog.Uint64("chainId", id))
		}
	}
	metrics := txm.NewMetrics() // counted from what the manager stores
	o := a.txOptions(s.cfg, signer, nodes)
	o.Store = metrics.Store(o.Store)
	if a.txm, err = txm.New(o); err != nil {
		return fmt.Errorf("app: transaction manager: %w", err)
	}
	a.payouts = newPayoutSender(a.txm, func(id uint64) bool { return nodes[id] != nil }, payoutStoreOf(a.stores), a.log)
	if err := a.txm.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("app: start the transaction manager: %w", err)
	}
	a.payouts.startPayouts(ctx)
	if err := s.metrics.Register(metrics.Collector(a.txm.Stats, signer.Address().Hex())); err != nil {
		return fmt.Errorf("app: register transaction manager metrics: %w", err)
	}
	a.log.Info("transaction manager ready", slog.String("operator", signer.Address().Hex()), slog.Int("chains", len(nodes)))
	return nil
}

// startWebhooks starts the delivery pool over the store's outbox.
func (a *App) startWebhooks(_ context.Context, s *startup) (err error) {
	cfg := s.cfg
	if a.hooks, err = webhookpool.Start(a.sys, a.stores.Webhooks, webhookpool.Config{PoolSize: cfg.WebhookPoolSize, RetryBase: cfg.WebhookRetryBase,
		MaxAttempts: cfg.WebhookMaxAttempts, Timeout: cfg.WebhookTimeout, ScanInterval: cfg.WebhookScanInterval, ScanBatch: cfg.WebhookScanBatch,
		QueuePerWebhook: cfg.WebhookQueuePerWebhook, CommitBatch: cfg.WebhookCommitBatch, PerWebhook: cfg.WebhookInflightPerWebhook,
		PerPartner: cfg.WebhookInflightPerPartner, AllowLoopback: cfg.AllowLoopbackWebhooks, TLSConfig: cfg.WebhookTLS, Logger: a.log,
		Resolver: netresolve.System()}); err != nil {
		return fmt.Errorf("app: start webhook pool: %w", err)
	}
	if err = s.metrics.Register(a.hooks.Collector()); err != nil {
		return fmt.Errorf("app: register webhook metrics: %w", err)
	}
	return nil
}

// startSandboxDesks starts, in sandbox mode, what the sandbox chains serve
// in place of upstreams: swaps followed by simulated bridging, multi-step
// deposits carried on them (their step 1 checked on the source chain's
// node where --evm-rpc names one, on the sandbox chain otherwise), and
// the on-ramp desk's deliveries. Live mode registers deposits in
// startLiveInbound (inbound_live.go).
func (a *App) startSandboxDesks(ctx context.Context, s *startup) (err error) {
	if a.sandbox == nil {
		return nil
	}
	cfg := s.cfg
	ledger := sandboxchain.NewLedger(a.sandbox, a.stores.ChainLog, s.reg)
	s.bridging = sandbox.NewBridging(ledger, sandbox.BridgingConfig{DurationScale: cfg.SandboxBridgeScale,
		FailureRate: cfg.SandboxBridgeFailureRate}, nil)
	if a.evidence, err = evidencerpc.Dial(ctx, cfg.EVMRPC, cfg.RPCTimeout, ledger); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	chain := inboundChain{Ledger: ledger, evidence: a.evidence}
	// A multi-step deposit's bridge to 369 fails at the rate the
	// sandbox's other bridges do, by the same rule; step 2 is the
	// operator's transactions on the sandbox chains.
	bridgeFails := func(txHash string) bool { return sandbox.BridgeFails(cfg.SandboxBridgeFailureRate, txHash) }
	if a.inbound, err = inboundrun.Start(ctx, a.stores.Inbound, chain, a.quotes.quoter, a.inboundOptions(s, inboundrun.Options{
		BridgeFails: bridgeFails})); err != nil {
		return fmt.Errorf("app: start the inbound runner: %w", err)
	}
	s.inboundDeposits = a.inbound
	provider := &onramp.Sandbox{Market: a.ref, BaseURL: a.publicURL}
	if a.onramp, err = onrampdesk.Start(ctx, a.stores.Onramp, onrampdesk.Options{Catalogue: onramp.NewCatalogue(s.reg), Provider: provider,
		Delivery: ledger, StepDelay: cfg.SandboxOnrampStep, Published: a.hooks.Wake, Owner: a.onrampOwner(), Logger: a.log, Now: cfg.Now}); err != nil {
		return fmt.Errorf("app: start the on-ramp desk: %w", err)
	}
	return nil
}

// startProviderOnramp starts the on-ramp desk on a live provider
// (--onramp-provider, live mode; onramp.go).
func (a *App) startProviderOnramp(ctx context.Context, s *startup) (err error) {
	if s.cfg.Mode != ModeLive || s.cfg.OnrampProvider == "" {
		return nil
	}
	s.providerWebhook, err = a.startLiveOnramp(ctx, s.cfg, s.reg)
	return err
}

// startTracker starts following tracked swaps at their provider (the
// sandbox's bridging where no provider's status source serves them).
func (a *App) startTracker(ctx context.Context, s *startup) (err error) {
	cfg := s.cfg
	if a.tracker, err = tracker.Start(ctx, a.stores.Swaps, tracker.Options{Sources: a.quotes.statusSources, Fallback: s.bridging,
		Schedule: cfg.SwapSchedule, Workers: cfg.TrackerWorkers, PollTimeout: cfg.TrackerPollTimeout,
		Published: a.hooks.Wake, Owner: a.trackerOwner(), Recorded: a.quotes.ledger.Recorded, Logger: a.log}); err != nil {
		return fmt.Errorf("app: start swap tracker: %w", err)
	}
	return nil
}

// edgeConfig is the edge's configuration from the service's.
func edgeConfig(s *startup) edge.Config {
	cfg := s.cfg
	ec := edge.DefaultConfig()
	ec.ReadTimeout, ec.WriteTimeout, ec.IdleTimeout = cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout
	ec.AnonHeavyPerMin, ec.AnonReadPerMin = cfg.AnonHeavyPerMin, cfg.AnonReadPerMin
	ec.TrustedProxies = s.proxies
	ec.Mode = cfg.Mode
	ec.IdempotencyWait, ec.AuthCacheSize = cfg.IdempotencyWait, cfg.AuthCacheSize
	ec.UsageFlushInterval = cfg.UsageFlushInterval
	// A status stream outlives no tracking: the trackers' horizon bounds it.
	ec.StatusStream = cfg.StatusStream
	ec.StatusStream.Horizon = cfg.SwapSchedule.Horizon
	return ec
}

// edgeDeps is what the edge serves from: each kind of state the store
// keeps, and what the parts started before it run.
func (a *App) edgeDeps(ctx context.Context, s *startup) (edge.Deps, error) {
	cfg := s.cfg
	balances, wallets, err := a.chainReaders(ctx, s)
	if err != nil {
		return edge.Deps{}, err
	}
	portalSvc, sandboxMail, err := a.portalService(cfg)
	if err != nil {
		return edge.Deps{}, err
	}
	var clusterView edge.ClusterView
	if a.node != nil {
		clusterView = a.node
	}
	// The store keeps registrations and their history; the pool owns the URL
	// policy it enforces when it dials, and sends test deliveries.
	webhooks := &edge.WebhookService{Registrations: a.stores.Webhooks, Delivery: a.hooks}
	deps := edge.Deps{
		Registry: s.reg, Tools: a.quotes.catalog, RefData: a.ref, Partners: a.stores.Partners, Accounts: accountStore{a.stores.FeeWallets, a.stores.Ledger}, Quotes: a.quotes.quoter, QuoteStream: a.quotes.quoter,
		ToolHealth: a.quotes.engine, Webhooks: webhooks,
		Tickets: a.quotes.quoter, Repricer: a.quotes.quoter, Swaps: a.tracker, DepositQuotes: a.quotes.quoter, DepositSwaps: a.stores.Swaps,
		DepositNotifier: a.quotes.depositNotifier, Balances: balances, Wallets: wallets,
		Inbound: s.inboundDeposits, Onramp: onrampDesk(a.onramp), ProviderWebhook: s.providerWebhook, Sandbox: s.sandboxChain, Cluster: clusterView, Idempotency: a.stores.Idempotency, Usage: a.stores.Usage, Ready: a.ready, Logger: a.log, Metrics: s.metrics,
		PublicURL: a.publicURL, Portal: portalSvc, Mailbox: sandboxMail,
	}
	// The sandbox chains' JSON-RPC nodes: this process's chains, or in a cluster each chain's grain through the Remote.
	deps.SandboxNode, _ = a.sandbox.(edge.SandboxNode)
	if err = a.partners.edgeDeps(&deps); err != nil {
		return edge.Deps{}, err
	}
	if err = a.statusSources(ctx, s, &deps); err != nil {
		return edge.Deps{}, err
	}
	return deps, nil
}

// startEdge builds the HTTP server. A store that several processes share
// says when any of them (another node, the operator's CLI on the
// database) changed a partner: the edge drops its cached copy, so that new
// limits, a rotated key or a disabled account apply on every node at once.
func (a *App) startEdge(ctx context.Context, s *startup) error {
	deps, err := a.edgeDeps(ctx, s)
	if err != nil {
		return err
	}
	if a.edge, err = edge.New(edgeConfig(s), deps); err != nil {
		return err
	}
	if w, ok := a.stores.Backend().(partnerWatcher); ok {
		w.OnPartnerChange(a.edge.InvalidatePartner)
	}
	return nil
}

// registerStoreMetrics registers the caches' figures (the edge's, the
// store's, reference data's) and Pebble's WAL syncs; a store without a
// WAL of its own has no such figure.
func (a *App) registerStoreMetrics(_ context.Context, s *startup) error {
	if err := s.metrics.Register(cacheCollector{sources: []cacheStats{a.edge.CacheStats, a.stores.CacheStats, a.ref.CacheStats}}); err != nil {
		return fmt.Errorf("app: register cache metrics: %w", err)
	}
	if w, ok := a.stores.Backend().(walSyncer); ok {
		if err := s.metrics.Register(walSyncCollector{syncs: w.WALSyncs}); err != nil {
			return fmt.Errorf("app: register WAL sync metrics: %w", err)
		}
	}
	return nil
}

// startAdmin starts the operator's loopback listener: partner edits,
// settlement and Go's profiles.
func (a *App) startAdmin(_ context.Context, s *startup) (err error) {
	if a.admin, err = admin.New(s.cfg.DataDir, a.stores.Partners, a.edge.InvalidatePartner); err != nil {
		return fmt.Errorf("app: admin listener: %w", err)
	}
	if err = admin.RegisterPayouts(a.admin, payoutStoreOf(a.stores), a.payoutSenderOf(s), nil); err != nil {
		return fmt.Errorf("app: admin listener: %w", err)
	}
	if err = admin.RegisterPprof(a.admin); err != nil {
		return fmt.Errorf("app: admin listener: %w", err)
	}
	if err = registerOperatorAdmin(a.admin, a.stores.TxIntents, s.cfg.Operator); err != nil {
		return fmt.Errorf("app: admin listener: %w", err)
	}
	if err = a.admin.Start(); err != nil {
		return fmt.Errorf("app: start admin listener: %w", err)
	}
	return nil
}

// serve opens the listener and serves the edge on it.
func (a *App) serve(_ context.Context, s *startup) (err error) {
	cfg := s.cfg
	if a.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return fmt.Errorf("app: listen on %s: %w", cfg.Addr, err)
	}
	go func() { a.served <- a.edge.Serve(a.ln) }()
	a.log.Info("swapgate serving", slog.String("addr", a.ln.Addr().String()), slog.String("data", cfg.DataDir), slog.String("store", StoreKind(cfg.Store)), slog.String("mode", cfg.Mode),
		slog.String("cluster", cfg.Cluster.Name))
	return nil
}
