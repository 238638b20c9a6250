// Package onrampdesk runs the fiat on-ramp's orders: it prices purchases
// through the provider, opens orders, applies what the user does on the
// checkout page, carries a paid order through the sandbox's delivery
// (PAYMENT_RECEIVED → CRYPTO_SENT → COMPLETED, the crypto credited on the
// sandbox chain) and expires orders nobody paid. Every transition is
// persisted with the onramp.* event it publishes and the partner's
// activity line in one synced batch, and a started desk resumes every order
// not yet terminal, applying the expiries that fell while it was down.
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
)

// Store keeps orders; *persistence.Store is one.
type Store interface {
	OnrampOrder(ctx context.Context, uid string) (*onramp.Order, error)
	SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error
	EachOpenOnrampOrder(ctx context.Context, fn func(*onramp.Order) bool) error
}

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
	Delivery  Delivery
	// StepDelay is how long the sandbox takes from a payment to the crypto
	// being sent, and from there to completion (the block confirmations a
	// provider waits for); zero means DefaultStepDelay.
	StepDelay time.Duration
	// Published is called after a transition published an event.
	Published func()
	Logger    *slog.Logger
	// Now is the desk's clock, nil meaning time.Now; tests move it to
	// reach an order's expiry, or pass it while the desk is stopped,
	// without waiting the checkout's fifteen minutes.
	Now func() time.Time
}

// DefaultStepDelay paces the sandbox's delivery so that a person watching
// the checkout page sees each step.
const DefaultStepDelay = 2 * time.Second

// deliveryAttempts bounds the retries of a delivery the chain refused
// before the order is failed (and its payment returned).
const deliveryAttempts = 5

// Desk owns the on-ramp orders of a running service. One mutex serialises
// every transition: orders arrive at the pace of people paying, and one
// lock keeps each read-modify-write of an order whole.
type Desk struct {
	opt   Options
	store Store
	log   *slog.Logger
	now   func() time.Time

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
type pending struct{ timer *time.Timer }

// Start opens the desk and resumes the open orders.
func Start(ctx context.Context, store Store, opt Options) (*Desk, error) {
	if opt.Catalogue == nil || opt.Provider == nil || opt.Delivery == nil {
		return nil, errors.New("onrampdesk: a catalogue, a provider and a delivery are required")
	}
	if opt.StepDelay <= 0 {
		opt.StepDelay = DefaultStepDelay
	}
	d := &Desk{opt: opt, store: store, log: opt.Logger, now: opt.Now, timers: map[string]*pending{}}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	var open []*onramp.Order
	if err := store.EachOpenOnrampOrder(ctx, func(o *onramp.Order) bool { open = append(open, o); return true }); err != nil {
		return nil, fmt.Errorf("onrampdesk: resume: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range open {
		d.scheduleLocked(o, 0)
	}
	return d, nil
}

// Stop cancels the pending steps and waits for a running one; an order
// stopped mid-way resumes at the next Start.
func (d *Desk) Stop() {
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
	to, ok := a.Target()
	if !ok {
		return nil, fmt.Errorf("%w: unknown action %q", onramp.ErrTransition, a)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
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
	if err := d.moveLocked(ctx, o, to, now, "", a.Reason()); err != nil {
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
	if err := d.store.SaveOnrampOrder(ctx, o, events); err != nil {
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
	if d.stopped {
		return
	}
	var wait time.Duration
	switch o.State {
	case onramp.Created:
		wait = o.ExpiresAt.Sub(d.now())
	case onramp.PaymentReceived, onramp.CryptoSent:
		wait = d.opt.StepDelay
	default:
		return
	}
	if attempt > 0 {
		wait = max(wait, d.opt.StepDelay)
	}
	uid := o.UID
	p := &pending{}
	d.wg.Add(1)
	d.timers[uid] = p
	p.timer = time.AfterFunc(max(wait, 0), func() {
		defer d.wg.Done()
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
	if d.stopped {
		return
	}
	o, err := d.store.OnrampOrder(ctx, uid)
	if err != nil {
		d.log.Error("on-ramp order unreadable", slog.String("orderUid", uid), slog.Any("err", err))
		return
	}
	now := d.now()
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
