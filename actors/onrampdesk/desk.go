// Package onrampdesk runs the fiat on-ramp's orders: it prices purchases
// through the provider, opens orders, and expires orders nobody paid. It
// runs in one of two modes, chosen by its options:
//
//   - Sandbox (a Delivery is given): it applies what the user does on the
//     hosted checkout page and carries a paid order through the sandbox's
//     delivery (PAYMENT_RECEIVED → CRYPTO_SENT → COMPLETED, the crypto
//     credited on the sandbox chain) on its own timers.
//   - Live (no Delivery; the provider is an onramp.Reporter): the provider
//     takes the payment and delivers the crypto, and an order moves only on
//     the provider's reports: its signed webhooks (ProviderWebhook) and,
//     as the fallback for a webhook that never arrived, a lookup of each
//     open order's transaction every LookupInterval (a minute by default).
//     A report that skips states walks the order through each of them
//     (onramp.Order.Follow). There are no sandbox steps and no delivery.
//
// Every transition is persisted with the onramp.* event it publishes and
// the partner's activity line in one synced batch, and a started desk
// resumes every order not yet terminal, applying the expiries that fell
// while it was down.
//
// In a cluster (Options.Owner set) each node keeps the timers of the open
// orders it owns ("onramp/" and the uid, placed over the live members)
// and no others. A request about an order that reaches another node (the
// checkout page's payment, a provider's webhook, an order opened there) is
// applied there, through the store, and the owner picks the new state up
// at its next scan of the open orders: on each topology change and every
// RescanInterval, a node schedules the next step of every open order it
// owns whose stored state is not the one its timer was set for, and drops
// the timers of the orders it no longer owns (a dead node's orders are so
// taken over within a refresh of the membership and a scan). Two nodes
// may briefly both act on one order; every transition is written fenced
// (FencedStore): the one that read a state no longer stored writes nothing.
package onrampdesk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Store keeps orders; store.Onramp promises it (both backends).
type Store interface {
	OnrampOrder(ctx context.Context, uid string) (*onramp.Order, error)
	SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error
	EachOpenOnrampOrder(ctx context.Context, fn func(*onramp.Order) bool) error
}

// FencedStore writes a transition only while the stored order is still
// prev, the one read, and fails with store.ErrStale otherwise; the
// PostgreSQL store is one. A desk with an Owner needs it.
type FencedStore interface {
	SaveOnrampOrderFrom(ctx context.Context, prev, o *onramp.Order, events []webhook.Event) error
}

// Owner says which orders this node keeps the timers of in a cluster;
// *cluster.Node is one.
type Owner interface {
	Owns(key string) bool
	// Watch receives after each change of the cluster's topology.
	Watch() (<-chan struct{}, func())
}

// OwnerKey is the ownership key of the order uid.
func OwnerKey(uid string) string { return "onramp/" + uid }

// DefaultRescanInterval bounds how long a clustered owner takes to see a
// transition another node applied to one of its orders.
const DefaultRescanInterval = 2 * time.Second

// staleRetries bounds how often a user's action is read and applied again
// after another node moved the order between its read and its write.
const staleRetries = 3

// Delivery sends the bought crypto: amount base units of token to to on
// chainID, once per ref (a repeated call returns the first transfer's
// hash). The sandbox chain's ledger is one.
type Delivery interface {
	Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (txHash string, err error)
}

// Options configures a Desk.
type Options struct {
	Catalogue *onramp.Catalogue
	Provider  onramp.Provider
	// Delivery, given, makes a sandbox desk; nil makes a live one, whose
	// Provider must be an onramp.Reporter (see the package comment).
	Delivery Delivery
	// StepDelay is how long the sandbox takes from a payment to the crypto
	// being sent, and from there to completion (the block confirmations a
	// provider waits for); zero means DefaultStepDelay.
	StepDelay time.Duration
	// LookupInterval is how often, in live mode, an open order's
	// transaction is looked up at the provider; zero means
	// DefaultLookupInterval.
	LookupInterval time.Duration
	// Published is called after a transition published an event.
	Published func()
	// Owner, set in a cluster, limits the desk's timers to the orders this
	// node owns (see the package comment); the store must then be a
	// FencedStore. Nil keeps every order's, as a single node does.
	Owner Owner
	// RescanInterval paces a clustered desk's scans of the open orders
	// (default DefaultRescanInterval); topology changes scan at once.
	RescanInterval time.Duration
	Logger         *slog.Logger
	// Now is the desk's clock, nil meaning time.Now; tests move it to
	// reach an order's expiry, or pass it while the desk is stopped,
	// without waiting the checkout's fifteen minutes.
	Now func() time.Time
}

