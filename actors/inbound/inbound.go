// Package inbound runs the multi-step pulseroute deposits after step 1:
// it registers a deposit (the signed registration checked against the
// source chain) and then carries step 2 through the transaction manager —
// the bridge to chain 369, the DEX leg into the asked token for the user,
// and, when that leg fails, the fallback that sends the bridged USDCh to
// the user instead (step2.go).
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
// longer stored writes nothing and stops, and each of step 2's transactions
// is one intent of the transaction manager under a key of its own, sent
// once whichever node submits it.
package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/webhook"
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

// Chain reads the source chain: a registration's evidence and the quote
// its step 1 executed. Step 2 moves funds through the transaction manager
// (Options.Txs, step2.go).
type Chain interface {
	// Evidence is what the source chain shows of a transaction.
	Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (inbound.Evidence, error)
	// QuoteRef is the quote reference a step-1 transaction carries, if any.
	QuoteRef(ctx context.Context, chainID uint64, txHash common.Hash) (ref [32]byte, ok bool, err error)
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
	// Txs submits step 2's transactions, signed by the operator's account
	// (the inbound receiver), and Nodes reads the chains they go to; a
	// runner without them registers deposits and leaves them RECEIVED.
	Txs   Transactions
	Nodes Nodes
	// Poll paces the reads of step 2's intents and of the delivery on 369
	// (default DefaultPoll).
	Poll time.Duration
	// BridgeHorizon is how long BRIDGING waits for the delivery on 369
	// before the deposit FAILED (default DefaultBridgeHorizon).
	BridgeHorizon time.Duration
	// SwapDeadline is the swap's deadline after its submission (default
	// DefaultSwapDeadline).
	SwapDeadline time.Duration
	// BridgeFails reports whether the bridge of the deposit whose step-1
	// transaction is txHash fails: the sandbox's share of failing bridges
	// (sandbox.BridgeFails), so that a deposit ending FAILED can be seen
	// and tested through the real service. Such a deposit sends no
	// transferRemote and ends FAILED from RECEIVED, its USDC left with the
	// operator account. Nil: no bridge fails.
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
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.BridgeHorizon <= 0 {
		o.BridgeHorizon = DefaultBridgeHorizon
	}
	if o.SwapDeadline <= 0 {
		o.SwapDeadline = DefaultSwapDeadline
	}
	if o.Txs == nil || o.Nodes == nil {
		o.Logger.Warn("inbound: no transaction manager: registered deposits wait in RECEIVED")
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
