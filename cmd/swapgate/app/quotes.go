package app

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/actors/engine"
	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/actors/tickets"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/breaker"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// QuoteConfig configures the quote engine and its upstreams. In sandbox
// mode every provider is the sandbox's unless a base URL is set for it; in
// live mode only the providers with an upstream run (see buildProviders and
// Upstreams).
type QuoteConfig struct {
	Deadline time.Duration
	// MinWait, ExpectedResults and ReduceEvery are the default timing
	// strategy of a race (see quote.Strategy), which a request's own
	// parameters override.
	MinWait         time.Duration
	ExpectedResults int
	ReduceEvery     time.Duration
	// BreakerWindow, BreakerFailureRatio, BreakerMinCalls and
	// BreakerCoolDown set every provider leg's breaker (see
	// breaker.Config).
	BreakerWindow       int
	BreakerFailureRatio float64
	BreakerMinCalls     int
	BreakerCoolDown     time.Duration
	// NoBreakers turns every leg's breaker off: every leg is sent, whatever
	// its recent calls.
	NoBreakers bool
	PoolSize   int
	PoolSizes  map[string]int
	// QueuePerWorker bounds the legs a provider pool queues per worker
	// when every worker is busy (see engine.Config).
	QueuePerWorker int
	// WarmGoroutines is how many long-lived goroutines run the quote
	// path's actor mailboxes (see actors.WarmDispatcher); 0 means
	// DefaultWarmGoroutines.
	WarmGoroutines int
	// WarmThroughput is how many messages a quote-path mailbox handles
	// before it yields its warm goroutine.
	WarmThroughput int
	// SandboxTools injects latency and failures per sandbox tool.
	SandboxTools map[string]sandbox.ToolConfig
	// AggregatorURL and IntentsURL point the aggregator and intents
	// providers at the real LI.FI and 1Click APIs.
	AggregatorURL, AggregatorKey string
	IntentsURL, IntentsKey       string
	// Upstream holds the settings of the upstreams declared since (see
	// Upstream.Settings), by flag name: "relay-url", for example.
	Upstream        map[string]string
	UpstreamTimeout time.Duration
	// PulseRPC maps chain ids to JSON-RPC URLs; with chain 369's set, the
	// PulseX leg is read on chain, and with a sender chain's set, its warp
	// route's gas payment.
	PulseRPC map[uint64]string
	// PulseReservesMaxAge is how long a snapshot of the PulseX pairs'
	// reserves prices the chain-369 leg after it was last seen current
	// (--pulse-reserves-max-age); 0 prices it with the router's
	// getAmountsOut over eth_call.
	PulseReservesMaxAge time.Duration
	// rpcTimeout bounds each read of those nodes: Start sets it from
	// Config.RPCTimeout (--rpc-timeout), which bounds every node read.
	rpcTimeout time.Duration
	// Pulse is Swapgate's own pulseroute contracts, which live mode
	// routes through only where configured (see PulseContracts).
	Pulse PulseContracts
	// LedgerSyncInterval spaces the ledger's synced commits under load
	// (see package ledger); 0 commits back to back.
	LedgerSyncInterval time.Duration
	// LedgerMaxBatch, LedgerBusyBatch and LedgerMaxUnsynced bound a
	// ledger commit, tell a busy ledger and bound the fee-free records
	// queued (see ledger.Options).
	LedgerMaxBatch, LedgerBusyBatch, LedgerMaxUnsynced int
	// LedgerStore, set by Start in a cluster, is where the ledger commits
	// (appends fenced by the partners' epochs, cluster_partner.go); nil
	// commits to the store.
	LedgerStore ledger.Appender
	// TicketBufferBytes bounds the issued quotes' tickets held in memory
	// until their commit; TicketGrace keeps a ticket past its expiry;
	// TicketSweepInterval is how often expired ones are dropped (see
	// tickets.Options).
	TicketBufferBytes                int
	TicketGrace, TicketSweepInterval time.Duration
	// QuoteRetention keeps issued quotes' tickets this long past their
	// expiry, when longer than TicketGrace, for tracking alone: GET
	// /v1/status by quoteId, and by a txHash broadcast without execute,
	// still find the quote; execute refuses it as expired. 0 keeps them
	// TicketGrace only. What it costs: see --quote-retention's doc.
	QuoteRetention time.Duration
	// TicketCommitInterval spaces the ticket keeper's commits (see
	// tickets.Options.CommitEvery).
	TicketCommitInterval time.Duration
	// Logger is set by Start.
	Logger *slog.Logger
}

