// Package inbound runs the multi-step pulseroute deposits after step 1:
// it registers a deposit (the signed registration checked against the
// source chain) and then carries step 2 by itself — the bridge to chain
// 369, the DEX leg into the asked token for the user, and, when that leg
// fails, the fallback that sends the bridged USDCh to the user instead.
// Every step is persisted with the webhook event it publishes in one synced
// batch, and a started runner resumes every deposit not yet terminal.
//
// In a cluster (Options.Owner set) each node runs step 2 of the deposits
// it owns ("inbound/" and the step-1 hash in lower case, placed over the
// live members) and no others: a deposit registered on another node is
// adopted from the store by its owner at its next scan (on each topology
// change and every RescanInterval), which is also how a dead node's
// deposits are taken over, and a node stops a deposit it no longer owns
// before its next step. Two nodes may briefly both run one deposit; every
// step is written fenced (FencedStore), so the one that read a state no
// longer stored writes nothing and stops, and each delivery on 369 is made
// once per reference by the chain.
package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Store keeps registered deposits; store.Inbound promises it (both backends).
type Store interface {
	InboundDepositByHash(ctx context.Context, txHash string) (*inbound.Record, error)
	CreateInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) (*inbound.Record, bool, error)
	SaveInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) error
	EachOpenInboundDeposit(ctx context.Context, fn func(*inbound.Record) bool) error
	QuoteByRef(ctx context.Context, ref [32]byte) (string, error)
}

// FencedStore writes a step only while the stored deposit is still prev,
// the one read, and fails with store.ErrStale otherwise; the
// PostgreSQL store is one. A runner with an Owner needs it.
type FencedStore interface {
	SaveInboundDepositFrom(ctx context.Context, prev, d *inbound.Record, events []webhook.Event) error
}

// Owner says which deposits this node runs in a cluster; *cluster.Node is
// one.
type Owner interface {
	Owns(key string) bool
	// Watch receives after each change of the cluster's topology.
	Watch() (<-chan struct{}, func())
}

// OwnerKey is the ownership key of the deposit whose step-1 transaction
// is txHash.
func OwnerKey(txHash string) string { return "inbound/" + strings.ToLower(txHash) }

// DefaultRescanInterval bounds how long a deposit registered on a node
// that does not own it waits for its owner to adopt it.
const DefaultRescanInterval = 2 * time.Second

// Chain reads the source chain and moves funds on chain 369 (the sandbox
// chains, or a node where configured).
type Chain interface {
	// Evidence is what the source chain shows of a transaction.
	Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (inbound.Evidence, error)
	// QuoteRef is the quote reference a step-1 transaction carries, if any.
	QuoteRef(ctx context.Context, chainID uint64, txHash common.Hash) (ref [32]byte, ok bool, err error)
	// Deliver pays amount of token to to on chainID for ref, once.
	Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (txHash string, err error)
}

// Tickets returns issued quotes' tickets, expired ones included.
type Tickets interface {
	Ticket(ctx context.Context, id string) (*quote.Ticket, error)
}

// Options configures a Runner.
type Options struct {
	Contracts *pulseroute.Contracts
	// PendingRef finds a multi-step quote by its reference while the
	// ticket keeper has not committed it to the store's index yet (a step
	// 1 registered moments after its quote); nil reads the store alone,
	// and a deposit whose quote is not found has no partner to tell.
	PendingRef func(ref [32]byte) (quoteID string, ok bool)
	// DEX prices the leg on 369; pulseroute's chain state is one.
	DEX pulseroute.ChainState
	// BridgeDelay is how long the bridge takes to deliver on 369.
	BridgeDelay time.Duration
	// BridgeFails reports whether the bridge of the deposit whose step-1
	// transaction is txHash fails: the sandbox's share of failing bridges
	// (sandbox.BridgeFails), so that a deposit ending FAILED can be seen
	// and tested through the real service. Such a deposit ends FAILED when
	// its bridge would have delivered, and nothing is paid on 369. Nil: no
	// bridge fails.
	BridgeFails func(txHash string) bool
	// Published is called after a step published an event.
	Published func()
	// Owner, set in a cluster, limits the runner to the deposits this node
	// owns (see the package comment); the store must then be a
	// FencedStore. Nil runs every deposit, as a single node does.
	Owner Owner
	// RescanInterval paces a clustered runner's scans of the open
	// deposits (default DefaultRescanInterval); topology changes scan at
	// once.
	RescanInterval time.Duration
	// Confirmations is how many blocks, its own included, a step-1
	// transaction needs before its deposit is RECEIVED (the transaction
	// manager's --confirmations; 0 counts as 1). A registration before that
	// waits in CONFIRMING (register.go).
	Confirmations uint64
	// Horizon is how long after its registration a CONFIRMING deposit is
	// read again before it fails (default DefaultHorizon; the service
	// passes the tracker's horizon).
	Horizon time.Duration
	// ConfirmPoll paces the reads of a CONFIRMING deposit's transaction
	// (default DefaultConfirmPoll).
	ConfirmPoll time.Duration
	// HoldReceived stops a deposit at RECEIVED: live mode, until its step
	// 2 runs through the transaction manager.
	HoldReceived bool
	Logger       *slog.Logger
	Now          func() time.Time
}