// DefaultStepDelay paces the sandbox's delivery so that a person watching
// the checkout page sees each step.
const DefaultStepDelay = 2 * time.Second

// DefaultLookupInterval paces live mode's lookups: a missed webhook is
// caught up within a minute, and an order waiting for its payment costs
// about fifteen calls to the provider over its checkout's lifetime.
const DefaultLookupInterval = time.Minute

// deliveryAttempts bounds the retries of a delivery the chain refused
// before the order is failed (and its payment returned).
const deliveryAttempts = 5

// Desk owns the on-ramp orders of a running service. One mutex serialises
// every transition: orders arrive at the pace of people paying, and one
// lock keeps each read-modify-write of an order whole.
type Desk struct {
	opt   Options
	store Store
	// fenced is the store's fenced write, used in a cluster.
	fenced FencedStore
	log    *slog.Logger
	now    func() time.Time
	// reporter is the live provider; nil in sandbox mode.
	reporter onramp.Reporter
	// stopping ends the provider calls in flight when Stop is called, so
	// that Stop does not wait for a slow provider.
	stopping context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	timers  map[string]*pending
	stopped bool
	wg      sync.WaitGroup
}

// pending is an order's next step, scheduled. A step that fires checks
// under d.mu that it is still the order's pending one: a transition made
// while it waited for the lock (a payment stored as the expiry fell) has
// replaced it with the step that follows, and the stale one must neither
// act on the order nor unregister its replacement, which Stop could then
// no longer cancel.
type pending struct {
	timer *time.Timer
	// state is the order's state the step was set for: a clustered desk's
	// scan reschedules an order whose stored state differs.
	state onramp.State
}