// DefaultWarmGoroutines is the quote path's warm goroutines by default: 64
// per core. A quote races a leg per sandbox tool and upstream, so at a few
// dozen quotes in flight hundreds of mailboxes have work at once; a mailbox
// that finds no idle warm goroutine runs on a new one, which spends its
// time growing its stack. Measured with wrk -t1 -c32 on anonymous quotes
// on 2 cores: 12 goroutines 13.5–15.8k quotes/s, 64 17.1–19.6k, 128
// 19.6–22.2k, 256 20.6–22.8k; each idle one costs a few KiB.
func DefaultWarmGoroutines() int { return 64 * runtime.GOMAXPROCS(0) }

// DefaultWarmThroughput is the messages a quote-path mailbox handles
// before it yields its warm goroutine.
const DefaultWarmThroughput = 300

// loadCatalog runs a start-up catalog load within the upstream timeout.
func loadCatalog(ctx context.Context, timeout time.Duration, load func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return load(ctx)
}

// quoteStack is the running quote engine.
type quoteStack struct {
	// dispatcher keeps warm goroutines for the quote path's actors.
	dispatcher *actors.WarmDispatcher
	engine     *engine.Engine
	ledger     *ledger.Ledger
	tickets    *tickets.Keeper
	// ticketLog is where the keeper commits tickets.
	ticketLog *local.TicketLog
	quoter    *engine.Quoter
	// statusSources observe tracked swaps, by provider.
	statusSources map[string]tracker.Source
	// network names the providers whose legs wait on a network upstream
	// in this configuration (an upstream's API, pulseroute's nodes): the
	// engine sizes their pools for the network's latency.
	network []string
	// depositNotifier is the live intents adapter, told of deposits.
	depositNotifier edge.DepositNotifier
	// pulseState reads chain 369 and the warp routes (the sandbox chain
	// state, or JSON-RPC where configured), for the DEX leg of step 2.
	pulseState pulseroute.ChainState
	// catalog is the tools the providers quote with: the sandbox's, or in
	// live mode what the upstreams list.
	catalog *tools.Catalog
	// reserves price the chain-369 leg from PulseX reserves (see
	// pulseReserves); stopReserves end their refresh loops.
	reserves     []*pulserpc.Reserves
	stopReserves []func()
	// sandboxReserves wait for the sandbox chains (readSandboxReserves).
	sandboxReserves []sandboxReserves
}

func (q *quoteStack) stop() error {
	if q.engine != nil {
		q.engine.Stop()
	}
	if q.ledger != nil {
		q.ledger.Stop()
	}
	if q.tickets != nil {
		q.tickets.Close()
	}
	var err error
	if q.ticketLog != nil {
		// After the keeper, whose Close commits what it still holds.
		err = q.ticketLog.Close()
	}
	if q.dispatcher != nil {
		q.dispatcher.Close()
	}
	for _, stop := range q.stopReserves {
		stop()
	}
	return err
}

// ticketHome is where the keeper commits tickets: the ticket log (in a
// cluster, the shared store's tickets table, so that a quote issued on one
// node is found on every other), and the store's quote-reference index for
// multi-step quotes, which outlives the tickets (a step-1 transaction names
// its quote by reference alone, and a registration may come after the
// ticket is swept).
type ticketHome struct {
	tickets.Store
	refs quoteRefIndex
}

// quoteRefIndex indexes quotes by their reference and their transaction's
// calldata; the store that keeps it serves QuoteByRef to the inbound
// runner (inbound.Store) and to GET /v1/status.
type quoteRefIndex interface {
	PutQuoteRefs(ctx context.Context, ts []store.EncodedTicket) error
	SweepQuoteRefs(ctx context.Context, before time.Time) error
}