// Runner registers deposits and runs their step 2.
type Runner struct {
	store   Store
	chain   Chain
	tickets Tickets
	opts    Options
	// fenced is the store's fenced write, used in a cluster.
	fenced FencedStore

	// running holds the deposits whose step 2 runs on this node, by
	// OwnerKey, so that a scan starts none twice.
	mu      sync.Mutex
	running map[string]bool
	// found holds, by OwnerKey, the quote a CONFIRMING deposit's
	// confirmation found (register.go), for the step leaving CONFIRMING
	// to record.
	found map[string]quoteOf

	wg   sync.WaitGroup
	stop chan struct{}
}

// Start resumes every open deposit of store.
func Start(ctx context.Context, store Store, chain Chain, tickets Tickets, o Options) (*Runner, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RescanInterval <= 0 {
		o.RescanInterval = DefaultRescanInterval
	}
	if o.Confirmations == 0 {
		o.Confirmations = 1
	}
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	if o.ConfirmPoll <= 0 {
		o.ConfirmPoll = DefaultConfirmPoll
	}
	r := &Runner{store: store, chain: chain, tickets: tickets, opts: o, running: map[string]bool{}, found: map[string]quoteOf{}, stop: make(chan struct{})}
	if o.Owner != nil {
		f, ok := store.(FencedStore)
		if !ok {
			return nil, errors.New("inbound: a clustered runner needs a store with fenced writes")
		}
		r.fenced = f
	}
	if err := r.adoptOpen(ctx); err != nil {
		return nil, fmt.Errorf("inbound: resume open deposits: %w", err)
	}
	if o.Owner != nil {
		watch, cancel := o.Owner.Watch()
		r.wg.Add(1)
		go r.rescan(watch, cancel)
	}
	return r, nil
}

// owns reports whether this node runs the deposit of a step-1 hash.
func (r *Runner) owns(txHash string) bool {
	return r.opts.Owner == nil || r.opts.Owner.Owns(OwnerKey(txHash))
}

// adoptOpen runs every open deposit this node owns and does not run yet.
func (r *Runner) adoptOpen(ctx context.Context) error {
	var open []*inbound.Record
	if err := r.store.EachOpenInboundDeposit(ctx, func(d *inbound.Record) bool {
		open = append(open, d)
		return true
	}); err != nil {
		return err
	}
	for _, d := range open {
		r.run(*d)
	}
	return nil
}

// rescan adopts the open deposits this node owns after each topology
// change and every RescanInterval, until Stop.
func (r *Runner) rescan(watch <-chan struct{}, cancel func()) {
	defer r.wg.Done()
	defer cancel()
	tick := time.NewTicker(r.opts.RescanInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-watch:
		case <-tick.C:
		}
		ctx, done := context.WithTimeout(context.Background(), 10*time.Second)
		if err := r.adoptOpen(ctx); err != nil {
			r.opts.Logger.Warn("inbound: scan open deposits", "err", err)
		}
		done()
	}
}

// Stop stops running step 2 (a deposit stopped midway resumes at the next
// start) and waits for the steps in flight.
func (r *Runner) Stop() {
	close(r.stop)
	r.wg.Wait()
}

// Deposit returns the deposit registered for a step-1 transaction, or
// store.ErrNotFound.
func (r *Runner) Deposit(ctx context.Context, txHash string) (*inbound.Record, error) {
	return r.store.InboundDepositByHash(ctx, txHash)
}

func (r *Runner) published(n int) {
	if n > 0 && r.opts.Published != nil {
		r.opts.Published()
	}
}

// run carries a deposit's step 2 to a terminal state on its own goroutine,
// working on its own copy of the record, unless it runs already or
// another node owns it; it stops early when the node no longer owns it or
// another node moved it (a clustered runner).
func (r *Runner) run(rec inbound.Record) {
	d := &rec
	hash := d.Deposit.Registration.TxHash.Hex()
	key := OwnerKey(hash)
	if d.Deposit.State.Terminal() || !r.owns(hash) {
		return
	}
	r.mu.Lock()
	if r.running[key] {
		r.mu.Unlock()
		return
	}
	r.running[key] = true
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.running, key)
			r.mu.Unlock()
		}()
		for !d.Deposit.State.Terminal() {
			if !r.owns(hash) {
				return
			}
			u, wait := r.step(d)
			if wait < 0 {
				return // held (Options.HoldReceived)
			}
			if wait > 0 {
				select {
				case <-r.stop:
					return
				case <-time.After(wait):
				}
				continue
			}
			next, ev, err := d.Deposit.Apply(u)
			if err != nil {
				r.opts.Logger.Error("inbound: step refused", "txHash", d.Deposit.Registration.TxHash.Hex(), "err", err)
				return
			}
			rec := *d
			rec.Deposit = next
			r.takeFound(&rec)
			var events []webhook.Event
			if ev != nil {
				events = append(events, *ev)
			}
			if err := r.save(d, &rec, events); err != nil {
				return
			}
			*d = rec
			r.published(len(events))
		}
	}()
}

