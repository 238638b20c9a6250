package refdata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Messages of a chain actor. The ticks come from its own tickers; a
// refreshRequest comes from Service.Refresh through the supervisor.
type (
	priceTick      struct{}
	gasTick        struct{}
	expireTick     struct{}
	gasExpireTick  struct{}
	refreshRequest struct {
		chainID uint64
		reply   actors.Reply[error]
	}
)

// chainActor owns the prices and gas of one chain: it is the only writer of
// its chainState, so refreshes of one chain never interleave, while chains
// refresh independently of each other.
type chainActor struct {
	chain  *registry.Chain
	state  *chainState
	cfg    Config
	runCtx context.Context // cancelled by Service.Stop to abort oracle calls
	logger *slog.Logger
	// ready receives the outcome of the first refresh, which happens when
	// the actor starts, so that Start can wait for data on every chain.
	ready actors.Reply[error]

	stopPriceTicks, stopGasTicks func()
	// expiry fires an expireTick when the oldest published price becomes
	// too old to serve; rearmed after every change of the prices.
	expiry *time.Timer
	// gasExpiry fires a gasExpireTick when the gas record becomes too old
	// to serve; rearmed after every answer of the oracle.
	gasExpiry *time.Timer
	self      *actor.PID
	root      *actor.RootContext
	// pricesFailing and gasFailing make an outage log once when it starts
	// and once when it ends, not on every tick.
	pricesFailing, gasFailing bool
}

func (a *chainActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.root = ctx.Self(), ctx.ActorSystem().Root
		a.ready.Send(a.refreshAll())
		root := a.root
		a.stopPriceTicks = actors.Every(root, ctx.Self(), a.cfg.PriceInterval, priceTick{})
		a.stopGasTicks = actors.Every(root, ctx.Self(), a.cfg.GasInterval, gasTick{})
	case priceTick:
		_ = a.refreshPrices()
	case gasTick:
		_ = a.refreshGas()
	case expireTick:
		if a.state.expirePrices(a.cfg.Now()) {
			a.logger.Warn("prices expired: no fresh observation within the maximum age", slog.Duration("maxAge", a.cfg.MaxAge))
		}
		a.armExpiry()
	case gasExpireTick:
		if a.state.expireGas(a.cfg.Now()) {
			a.logger.Warn("gas record expired: no answer from the gas oracle within the maximum age", slog.Duration("gasMaxAge", a.cfg.GasMaxAge))
		}
		a.armGasExpiry()
	case refreshRequest:
		m.reply.Send(a.refreshAll())
	case *actor.Stopping, *actor.Restarting:
		// The tickers must be gone before the actor is: a tick sent to a
		// stopped actor would become a dead letter.
		a.stopTickers()
	}
}

// armExpiry schedules an expireTick for when the oldest published price
// becomes too old, replacing any earlier schedule.
func (a *chainActor) armExpiry() {
	if a.expiry != nil {
		a.expiry.Stop()
		a.expiry = nil
	}
	snap := a.state.prices.Load()
	if snap == nil || snap.ExpiresAt.IsZero() || a.root == nil {
		return
	}
	// A millisecond past the limit: a price exactly maxAge old is still
	// served (prices.Fresh).
	wait := max(snap.ExpiresAt.Sub(a.cfg.Now())+time.Millisecond, 0)
	root, self := a.root, a.self
	a.expiry = time.AfterFunc(wait, func() { root.Send(self, expireTick{}) })
}

// armGasExpiry schedules a gasExpireTick for when the gas record becomes
// too old, replacing any earlier schedule.
func (a *chainActor) armGasExpiry() {
	if a.gasExpiry != nil {
		a.gasExpiry.Stop()
		a.gasExpiry = nil
	}
	e := a.state.gas.Load()
	if e == nil || e.Gone || a.root == nil {
		return
	}
	// A millisecond past the limit, as for prices.
	wait := max(e.ReadAt.Add(a.cfg.GasMaxAge).Sub(a.cfg.Now())+time.Millisecond, 0)
	root, self := a.root, a.self
	a.gasExpiry = time.AfterFunc(wait, func() { root.Send(self, gasExpireTick{}) })
}

func (a *chainActor) stopTickers() {
	if a.expiry != nil {
		a.expiry.Stop()
	}
	if a.gasExpiry != nil {
		a.gasExpiry.Stop()
	}
	if a.stopPriceTicks != nil {
		a.stopPriceTicks()
	}
	if a.stopGasTicks != nil {
		a.stopGasTicks()
	}
}