// SweepTickets drops the call references of the quotes it drops with
// them: a transaction is matched to its quote only while the quote is
// retained, and the index stays bounded.
func (h ticketHome) SweepTickets(ctx context.Context, before time.Time) error {
	if err := h.refs.SweepQuoteRefs(ctx, before); err != nil {
		return err
	}
	return h.Store.SweepTickets(ctx, before)
}

// PutTickets indexes the references first: a failure then leaves no
// ticket whose step 1 could not be traced, and the keeper's retry writes
// them again, which is harmless.
func (h ticketHome) PutTickets(ctx context.Context, ts []store.EncodedTicket) error {
	if err := h.refs.PutQuoteRefs(ctx, ts); err != nil {
		return err
	}
	return h.Store.PutTickets(ctx, ts)
}

// DefaultQuoteRetention is --quote-retention's default: a day, so that a
// wallet's status asked by quote id, or by a transaction broadcast without
// execute, is answered for the day after the quote; at 1,000 quotes a
// second that is some 140 GB of tickets on disk (about 1.6 KiB each,
// calldata included), 1.4 GB of their index in memory (16 bytes each) and
// 6.5 GB of the store's call-reference index (some 75 bytes each, swept
// with the tickets).
const DefaultQuoteRetention = 24 * time.Hour

func startQuotes(ctx context.Context, mode string, cfg QuoteConfig, evmRPC map[uint64]string, sys *actor.ActorSystem, reg *registry.Registry,
	ref *refdata.Service, stores *Stores, dataDir string, shared bool, metrics *prometheus.Registry, contracts *pulseroute.Contracts,
	ups []opened) (qs *quoteStack, err error) {
	qs = &quoteStack{statusSources: map[string]tracker.Source{}}
	defer func() {
		if err != nil {
			_ = qs.stop()
		}
	}()
	providers, err := buildProviders(ctx, mode, cfg, evmRPC, reg, ref, contracts, qs, ups)
	if err != nil {
		return nil, err
	}
	warm := cfg.WarmGoroutines
	if warm <= 0 {
		warm = DefaultWarmGoroutines()
	}
	throughput := cfg.WarmThroughput
	if throughput <= 0 {
		throughput = DefaultWarmThroughput
	}
	qs.dispatcher = actors.NewWarmDispatcher(warm, throughput)
	// The catalog's tools are the leg metrics' tool labels; anything else
	// (a live upstream's tools) is counted as engine.OtherTool, but for the
	// legs of upstreams racing as one provider, each counted apart.
	catalog := map[string][]string{}
	for _, t := range qs.catalog.All() {
		catalog[t.Provider] = append(catalog[t.Provider], t.Key)
	}
	for name, legs := range legNames(providers) {
		for _, leg := range legs {
			if !contains(catalog[name], leg) {
				catalog[name] = append(catalog[name], leg)
			}
		}
	}
	qs.engine, err = engine.Start(sys, providers, engine.Config{Dispatcher: qs.dispatcher,
		Deadline: cfg.Deadline, PoolSize: cfg.PoolSize, PoolSizes: cfg.PoolSizes, QueuePerWorker: cfg.QueuePerWorker, Tools: catalog,
		Strategy: quote.Strategy{MinWait: cfg.MinWait, ExpectedResults: cfg.ExpectedResults, ReduceEvery: cfg.ReduceEvery},
		Breaker: breaker.Config{Window: cfg.BreakerWindow, FailureRatio: cfg.BreakerFailureRatio, MinCalls: cfg.BreakerMinCalls,
			CoolDown: cfg.BreakerCoolDown, Off: cfg.NoBreakers},
		NetworkProviders: qs.network,
		Eligible:         eligibility(Upstreams()).providers,
	})
	if err != nil {
		return nil, err
	}
	for _, c := range []prometheus.Collector{qs.dispatcher.Collector(), qs.engine.Collector(), reservesCollector{readers: qs.reserves}} {
		if err := metrics.Register(c); err != nil {
			return nil, fmt.Errorf("app: register quote metrics: %w", err)
		}
	}
	var ledgerStore ledger.Appender = stores.Ledger
	if cfg.LedgerStore != nil {
		ledgerStore = cfg.LedgerStore
	}
	if qs.ledger, err = ledger.Start(sys, ledgerStore, ledger.Options{SyncInterval: cfg.LedgerSyncInterval, MaxBatch: cfg.LedgerMaxBatch,
		BusyBatch: cfg.LedgerBusyBatch, MaxUnsynced: cfg.LedgerMaxUnsynced, Logger: cfg.Logger}, actor.WithDispatcher(qs.dispatcher)); err != nil {
		return nil, err
	}
	if err := metrics.Register(qs.ledger.Collector()); err != nil {
		return nil, fmt.Errorf("app: register ledger metrics: %w", err)
	}
	// Tickets live out of Pebble, whose compactions would rewrite them again
	// and again in their lifetime; segments past the keeper's sweep bound
	// are deleted on open rather than read.
	grace := cfg.TicketGrace
	if grace <= 0 {
		grace = tickets.DefaultGrace
	}
	grace = max(grace, cfg.QuoteRetention)
	// A long retention writes minute-long segments, so that a day's
	// tickets are 1,440 files (each holding an open descriptor) rather
	// than 8,640; a minute at 20,000 quotes a second is some 1.9 GB, well
	// within a segment's 4 GiB. A segment is swept whole, up to a span
	// later.
	span := time.Duration(0)
	if grace > time.Hour {
		span = time.Minute
	}
	home := ticketHome{refs: stores.QuoteRefs}
	if shared {
		// A cluster's nodes share the store's tickets (see
		// tickets.Options.Shared); CheckCluster made it PostgreSQL.
		ts, ok := stores.Backend().(tickets.Store)
		if !ok {
			return nil, fmt.Errorf("app: a cluster's tickets need a shared store: %T keeps none", stores.Backend())
		}
		home.Store = ts
	} else {
		if qs.ticketLog, err = local.OpenTicketLog(dataDir, local.TicketLogOptions{Horizon: quote.TTL + grace, Span: span}); err != nil {
			return nil, fmt.Errorf("app: open ticket log: %w", err)
		}
		home.Store = qs.ticketLog
	}
	qs.tickets = tickets.Start(home, tickets.Options{MaxPendingBytes: cfg.TicketBufferBytes,
		Grace: grace, SweepEvery: cfg.TicketSweepInterval, CommitEvery: cfg.TicketCommitInterval, Shared: shared})
	qs.quoter = engine.NewQuoter(qs.engine, qs.ledger, stores.FeeWallets, qs.tickets, nil)
	return qs, nil
}