// save persists a step from prev, the deposit as this runner holds it,
// retrying until it is stored or the runner stops. In a cluster the write
// is fenced by prev, and another node's move (store.ErrStale) stops
// the deposit here: its owner's scan resumes it from the stored state.
func (r *Runner) save(prev, d *inbound.Record, events []webhook.Event) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if r.fenced != nil {
			err = r.fenced.SaveInboundDepositFrom(ctx, prev, d, events)
		} else {
			err = r.store.SaveInboundDeposit(ctx, d, events)
		}
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, store.ErrStale) {
			r.opts.Logger.Info("inbound: deposit moved by another node", "txHash", d.Deposit.Registration.TxHash.Hex())
			return err
		}
		r.opts.Logger.Warn("inbound: save step", "txHash", d.Deposit.Registration.TxHash.Hex(), "err", err)
		select {
		case <-r.stop:
			return err
		case <-time.After(time.Second):
		}
	}
}

// next is the update that moves d on, or how long to wait before the next
// try.
func (r *Runner) next(d *inbound.Record) (inbound.Update, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dep := d.Deposit
	now := r.opts.Now()
	ref := dep.Registration.TxHash.Hex()
	to := dep.Registration.ToAddress.Hex()
	usdch := r.opts.Contracts.USDCh().Token
	switch dep.State {
	case inbound.Received:
		// The inbound receiver's transferRemote to 369; the sandbox names it
		// by the deposit it carries.
		return inbound.Update{Trigger: inbound.BridgeSent, At: now,
			TxHash: crypto.Keccak256Hash([]byte("bridge/" + ref))}, 0
	case inbound.Bridging:
		if wait := dep.UpdatedAt.Add(r.opts.BridgeDelay).Sub(now); wait > 0 {
			return inbound.Update{}, wait
		}
		if r.opts.BridgeFails != nil && r.opts.BridgeFails(ref) {
			// Nothing arrived on 369: the USDC stays where step 1 left it,
			// for an operator, as FAILED promises.
			return inbound.Update{Trigger: inbound.BridgeFailed, At: now,
				Reason: "the bridge to chain 369 did not deliver; the USDC waits on chain " +
					strconv.FormatUint(dep.SourceChain, 10) + " for an operator"}, 0
		}
		if dep.Registration.OutputToken == usdch {
			h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/bridge", to, usdch.Hex(), dep.AmountIn)
			if err != nil {
				return inbound.Update{}, time.Second
			}
			return inbound.Update{Trigger: inbound.Delivered, At: now, TxHash: common.HexToHash(h), AmountOut: dep.AmountIn}, 0
		}
		return inbound.Update{Trigger: inbound.Bridged, At: now}, 0
	case inbound.Swapping:
		out, err := r.swapOut(ctx, dep.AmountIn, usdch, dep.Registration.OutputToken)
		if err != nil {
			return inbound.Update{Trigger: inbound.SwapFailed, At: now, Reason: "the DEX leg on 369 failed: " + err.Error()}, 0
		}
		h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/swap", to, dep.Registration.OutputToken.Hex(), out)
		if err != nil {
			return inbound.Update{}, time.Second
		}
		return inbound.Update{Trigger: inbound.Swapped, At: now, TxHash: common.HexToHash(h), AmountOut: out}, 0
	case inbound.Fallback:
		h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/fallback", to, usdch.Hex(), dep.AmountIn)
		if err != nil {
			return inbound.Update{}, time.Second
		}
		return inbound.Update{Trigger: inbound.Refunded, At: now, TxHash: common.HexToHash(h), AmountOut: dep.AmountIn}, 0
	}
	return inbound.Update{}, time.Second
}

// swapOut prices the DEX leg from USDCh into out on 369: directly, or
// through WPLS (the native coin, the zero address, is WPLS unwrapped).
func (r *Runner) swapOut(ctx context.Context, amount *big.Int, usdch, out common.Address) (*big.Int, error) {
	if r.opts.DEX == nil {
		return nil, errors.New("no DEX on chain 369")
	}
	wpls := r.opts.Contracts.PulseX().WPLS
	target := out
	if out == (common.Address{}) {
		target = wpls
	}
	paths := [][]common.Address{{usdch, target}}
	if target != wpls {
		paths = append(paths, []common.Address{usdch, wpls, target})
	}
	var lastErr error
	for _, p := range paths {
		amounts, err := r.opts.DEX.AmountsOut(ctx, amount, p)
		if err == nil && len(amounts) == len(p) && amounts[len(amounts)-1].Sign() > 0 {
			return amounts[len(amounts)-1], nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = errors.New("no liquidity")
	}
	return nil, lastErr
}