// Start opens the desk and resumes the open orders.
func Start(ctx context.Context, store Store, opt Options) (*Desk, error) {
	if opt.Catalogue == nil || opt.Provider == nil {
		return nil, errors.New("onrampdesk: a catalogue and a provider are required")
	}
	var reporter onramp.Reporter
	if opt.Delivery == nil {
		r, ok := opt.Provider.(onramp.Reporter)
		if !ok {
			return nil, fmt.Errorf("onrampdesk: %s delivers nothing itself and reports nothing: a sandbox desk needs a delivery", opt.Provider.Name())
		}
		reporter = r
	}
	if opt.StepDelay <= 0 {
		opt.StepDelay = DefaultStepDelay
	}
	if opt.LookupInterval <= 0 {
		opt.LookupInterval = DefaultLookupInterval
	}
	if opt.RescanInterval <= 0 {
		opt.RescanInterval = DefaultRescanInterval
	}
	d := &Desk{opt: opt, store: store, log: opt.Logger, now: opt.Now, reporter: reporter, timers: map[string]*pending{}}
	if opt.Owner != nil {
		f, ok := store.(FencedStore)
		if !ok {
			return nil, errors.New("onrampdesk: a clustered desk needs a store with fenced writes")
		}
		d.fenced = f
	}
	d.stopping, d.stop = context.WithCancel(context.Background())
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	var open []*onramp.Order
	if err := store.EachOpenOnrampOrder(ctx, func(o *onramp.Order) bool { open = append(open, o); return true }); err != nil {
		d.stop()
		return nil, fmt.Errorf("onrampdesk: resume: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range open {
		d.scheduleLocked(o, 0)
	}
	if opt.Owner != nil {
		watch, cancel := opt.Owner.Watch()
		d.wg.Add(1)
		go d.rescan(watch, cancel)
	}
	return d, nil
}

// owns reports whether this node keeps the order's timers.
func (d *Desk) owns(uid string) bool {
	return d.opt.Owner == nil || d.opt.Owner.Owns(OwnerKey(uid))
}

// rescan adopts, after each topology change and every RescanInterval
// until Stop, the open orders this node owns whose stored state its
// timers do not follow, and drops the timers of those it no longer owns.
func (d *Desk) rescan(watch <-chan struct{}, cancel func()) {
	defer d.wg.Done()
	defer cancel()
	tick := time.NewTicker(d.opt.RescanInterval)
	defer tick.Stop()
	for {
		select {
		case <-d.stopping.Done():
			return
		case <-watch:
		case <-tick.C:
		}
		ctx, done := context.WithTimeout(d.stopping, stepTimeout)
		var open []*onramp.Order
		err := d.store.EachOpenOnrampOrder(ctx, func(o *onramp.Order) bool { open = append(open, o); return true })
		done()
		if err != nil {
			d.log.Warn("on-ramp scan of open orders failed", slog.Any("err", err))
			continue
		}
		d.mu.Lock()
		for uid, p := range d.timers {
			if !d.owns(uid) {
				if p.timer.Stop() {
					d.wg.Done()
				}
				delete(d.timers, uid)
			}
		}
		for _, o := range open {
			if p, ok := d.timers[o.UID]; (!ok || p.state != o.State) && d.owns(o.UID) {
				d.scheduleLocked(o, 0)
			}
		}
		d.mu.Unlock()
	}
}

// save writes a transition: fenced by before, the order as read, in a
// cluster.
func (d *Desk) save(ctx context.Context, before, o *onramp.Order, events []webhook.Event) error {
	if d.fenced != nil {
		return d.fenced.SaveOnrampOrderFrom(ctx, before, o, events)
	}
	return d.store.SaveOnrampOrder(ctx, o, events)
}

// Stop cancels the pending steps and waits for a running one; an order
// stopped mid-way resumes at the next Start.
func (d *Desk) Stop() {
	d.stop()
	d.mu.Lock()
	d.stopped = true
	for uid, p := range d.timers {
		if p.timer.Stop() {
			d.wg.Done()
		}
		delete(d.timers, uid)
	}
	d.mu.Unlock()
	d.wg.Wait()
}

// Catalogue is what requests are checked against.
func (d *Desk) Catalogue() *onramp.Catalogue { return d.opt.Catalogue }

// feeBps is the partner's on-ramp fee, the anonymous tier's without a key.
func feeBps(p *account.Partner) (int, *apierr.Error) {
	if p == nil {
		return account.AnonymousOnrampFeeBps, nil
	}
	if p.FeeTier.OnrampFeeBps > account.MaxFeeBps {
		return 0, apierr.New(apierr.PartnerFeeExceedsMax, fmt.Sprintf("the partner's on-ramp fee of %d bps exceeds the platform maximum of %d bps",
			p.FeeTier.OnrampFeeBps, account.MaxFeeBps))
	}
	return p.FeeTier.OnrampFeeBps, nil
}

// Quote prices a purchase for the partner (nil: anonymous). Nothing is
// recorded: an on-ramp quote is not a commitment.
func (d *Desk) Quote(ctx context.Context, p *account.Partner, r *onramp.Request, now time.Time) (*onramp.Quote, error) {
	bps, aerr := feeBps(p)
	if aerr != nil {
		return nil, aerr
	}
	return d.opt.Provider.Quote(ctx, r, bps, now, onramp.QuoteTTL)
}

// Checkout prices the purchase again, opens the order with the provider
// and stores it (CREATED) before answering; the order expires after
// onramp.CheckoutTTL unless paid.
func (d *Desk) Checkout(ctx context.Context, p *account.Partner, r *onramp.CheckoutRequest, now time.Time) (*onramp.Order, string, error) {
	bps, aerr := feeBps(p)
	if aerr != nil {
		return nil, "", aerr
	}
	q, err := d.opt.Provider.Quote(ctx, &r.Request, bps, now, onramp.CheckoutTTL)
	if err != nil {
		return nil, "", err
	}
	partnerID := ""
	if p != nil {
		partnerID = p.ID
	}
	o := onramp.NewOrder(partnerID, d.opt.Provider.Name(), r, q, now)
	o.Script(d.opt.StepDelay)
	url, err := d.opt.Provider.Open(ctx, o)
	if err != nil {
		return nil, "", fmt.Errorf("onrampdesk: open checkout with %s: %w", d.opt.Provider.Name(), err)
	}
	if err := d.store.SaveOnrampOrder(ctx, o, nil); err != nil {
		return nil, "", fmt.Errorf("onrampdesk: store order: %w", err)
	}
	d.mu.Lock()
	d.scheduleLocked(o, 0)
	d.mu.Unlock()
	return o, url, nil
}

// Order reads an order; an unknown uid is account.ErrNotFound.
func (d *Desk) Order(ctx context.Context, uid string) (*onramp.Order, error) {
	return d.store.OnrampOrder(ctx, uid)
}

// Act applies the user's action from the checkout page. A move the order's
// state does not allow is onramp.ErrTransition, and an order whose expiry
// passed is expired first, so that a late payment is refused.
func (d *Desk) Act(ctx context.Context, uid string, a onramp.Action) (*onramp.Order, error) {
	if d.reporter != nil {
		return nil, fmt.Errorf("%w: the provider's own checkout takes the payment", onramp.ErrTransition)
	}
	if _, ok := a.Target(); !ok {
		return nil, fmt.Errorf("%w: unknown action %q", onramp.ErrTransition, a)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for try := 1; ; try++ {
		o, err := d.actLocked(ctx, uid, a)
		// Another node moved the order between the read and the write
		// (its owner's step, in a cluster): the action is judged again
		// against what is stored now.
		if errors.Is(err, store.ErrStale) && try < staleRetries {
			continue
		}
		return o, err
	}
}

// actLocked reads the order and applies the action once, as the order's
// sandbox scenario lets it (onramp.Order.ActionMove: a scripted outcome
// holds whatever the checkout page is used for). The caller holds d.mu.
func (d *Desk) actLocked(ctx context.Context, uid string, a onramp.Action) (*onramp.Order, error) {
	o, err := d.store.OnrampOrder(ctx, uid)
	if err != nil {
		return nil, err
	}
	now := d.now()
	if o.State == onramp.Created && !now.Before(o.ExpiresAt) {
		if err := d.moveLocked(ctx, o, onramp.Expired, now, "", "the checkout expired unpaid"); err != nil {
			return nil, err
		}
		return o, fmt.Errorf("%w: the order expired", onramp.ErrTransition)
	}
	to, reason, err := o.ActionMove(a)
	if err != nil {
		return o, err
	}
	if err := d.moveLocked(ctx, o, to, now, "", reason); err != nil {
		return nil, err
	}
	return o, nil
}

// moveLocked applies one transition, stores it with its event, wakes the
// webhook pool and schedules what follows. The caller holds d.mu.
func (d *Desk) moveLocked(ctx context.Context, o *onramp.Order, to onramp.State, at time.Time, txHash, reason string) error {
	before := *o
	before.History = append([]onramp.Step(nil), o.History...)
	ev, err := o.Move(to, at, txHash, reason)
	if err != nil {
		return err
	}
	var events []webhook.Event
	if ev != nil {
		events = append(events, *ev)
	}
	if err := d.save(ctx, &before, o, events); err != nil {
		*o = before
		return fmt.Errorf("onrampdesk: store %s → %s: %w", o.UID, to, err)
	}
	d.log.Info("on-ramp order moved", slog.String("orderUid", o.UID), slog.String("status", string(to)))
	if ev != nil && d.opt.Published != nil {
		d.opt.Published()
	}
	d.scheduleLocked(o, 0)
	return nil
}

// scheduleLocked sets the order's next step by itself: its expiry while
// CREATED, the delivery once paid, the completion once sent; a terminal
// order has none. attempt counts the delivery's retries. The caller holds
// d.mu.
func (d *Desk) scheduleLocked(o *onramp.Order, attempt int) {
	if p, ok := d.timers[o.UID]; ok {
		if p.timer.Stop() {
			d.wg.Done()
		}
		delete(d.timers, o.UID)
	}
	if d.stopped || !d.owns(o.UID) {
		// Its owner keeps its timers (a clustered desk).
		return
	}
	var wait time.Duration
	switch o.State {
	case onramp.Created:
		wait = o.ExpiresAt.Sub(d.now())
		if _, _, ok := o.ScriptedMove(); ok {
			// A sandbox scenario moves the order a step after it opened.
			wait = min(wait, d.opt.StepDelay)
		}
	case onramp.PaymentReceived, onramp.CryptoSent:
		wait = d.opt.StepDelay
	default:
		return
	}
	switch {
	case d.reporter != nil:
		// Live: the next lookup, or the expiry if it comes first.
		wait = min(wait, d.opt.LookupInterval)
		if o.State != onramp.Created {
			wait = d.opt.LookupInterval
		}
	case attempt > 0:
		wait = max(wait, d.opt.StepDelay)
	}
	uid := o.UID
	p := &pending{state: o.State}
	d.wg.Add(1)
	d.timers[uid] = p
	p.timer = time.AfterFunc(max(wait, 0), func() {
		defer d.wg.Done()
		if d.reporter != nil {
			d.lookup(uid, p)
			return
		}
		d.step(uid, attempt, p)
	})
}

// stepTimeout bounds one step's store and chain calls.
const stepTimeout = 30 * time.Second

// step takes an order one step further by itself, unless p is no longer
// the order's pending step (see pending).
func (d *Desk) step(uid string, attempt int, p *pending) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timers[uid] != p {
		return
	}
	delete(d.timers, uid)
	if d.stopped || !d.owns(uid) {
		return
	}
	o, err := d.store.OnrampOrder(ctx, uid)
	if err != nil {
		d.log.Error("on-ramp order unreadable", slog.String("orderUid", uid), slog.Any("err", err))
		return
	}
	now := d.now()
	if to, reason, ok := o.ScriptedMove(); ok && d.reporter == nil && (o.State != onramp.Created || now.Before(o.ExpiresAt)) {
		// A sandbox scenario's move, in place of the buyer's action or
		// the delivery; stored with its event like any other.
		if err := d.moveLocked(ctx, o, to, now, "", reason); err != nil {
			d.log.Error("on-ramp scripted step failed; retrying", slog.String("orderUid", uid), slog.Any("err", err))
			d.scheduleLocked(o, attempt+1)
		}
		return
	}
	switch o.State {
	case onramp.Created:
		if now.Before(o.ExpiresAt) {
			d.scheduleLocked(o, 0)
			return
		}
		err = d.moveLocked(ctx, o, onramp.Expired, now, "", "the checkout expired unpaid")
	case onramp.PaymentReceived:
		err = d.deliverLocked(ctx, o, now, attempt)
	case onramp.CryptoSent:
		err = d.moveLocked(ctx, o, onramp.Completed, now, "", "")
	}
	if errors.Is(err, store.ErrStale) {
		// Another node moved it meanwhile: the next step starts from
		// what is stored now.
		d.log.Info("on-ramp order moved by another node", slog.String("orderUid", uid))
		if fresh, rerr := d.store.OnrampOrder(ctx, uid); rerr == nil {
			d.scheduleLocked(fresh, 0)
			return
		}
	}
	if err != nil {
		d.log.Error("on-ramp step failed; retrying", slog.String("orderUid", uid), slog.Any("err", err))
		d.scheduleLocked(o, attempt+1)
	}
}

// deliverLocked sends the paid order's crypto and records CRYPTO_SENT. A
// delivery the chain keeps refusing fails the order after
// deliveryAttempts tries.
func (d *Desk) deliverLocked(ctx context.Context, o *onramp.Order, now time.Time, attempt int) error {
	q := &o.Quote
	hash, err := d.opt.Delivery.Deliver(ctx, q.ChainID, "onramp/"+o.UID, o.Wallet, q.Token, q.BaseUnits())
	if err != nil {
		if attempt+1 >= deliveryAttempts {
			return d.moveLocked(ctx, o, onramp.Failed, now, "", "the crypto could not be delivered: "+err.Error())
		}
		return fmt.Errorf("deliver: %w", err)
	}
	return d.moveLocked(ctx, o, onramp.CryptoSent, now, hash, "")
}

// lookup is live mode's step: it asks the provider where the order's
// transaction stands and follows the answer, then expires the order if it
// is still unpaid past its expiry (a lookup that failed does not hold the
// expiry back), and schedules the next lookup. The provider is asked
// without d.mu held, so that webhooks and other orders do not wait for it;
// a webhook that moved the order meanwhile is read back before the answer
// is applied, and an answer older than what the order shows changes
// nothing.
func (d *Desk) lookup(uid string, p *pending) {
	ctx, cancel := context.WithTimeout(d.stopping, stepTimeout)
	defer cancel()
	d.mu.Lock()
	if d.timers[uid] != p || d.stopped || !d.owns(uid) {
		if d.timers[uid] == p {
			delete(d.timers, uid)
		}
		d.mu.Unlock()
		return
	}
	o, err := d.store.OnrampOrder(ctx, uid)
	d.mu.Unlock()
	if err != nil {
		d.log.Error("on-ramp order unreadable", slog.String("orderUid", uid), slog.Any("err", err))
	}
	var u *onramp.Update
	if err == nil && !o.State.Terminal() {
		if u, err = d.reporter.Lookup(ctx, o); err != nil {
			d.log.Warn("on-ramp lookup failed; retrying at the next", slog.String("orderUid", uid),
				slog.String("provider", d.opt.Provider.Name()), slog.Any("err", err))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	mine := d.timers[uid] == p
	if mine {
		delete(d.timers, uid)
	}
	if d.stopped {
		return
	}
	if fresh, rerr := d.store.OnrampOrder(ctx, uid); rerr == nil {
		o = fresh
	} else if o == nil {
		// Unreadable twice: the next start resumes it.
		return
	}
	now := d.now()
	if u != nil {
		if err := d.followLocked(ctx, o, u, now); err != nil {
			d.log.Warn("on-ramp lookup not applied", slog.String("orderUid", uid), slog.Any("err", err))
		}
	}
	if o.State == onramp.Created && !now.Before(o.ExpiresAt) {
		if err := d.moveLocked(ctx, o, onramp.Expired, now, "", "the checkout expired unpaid"); err == nil {
			return
		}
	}
	if _, scheduled := d.timers[uid]; mine && !scheduled {
		d.scheduleLocked(o, 0)
	}
}

// ProviderWebhook verifies a live provider's webhook (signature is its
// signature header's value, body the raw body) and applies the update it
// carries. A bad signature is onramp.ErrBadSignature and an unreadable
// body onramp.ErrMalformedWebhook, and neither changes anything. An
// authentic webhook about no order of this service, a report the order
// already shows (a replay), or one its state machine cannot follow is
// acknowledged (nil) and changes nothing, so that the provider does not
// retry it; only a failure to store the transition is an error it should
// retry. The signature's age is judged by the real clock, the sender's.
func (d *Desk) ProviderWebhook(ctx context.Context, signature string, body []byte) error {
	if d.reporter == nil {
		return fmt.Errorf("%w: the %s provider sends no webhooks", onramp.ErrBadSignature, d.opt.Provider.Name())
	}
	u, err := d.reporter.Webhook(signature, body, time.Now())
	if err != nil {
		return err
	}
	if u == nil || !onramp.ValidUID(u.UID) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o, err := d.store.OnrampOrder(ctx, u.UID)
	if errors.Is(err, account.ErrNotFound) {
		d.log.Warn("on-ramp webhook for an unknown order", slog.String("orderUid", u.UID))
		return nil
	} else if err != nil {
		return fmt.Errorf("onrampdesk: read %s: %w", u.UID, err)
	}
	if err := d.followLocked(ctx, o, u, d.now()); err != nil {
		if errors.Is(err, onramp.ErrTransition) {
			d.log.Warn("on-ramp webhook not applied", slog.String("orderUid", u.UID), slog.Any("err", err))
			return nil
		}
		return err
	}
	return nil
}

// followLocked brings the order to the state a provider reported, storing
// every move with its events in one batch. The moves are dated at the
// provider's time, within the order's last step and now, so that the
// history stays in order whatever the provider's clock. An order still
// CREATED past its expiry follows a payment the provider reports: the
// user's money moved, which outweighs the service's clock. The caller
// holds d.mu.
func (d *Desk) followLocked(ctx context.Context, o *onramp.Order, u *onramp.Update, now time.Time) error {
	at := u.At
	if at.IsZero() || at.After(now) {
		at = now
	}
	if last := o.History[len(o.History)-1].At; at.Before(last) {
		at = last
	}
	before := *o
	before.History = append([]onramp.Step(nil), o.History...)
	events, err := o.Follow(u, at)
	if err != nil || len(events) == 0 {
		return err
	}
	if err := d.save(ctx, &before, o, events); err != nil {
		*o = before
		return fmt.Errorf("onrampdesk: store %s → %s: %w", o.UID, u.State, err)
	}
	d.log.Info("on-ramp order moved", slog.String("orderUid", o.UID), slog.String("status", string(o.State)),
		slog.String("provider", d.opt.Provider.Name()))
	if d.opt.Published != nil {
		d.opt.Published()
	}
	d.scheduleLocked(o, 0)
	return nil
}