// gasPrices serves the sandbox's gas price function from the refdata gas
// records, parsing a chain's standard price once per record version rather
// than on every leg of every quote. The prices it hands out are shared and
// must not be modified.
type gasPrices struct {
	ref    *refdata.Service
	chains map[uint64]*atomic.Pointer[parsedGasPrice] // fixed at construction
}

// parsedGasPrice is a chain's standard gas price at one record version.
type parsedGasPrice struct {
	version uint64
	price   *big.Int
	ok      bool
}

func newGasPrices(ref *refdata.Service, reg *registry.Registry) *gasPrices {
	g := &gasPrices{ref: ref, chains: map[uint64]*atomic.Pointer[parsedGasPrice]{}}
	for _, c := range reg.Chains() {
		g.chains[c.ID] = new(atomic.Pointer[parsedGasPrice])
	}
	return g
}

// price is the chain's standard-tier gas price in wei.
func (g *gasPrices) price(chainID uint64) (*big.Int, bool) {
	slot, known := g.chains[chainID]
	version := g.ref.GasVersion(chainID)
	if known && version != 0 {
		if e := slot.Load(); e != nil && e.version == version {
			return e.price, e.ok
		}
	}
	rec, ok := g.ref.Gas(chainID)
	if !ok {
		return nil, false
	}
	v, ok := new(big.Int).SetString(rec.Speed.Standard.GasPrice, 10)
	if known && version != 0 {
		// The record read may be newer than version; the next call then
		// sees a newer version and parses again.
		slot.Store(&parsedGasPrice{version: version, price: v, ok: ok})
	}
	return v, ok
}
