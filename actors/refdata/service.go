// Package refdata keeps the moving reference data of every chain — USD prices
// and gas records — fresh in memory. One actor per chain polls the price
// source and the gas oracle in the background and publishes what it gets;
// the HTTP edge and the quote engine read through Service without any actor
// round trip, so the hot path costs a cache lookup.
package refdata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dgraph-io/ristretto/v2"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/prices"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Errors of Refresh.
var (
	ErrUnknownChain = errors.New("refdata: unknown chain")
	ErrStopped      = errors.New("refdata: service stopped")
)

// Config configures the refreshers. Zero durations take the defaults.
type Config struct {
	PriceInterval time.Duration // default 15 s
	GasInterval   time.Duration // default 10 s
	// RefreshTimeout bounds one call to the price source or the gas oracle,
	// so that a hung RPC endpoint delays only its own chain. Default 5 s.
	RefreshTimeout time.Duration
	Prices         prices.Source // required
	Gas            gas.Oracle    // required
	Logger         *slog.Logger  // default slog.Default()
	// MaxAge is how old a price may be, from its observation, and still be
	// served: an older one is absent from Price and Prices (and dropped by
	// its chain's actor, which moves the version). Default
	// DefaultPriceMaxAge.
	MaxAge time.Duration
	// GasMaxAge is how old a chain's gas record may be, from the gas
	// oracle's last answer, and still be served: an older one is absent
	// from Gas (and dropped by its chain's actor, which moves the
	// version), never replaced by a figure of another source. Default
	// DefaultGasMaxAge.
	GasMaxAge time.Duration
	// Now stamps price snapshots and gas reads and judges their age;
	// default time.Now.
	Now func() time.Time
	// CacheSize is the entries each ristretto cache (prices, gas) holds;
	// 0 sizes each at twice what the registry has (tokens, chains) plus
	// 16. A smaller cache only costs misses, which the published
	// snapshots answer.
	CacheSize int
}

func (c Config) withDefaults() (Config, error) {
	if c.Prices == nil || c.Gas == nil {
		return c, errors.New("refdata: config needs a price source and a gas oracle")
	}
	if c.PriceInterval <= 0 {
		c.PriceInterval = DefaultPriceInterval
	}
	if c.GasInterval <= 0 {
		c.GasInterval = DefaultGasInterval
	}
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultPriceMaxAge
	}
	if c.GasMaxAge <= 0 {
		c.GasMaxAge = DefaultGasMaxAge
	}
	if c.RefreshTimeout <= 0 {
		c.RefreshTimeout = DefaultRefreshTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Service is the read side of the refreshers and the handle that stops them.
// Its read methods are safe for concurrent use and never block.
type Service struct {
	sys        *actor.ActorSystem
	supervisor *actor.PID
	stopped    chan struct{} // closed when the supervisor and its children are gone
	cancelRun  context.CancelFunc
	states     map[uint64]*chainState // fixed at Start, read without locks
	priceCache *ristretto.Cache[string, prices.Price]
	gasCache   *ristretto.Cache[uint64, *gasEntry]
	stopOnce   sync.Once
}

// Start spawns one refresher per chain of the registry under a supervisor and
// returns once every chain has completed its first refresh, so that the first
// request is served with data. A chain whose first refresh fails is logged
// and refreshed again on its interval; it does not fail Start. When ctx ends
// first, Start stops everything it started and returns the context's error.
// ctx bounds only this wait: the refreshers run until Stop.
func Start(ctx context.Context, sys *actor.ActorSystem, reg *registry.Registry, cfg Config) (*Service, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	chains := reg.Chains()
	tokens := 0
	for _, c := range chains {
		tokens += len(reg.Tokens(c.ID))
	}
	priceCache, err := newCache[string, prices.Price](cacheCapacity(cfg.CacheSize, tokens))
	if err != nil {
		return nil, fmt.Errorf("refdata: price cache: %w", err)
	}
	gasCache, err := newCache[uint64, *gasEntry](cacheCapacity(cfg.CacheSize, len(chains)))
	if err != nil {
		priceCache.Close()
		return nil, fmt.Errorf("refdata: gas cache: %w", err)
	}

	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{
		sys:        sys,
		stopped:    make(chan struct{}),
		cancelRun:  cancelRun,
		states:     make(map[uint64]*chainState, len(chains)),
		priceCache: priceCache,
		gasCache:   gasCache,
	}
	templates := make([]*chainActor, 0, len(chains))
	readies := make([]actors.Reply[error], 0, len(chains))
	for _, c := range chains {
		st := &chainState{id: c.ID, priceCache: priceCache, gasCache: gasCache, maxAge: cfg.MaxAge, gasMaxAge: cfg.GasMaxAge, now: cfg.Now}
		s.states[c.ID] = st
		ready := actors.NewReply[error]()
		readies = append(readies, ready)
		templates = append(templates, &chainActor{
			chain:  c,
			state:  st,
			cfg:    cfg,
			runCtx: runCtx,
			logger: cfg.Logger.With(slog.String("component", "refdata"), slog.Uint64("chainId", c.ID)),
			ready:  ready,
		})
	}
	sup := &supervisor{chains: templates, stopped: s.stopped}
	s.supervisor = sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return sup }))

	for i, ready := range readies {
		if _, err := ready.Wait(ctx); err != nil {
			s.Stop()
			return nil, fmt.Errorf("refdata: first refresh of chain %d: %w", chains[i].ID, err)
		}
		// A failed first refresh has already been logged by its actor.
	}
	return s, nil
}

