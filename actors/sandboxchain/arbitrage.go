package sandboxchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// The sandbox's arbitrage on chain 369 (pulsesim.Arbitrage): every period
// the chains' owner asks the arbitrage for the arbitrageur's next
// transaction (an approve, or a swap through the PulseX router that brings
// the pool furthest from its reference price back to it) and applies it as
// an ordinary send from pulsesim.ArbitrageurAddress, recorded like any
// other operation, until every pool is within
// pulsesim.ArbitrageToleranceBps. A restart therefore replays the
// arbitrage's swaps with the rest and comes back to the same reserves. A
// pool moved by a swap is back at its reference within a period or two
// (each tick closes the gap of every pool up to the pool fee's residue),
// well within a minute at DefaultArbitragePeriod. A single process runs
// the loop in Service; a cluster runs it on the node that owns chain 369's
// grain (Remote.RunArbitrage, the grain's arbitrage method).

// DefaultArbitragePeriod is how often the arbitrage looks at the pools
// when Options.ArbitragePeriod is zero.
const DefaultArbitragePeriod = 5 * time.Second

// maxArbitrageTxs bounds the transactions of one tick, so that a pool the
// arbitrageur cannot restore (it ran out of a token) costs a bounded
// number of failed transactions per period.
const maxArbitrageTxs = 16

// arbitrageChain is the chain the arbitrage trades on.
const arbitrageChain = quote.PulseChainID

// errMoved is a chain that changed between the arbitrage's read and its
// send: the transaction is decided again on the next round.
var errMoved = errors.New("sandboxchain: chain 369 moved while the arbitrage decided")

// newArbitrage builds the arbitrage over the pools of payments (which must
// offer its genesis pools, as pulsesim.SandboxChain does), or nil when
// there is nothing to arbitrage.
func newArbitrage(contracts *pulseroute.Contracts, payments pulseroute.ChainState) *pulsesim.Arbitrage {
	g, ok := payments.(interface{ GenesisPools() []pulsesim.GenesisPool })
	if !ok {
		return nil
	}
	if contracts == nil {
		contracts = pulseroute.DefaultContracts()
	}
	return pulsesim.NewArbitrage(contracts.PulseX(), g.GenesisPools())
}

// arbitrageTick applies the arbitrageur's transactions on chain until the
// arbitrage has none left (or maxArbitrageTxs), each decided on the chain
// as it is and applied through apply, which records it. It returns how
// many transactions it applied. A transaction that mined but failed ends
// the tick: the next one would be decided on the same state.
func arbitrageTick(arb *pulsesim.Arbitrage, now func() time.Time, view func(func(*simchain.Chain)) error,
	apply func(op sandboxnet.Op, head uint64) (*simchain.Receipt, error)) (int, error) {
	applied := 0
	for i := 0; i < maxArbitrageTxs; i++ {
		var (
			tx   simchain.TxRequest
			ok   bool
			head uint64
			err  error
		)
		if verr := view(func(c *simchain.Chain) {
			tx, ok, err = arb.Next(c, now())
			head = c.Head().Number
		}); verr != nil {
			return applied, verr
		}
		if err != nil || !ok {
			return applied, err
		}
		r, err := apply(sandboxnet.Op{Kind: sandboxnet.OpSend, From: pulsesim.ArbitrageurAddress(), Tx: tx}, head)
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return applied, err
		}
		applied++
		if !r.Succeeded() {
			return applied, fmt.Errorf("sandboxchain: arbitrage transaction %s failed: %s", r.TxHash.Hex(), r.RevertReason)
		}
	}
	return applied, nil
}

// unchangedSince refuses a chain whose head moved past head.
func unchangedSince(head uint64) func(*sandboxnet.Chain) error {
	return func(c *sandboxnet.Chain) error {
		if c.Sim().Head().Number != head {
			return errMoved
		}
		return nil
	}
}

// arbitrageLoop is Service's arbitrage and its loop.
type arbitrageLoop struct {
	arb  *pulsesim.Arbitrage // nil: nothing to arbitrage
	stop context.CancelFunc
	done sync.WaitGroup
}