func (a *chainActor) refreshAll() error {
	return errors.Join(a.refreshPrices(), a.refreshGas())
}

// refreshPrices asks the price source and publishes the answer, dropping
// the prices that have grown too old. On failure the prices held stay in
// place until they are too old.
func (a *chainActor) refreshPrices() error {
	ctx, cancel := context.WithTimeout(a.runCtx, a.cfg.RefreshTimeout)
	defer cancel()
	fresh, err := a.cfg.Prices.Prices(ctx, a.chain.ID)
	// What the source did answer is published even beside an error (one
	// of live mode's two lists down); either way the prices already held
	// stay until they are too old.
	a.state.publishPrices(fresh, err == nil, a.cfg.Now())
	a.armExpiry()
	if err != nil {
		err = fmt.Errorf("refdata: prices of chain %d: %w", a.chain.ID, err)
		a.pricesFailing = a.noteFailure(a.pricesFailing, "price refresh failing; keeping last prices until they are too old", err)
		return err
	}
	a.pricesFailing = a.noteRecovery(a.pricesFailing, "price refresh recovered")
	return nil
}

// refreshGas asks the gas oracle and publishes the answer. Chains without an
// EVM gas market, or without a source (a live chain with no node), simply
// have no record; on any other failure the last good record stays in place
// until it is older than the gas maximum age, and is then dropped.
func (a *chainActor) refreshGas() error {
	ctx, cancel := context.WithTimeout(a.runCtx, a.cfg.RefreshTimeout)
	defer cancel()
	rec, err := a.cfg.Gas.GasPrice(ctx, a.chain)
	if errors.Is(err, gas.ErrUnsupportedChain) || errors.Is(err, gas.ErrNoSource) {
		return nil
	}
	if err != nil {
		a.state.expireGas(a.cfg.Now())
		err = fmt.Errorf("refdata: gas of chain %d: %w", a.chain.ID, err)
		a.gasFailing = a.noteFailure(a.gasFailing, "gas refresh failing; keeping last record until it is too old", err)
		return err
	}
	a.gasFailing = a.noteRecovery(a.gasFailing, "gas refresh recovered")
	a.state.publishGas(rec, a.cfg.Now())
	a.armGasExpiry()
	return nil
}

func (a *chainActor) noteFailure(failing bool, msg string, err error) bool {
	if !failing {
		a.logger.Warn(msg, slog.Any("err", err))
	}
	return true
}

func (a *chainActor) noteRecovery(failing bool, msg string) bool {
	if failing {
		a.logger.Info(msg)
	}
	return false
}

// supervisor is the parent of the chain actors. It routes refresh requests
// to the right child, restarts a child that panics (protoactor's default
// one-for-one strategy), and signals Service.Stop once every child and then
// itself have stopped.
type supervisor struct {
	chains   []*chainActor
	children map[uint64]*actor.PID
	stopped  chan struct{}
}

func (s *supervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.children = make(map[uint64]*actor.PID, len(s.chains))
		for _, template := range s.chains {
			props := actor.PropsFromProducer(func() actor.Actor {
				// A restarted child starts from a fresh copy of its
				// template, with a fresh outage memory.
				c := *template
				return &c
			})
			s.children[template.chain.ID] = ctx.Spawn(props)
		}
	case refreshRequest:
		pid, ok := s.children[m.chainID]
		if !ok {
			m.reply.Send(fmt.Errorf("refdata: chain %d: %w", m.chainID, ErrUnknownChain))
			return
		}
		ctx.Send(pid, m)
	case *actor.Stopped:
		// protoactor delivers Stopped to a parent only after all of its
		// children have terminated.
		close(s.stopped)
	}
}

// Defaults of Config.
const (
	DefaultPriceInterval  = 15 * time.Second
	DefaultGasInterval    = 10 * time.Second
	DefaultRefreshTimeout = 5 * time.Second
	// DefaultPriceMaxAge is how old a price may be and still be served.
	DefaultPriceMaxAge = 5 * time.Minute
	// DefaultGasMaxAge is how old a gas record may be and still be served:
	// six refreshes at the default interval, long enough to ride out a few
	// failed reads, short enough that fees a minute old (the fee history
	// follows a spike within about that) are not quoted as the market's.
	DefaultGasMaxAge = time.Minute
)