// cacheCapacity is the entries a cache holds: size when set, else twice
// the items it is for plus 16.
func cacheCapacity(size, items int) int64 {
	if size > 0 {
		return int64(size)
	}
	return int64(2*items + 16)
}

// newCache returns a ristretto cache that holds up to capacity entries,
// each of cost one. IgnoreInternalCost keeps ristretto from adding its own
// per-item overhead to that cost, which would make items vanish. Its hit
// and miss counts are on (CacheStats): ristretto keeps them in sharded
// atomics, a few nanoseconds a lookup.
func newCache[K ristretto.Key, V any](capacity int64) (*ristretto.Cache[K, V], error) {
	return ristretto.NewCache(&ristretto.Config[K, V]{
		NumCounters:        10 * capacity,
		MaxCost:            capacity,
		BufferItems:        64,
		IgnoreInternalCost: true,
		Metrics:            true,
	})
}

// CacheStats reports the service's ristretto caches, by name, with their
// hits and misses so far: "refdata_price" (per-token prices, read only
// until a chain's first snapshot is published, which then answers
// directly) and "refdata_gas" (each chain's gas record).
func (s *Service) CacheStats(visit func(cache string, hits, misses uint64)) {
	visit("refdata_price", s.priceCache.Metrics.Hits(), s.priceCache.Metrics.Misses())
	visit("refdata_gas", s.gasCache.Metrics.Hits(), s.gasCache.Metrics.Misses())
}

// Price returns the USD price of a token, the address in any case; a price
// older than the maximum age is absent.
func (s *Service) Price(chainID uint64, tokenAddress string) (float64, bool) {
	st, ok := s.states[chainID]
	if !ok {
		return 0, false
	}
	return st.price(strings.ToLower(tokenAddress))
}

// Prices returns the current price snapshot of a chain, without the prices
// older than the maximum age. The maps are shared: callers must not modify
// them.
func (s *Service) Prices(chainID uint64) (prices.Snapshot, bool) {
	st, ok := s.states[chainID]
	if !ok {
		return prices.Snapshot{}, false
	}
	return st.snapshot(st.now())
}

// Gas returns the current gas record of a chain; chains without an EVM gas
// market have none, and neither has a chain whose record is older than the
// gas maximum age.
func (s *Service) Gas(chainID uint64) (gas.Record, bool) {
	st, ok := s.states[chainID]
	if !ok {
		return gas.Record{}, false
	}
	return st.gasRecord()
}

// GasVersion returns the version of the chain's gas record, which increases
// only when what Gas serves changes: its figures, or the record growing too
// old (absent, under a version of its own); zero means no record yet.
func (s *Service) GasVersion(chainID uint64) uint64 {
	st, ok := s.states[chainID]
	if !ok {
		return 0
	}
	return st.gas.Load().version(st.now(), st.gasMaxAge)
}

// Refresh makes the chain's actor refresh prices and gas now and returns once
// the results are published, with the refresh's error if any.
func (s *Service) Refresh(ctx context.Context, chainID uint64) error {
	if _, ok := s.states[chainID]; !ok {
		return fmt.Errorf("refdata: chain %d: %w", chainID, ErrUnknownChain)
	}
	select {
	case <-s.stopped:
		return fmt.Errorf("refdata: refresh of chain %d: %w", chainID, ErrStopped)
	default:
	}
	req := refreshRequest{chainID: chainID, reply: actors.NewReply[error]()}
	s.sys.Root.Send(s.supervisor, req)
	// A request caught by Stop is never answered, so stopping ends the
	// wait as well as the context does.
	select {
	case refreshErr := <-req.reply:
		return refreshErr
	case <-s.stopped:
		return fmt.Errorf("refdata: refresh of chain %d: %w", chainID, ErrStopped)
	case <-ctx.Done():
		return fmt.Errorf("refdata: refresh of chain %d: %w", chainID, ctx.Err())
	}
}

// Stop aborts in-flight oracle calls, stops the supervisor and every chain
// actor, waits until they are gone, then closes the caches. Reads after Stop
// still answer from the last published values. Stop is idempotent.
func (s *Service) Stop() {
	s.stopOnce.Do(func() {
		s.cancelRun()
		s.sys.Root.Stop(s.supervisor)
		<-s.stopped
		s.priceCache.Close()
		s.gasCache.Close()
	})
}