// startArbitrage starts the arbitrage on chain 369 every period, when the
// service has that chain and pools to arbitrage; period < 0 holds it off.
func (s *Service) startArbitrage(o Options) {
	period := o.ArbitragePeriod
	if period == 0 {
		period = DefaultArbitragePeriod
	}
	if _, ok := s.chains[arbitrageChain]; ok {
		s.arb.arb = newArbitrage(o.Contracts, o.Payments)
	}
	if s.arb.arb == nil || period < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.arb.stop = cancel
	s.arb.done.Add(1)
	go func() {
		defer s.arb.done.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := s.Arbitrage(ctx); err != nil && !errors.Is(err, ErrClosed) {
				s.log.Warn("sandbox arbitrage", slog.Any("err", err))
			}
		}
	}()
}

// stopArbitrage stops the loop and waits for its tick to end.
func (s *Service) stopArbitrage() {
	if s.arb.stop != nil {
		s.arb.stop()
	}
	s.arb.done.Wait()
}

// Arbitrage runs one round of the arbitrage on chain 369 now: the
// arbitrageur's transactions, each recorded as the service records a send,
// until every pool is within the tolerance. It returns how many it
// applied (none where the service has no chain 369 or no pools). The loop
// Start runs calls it every period; a test may call it directly (with the
// loop held off, Options.ArbitragePeriod < 0).
func (s *Service) Arbitrage(ctx context.Context) (int, error) {
	if s.arb.arb == nil {
		return 0, nil
	}
	return arbitrageTick(s.arb.arb, s.now,
		func(fn func(*simchain.Chain)) error { return s.View(ctx, arbitrageChain, fn) },
		func(op sandboxnet.Op, head uint64) (*simchain.Receipt, error) {
			return s.apply(ctx, arbitrageChain, op, unchangedSince(head))
		})
}

// grainArbitrage asks chain 369's grain for one round of the arbitrage; it
// answers only a failure, so that a retried round (which finds nothing
// left to do) answers as the first did.
const grainArbitrage = "arbitrage"

// arbitrage runs one round of the arbitrage on the grain's chain, each
// transaction applied and appended as a change is (the grain runs one
// request at a time, so nothing moves the chain between the decision and
// the send). A grain of another chain, or without pools, does nothing.
func (g *Grain) arbitrage(ctx context.Context) (int, error) {
	if g.arb == nil {
		return 0, nil
	}
	return arbitrageTick(g.arb, g.now,
		func(fn func(*simchain.Chain)) error { fn(g.chain.Sim()); return nil },
		func(op sandboxnet.Op, _ uint64) (*simchain.Receipt, error) {
			a, err := g.apply(ctx, op, "")
			return a.Receipt, err
		})
}

// ArbitrageOwner is what RunArbitrage needs of a cluster node
// (*cluster.Node): whether it owns a grain now, and a way to call it.
type ArbitrageOwner interface {
	Caller
	Owns(key string) bool
}

// RunArbitrage drives the arbitrage of chain 369's grain in a cluster until
// ctx ends: every period (zero: DefaultArbitragePeriod), the node that owns
// the grain now asks it for a round; the other nodes do nothing, so that
// one node trades at a time. Every node runs it; ownership moves with the
// grain.
func RunArbitrage(ctx context.Context, node ArbitrageOwner, period time.Duration, log *slog.Logger) {
	if period == 0 {
		period = DefaultArbitragePeriod
	}
	if period < 0 {
		return
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	identity := fmt.Sprint(arbitrageChain)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !node.Owns(GrainKind + "/" + identity) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, DefaultCallTimeout)
		body, err := node.Call(cctx, GrainKind, identity, grainArbitrage, nil)
		cancel()
		if err == nil {
			var out grainReply
			if err = json.Unmarshal(body, &out); err == nil {
				err = out.Err.decode()
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("sandbox arbitrage", slog.Any("err", err))
		}
	}
}
