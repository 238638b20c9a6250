package sandboxchain

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// RelayChains is what the relayer reads and does on the sandbox chains:
// *Service on a single node, *Remote in a cluster.
type RelayChains interface {
	// WarpMessages lists the warp-route messages chainID dispatched in
	// blocks from on, and the head it read up to.
	WarpMessages(ctx context.Context, chainID, from uint64) ([]pulsesim.WarpMessage, uint64, error)
	// Relay delivers m on its destination, once per message id ever: a
	// message already delivered is answered with its delivery.
	Relay(ctx context.Context, m pulsesim.WarpMessage) (*simchain.Receipt, error)
}

// RelayerOptions tunes StartRelayer.
type RelayerOptions struct {
	// Contracts names the warp routers (nil: pulseroute's defaults).
	Contracts *pulseroute.Contracts
	// Delay is the bridge time: a message is delivered once Delay has
	// passed since its origin block's time.
	Delay time.Duration
	// Interval paces the scans of the origin chains (default
	// DefaultRelayInterval).
	Interval time.Duration
	// Delivers reports whether this node delivers on a destination chain:
	// in a cluster, the owner of the chain's grain. Nil delivers on every
	// chain, as a single node does.
	Delivers func(destination uint64) bool
	Now      func() time.Time
	Logger   *slog.Logger
}

// DefaultRelayInterval is how often the relayer looks for new messages
// and delivers those due.
const DefaultRelayInterval = 250 * time.Millisecond

// relayRetry is how long a delivery that failed waits before its next try.
const relayRetry = 5 * time.Second

// Relayer is the sandbox's Hyperlane relayer: it watches every warp
// router's dispatches on the sandbox chains, whoever sent them (a user's
// transferRemote, the sender contract's bridgeAndSwap, the operator
// account's step 2), and delivers each on its destination chain once the
// bridge time has passed since its origin block, as a relay operation on
// that chain (recorded, so that a restart replays it). It keeps nothing of
// its own: at start it reads every chain from its genesis, so a message
// sent while the service was down, or whose delay had not passed, is
// delivered once it is back, and one already delivered is answered by the
// destination chain without a second delivery (see Service.Relay).
type Relayer struct {
	chains RelayChains
	opts   RelayerOptions
	// origins are the chains with a warp router, and next the first block
	// of each not yet read.
	origins []uint64
	next    map[uint64]uint64
	// pending are the messages read and not yet delivered, by due time;
	// retry holds back those whose delivery failed.
	pending []pulsesim.WarpMessage
	retry   map[common.Hash]time.Time

	stop chan struct{}
	wg   sync.WaitGroup
}

// StartRelayer starts relaying over chains, whose ids are ids.
func StartRelayer(chains RelayChains, ids []uint64, o RelayerOptions) *Relayer {
	r := newRelayer(chains, ids, o)
	r.wg.Add(1)
	go r.run()
	return r
}

// newRelayer is a relayer that has not started.
func newRelayer(chains RelayChains, ids []uint64, o RelayerOptions) *Relayer {
	if o.Contracts == nil {
		o.Contracts = pulseroute.DefaultContracts()
	}
	if o.Interval <= 0 {
		o.Interval = DefaultRelayInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Relayer{chains: chains, opts: o, next: map[uint64]uint64{}, retry: map[common.Hash]time.Time{}, stop: make(chan struct{})}
	for _, id := range ids {
		if _, ok := o.Contracts.WarpRoute(id); ok {
			r.origins = append(r.origins, id)
		}
	}
	return r
}

// Stop ends the relaying and waits for a delivery in flight.
func (r *Relayer) Stop() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.wg.Wait()
}

func (r *Relayer) run() {
	defer r.wg.Done()
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		r.step()
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

// step reads the origins' new messages and delivers those due.
func (r *Relayer) step() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range r.origins {
		msgs, head, err := r.chains.WarpMessages(ctx, id, r.next[id])
		if err != nil {
			r.opts.Logger.Warn("warp relayer: read chain", slog.Uint64("chainId", id), slog.Any("err", err))
			continue
		}
		r.pending = append(r.pending, msgs...)
		r.next[id] = head + 1
	}
	sort.SliceStable(r.pending, func(i, j int) bool { return r.pending[i].SentAt.Before(r.pending[j].SentAt) })
	now := r.opts.Now()
	kept := r.pending[:0]
	for _, m := range r.pending {
		select {
		case <-r.stop:
			kept = append(kept, m)
			continue
		default:
		}
		if !r.deliver(ctx, m, now) {
			kept = append(kept, m)
		}
	}
	clear(r.pending[len(kept):])
	r.pending = kept
}

// deliver delivers m if it is due, here, and reports whether it is done
// with.
func (r *Relayer) deliver(ctx context.Context, m pulsesim.WarpMessage, now time.Time) bool {
	if now.Before(m.SentAt.Add(r.opts.Delay)) || now.Before(r.retry[m.ID]) {
		return false
	}
	if r.opts.Delivers != nil && !r.opts.Delivers(m.Destination) {
		return false // another node's chain, for as long as it is
	}
	rc, err := r.chains.Relay(ctx, m)
	if err != nil {
		r.retry[m.ID] = now.Add(relayRetry)
		r.opts.Logger.Warn("warp relayer: delivery failed; it is tried again", slog.String("messageId", m.ID.Hex()),
			slog.Uint64("origin", m.Origin), slog.Uint64("destination", m.Destination), slog.Any("err", err))
		return false
	}
	delete(r.retry, m.ID)
	r.opts.Logger.Debug("warp relayer: delivered", slog.String("messageId", m.ID.Hex()), slog.Uint64("destination", m.Destination),
		slog.String("txHash", rc.TxHash.Hex()))
	return true
}
