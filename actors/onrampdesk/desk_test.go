package onrampdesk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// TestMain checks that a stopped desk leaves nothing running: no step
// goroutine and no timer that could still fire.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// market prices every token at one dollar but the native coin, and every
// chain's gas alike, so that an order's figures are known by hand: 100 USD
// buys 100 USDC, 100,000,000 base units.
type market struct{}

func (market) Price(_ uint64, token string) (float64, bool) {
	if token == registry.NativeAddressEVM {
		return 2000, true
	}
	return 1, true
}

func (market) Gas(chainID uint64) (gas.Record, bool) {
	return gas.Record{ChainID: chainID, Speed: gas.Speeds{Standard: gas.Tier{GasPrice: "10000000"}}}, true
}

// clock runs at the pace of real time from base, so that the desk's timers
// (real durations) and its clock agree, and it can jump ahead: the time a
// desk spent stopped, or a user coming back late.
type clock struct {
	mu     sync.Mutex
	base   time.Time
	start  time.Time
	jumped time.Duration
}

func newClock() *clock {
	return &clock{base: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), start: time.Now()}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.start) + c.jumped)
}

func (c *clock) Jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jumped += d
}

// call is one Deliver call as the delivery saw it.
type call struct {
	chainID          uint64
	ref, to, token   string
	amount           *big.Int
	failed, canceled bool
}

// delivery records its calls and refuses the first failFirst of them; a
// delivery that succeeds answers a hash of its ref, as the sandbox chain
// does, so a repeated call gives the same transaction.
type delivery struct {
	mu        sync.Mutex
	failFirst int
	calls     []call
}

// errRefused is what the failing delivery answers.
var errRefused = errors.New("the chain refused the transfer")

func (d *delivery) Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := call{chainID: chainID, ref: ref, to: to, token: token, amount: new(big.Int).Set(amount), canceled: ctx.Err() != nil}
	c.failed = len(d.calls) < d.failFirst
	d.calls = append(d.calls, c)
	if c.failed {
		return "", errRefused
	}
	return txHashOf(ref), nil
}

func txHashOf(ref string) string {
	h := sha256.Sum256([]byte(ref))
	return "0x" + hex.EncodeToString(h[:])
}

func (d *delivery) made() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// env is a desk over a real store on disk, with the registry's catalogue,
// the sandbox provider at fixed prices, a recording delivery and a clock
// the test moves.
type env struct {
	t         *testing.T
	dir       string
	store     *pebblestore.Store
	clock     *clock
	delivery  *delivery
	published atomic.Int64
	desk      *Desk
	cat       *onramp.Catalogue
}

const (
	wallet   = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	arbitrum = 42161
	baseURL  = "https://pay.example"
	// short paces the sandbox's steps in tests that wait for them; long
	// holds an order where it is for the length of any test.
	short = 5 * time.Millisecond
	long  = time.Hour
)

var catalogue = func() *onramp.Catalogue {
	reg, err := registry.Load()
	if err != nil {
		panic(err)
	}
	return onramp.NewCatalogue(reg)
}()

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clock: newClock(), delivery: &delivery{}, cat: catalogue}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *env) open() {
	e.t.Helper()
	s, err := pebblestore.Open(e.dir, pebblestore.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = s
}

// start starts a desk on the store; the previous one must be stopped.
func (e *env) start(step time.Duration) *Desk {
	e.t.Helper()
	d, err := Start(context.Background(), e.store, e.options(step))
	if err != nil {
		e.t.Fatal(err)
	}
	e.desk = d
	return d
}

func (e *env) options(step time.Duration) Options {
	return Options{Catalogue: e.cat, Provider: &onramp.Sandbox{Market: market{}, BaseURL: func() string { return baseURL }},
		Delivery: e.delivery, StepDelay: step, Published: func() { e.published.Add(1) }, Now: e.clock.Now}
}

// stop stops the desk, failing the test if that takes long: Stop must not
// wait for a step that is not due.
func (e *env) stop() {
	e.t.Helper()
	if e.desk == nil {
		return
	}
	done := make(chan struct{})
	go func() { e.desk.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		e.t.Fatal("the desk did not stop within 10 s")
	}
	e.desk = nil
}

// restart stops the desk, closes and reopens the store, and starts a new
// desk on it, as a restarted service does.
func (e *env) restart(step time.Duration) *Desk {
	e.t.Helper()
	e.stop()
	if err := e.store.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
	return e.start(step)
}

func (e *env) close() {
	e.stop()
	_ = e.store.Close()
}

// partner registers a webhook taking every on-ramp event for a partner with
// the on-ramp fee bps and returns the partner.
func (e *env) partner(id string, bps int) *account.Partner {
	e.t.Helper()
	if err := e.store.CreateWebhook(context.Background(), &webhook.Registration{PartnerID: id, URL: "https://example.com/hook",
		Events: []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted, webhook.OnrampFailed,
			webhook.OnrampRefunded}, Secret: "0123456789abcdef", Active: true}); err != nil {
		e.t.Fatal(err)
	}
	return &account.Partner{ID: id, FeeTier: account.FeeTier{OnrampFeeBps: bps}}
}

// request is 100 USD of USDC on Arbitrum by credit card to wallet.
func request(t *testing.T) *onramp.CheckoutRequest {
	t.Helper()
	amount, cur, asset, chain, w, ext := 100.0, "USD", "USDC", uint64(arbitrum), wallet, "acme-42"
	r, aerr := catalogue.ResolveCheckout(&onramp.CheckoutBody{QuoteBody: onramp.QuoteBody{FiatAmount: &amount, FiatCurrency: &cur,
		CryptoAsset: &asset, ChainID: &chain, WalletAddress: &w}, ExternalID: &ext})
	if aerr != nil {
		t.Fatal(aerr)
	}
	return r
}

// checkout opens an order for the partner (nil: anonymous) at the clock's
// time.
func (e *env) checkout(p *account.Partner) *onramp.Order {
	e.t.Helper()
	return e.checkoutAt(p, e.clock.Now())
}

func (e *env) checkoutAt(p *account.Partner, now time.Time) *onramp.Order {
	e.t.Helper()
	o, url, err := e.desk.Checkout(context.Background(), p, request(e.t), now)
	if err != nil {
		e.t.Fatal(err)
	}
	if url != baseURL+onramp.CheckoutPath+o.UID || o.State != onramp.Created {
		e.t.Fatalf("checkout answered %s for %+v", url, o)
	}
	return o
}

func (e *env) order(uid string) *onramp.Order {
	e.t.Helper()
	o, err := e.store.OnrampOrder(context.Background(), uid)
	if err != nil {
		e.t.Fatal(err)
	}
	return o
}

// waitState polls the store until the order is in state, with a deadline
// generous enough for a loaded machine under the race detector.
func (e *env) waitState(uid string, state onramp.State) *onramp.Order {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		o := e.order(uid)
		if o.State == state {
			return o
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("order %s is %s, waited for %s", uid, o.State, state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitPublished polls until Published was called n times: the desk calls
// it after the transition is stored, so a reader of the store may see the
// state first.
func (e *env) waitPublished(n int64) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for e.published.Load() < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("Published called %d times, waited for %d", e.published.Load(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// events lists the on-ramp events the outbox holds for the order, in the
// order they were published.
func (e *env) events(uid string) []string {
	e.t.Helper()
	out := []string{}
	if err := e.store.DueDeliveries(context.Background(), time.Time{}, time.Now().Add(24*time.Hour), nil, func(en *webhook.OutboxEntry) bool {
		if strings.Contains(string(en.Body), uid) {
			out = append(out, en.Event)
		}
		return true
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func states(o *onramp.Order) []onramp.State {
	var out []onramp.State
	for _, s := range o.History {
		out = append(out, s.State)
	}
	return out
}

// checkHistory holds the order's history to the states given, in time
// order.
func checkHistory(t *testing.T, o *onramp.Order, want ...onramp.State) {
	t.Helper()
	if got := states(o); !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	for i := 1; i < len(o.History); i++ {
		if o.History[i].At.Before(o.History[i-1].At) {
			t.Fatalf("history goes back in time: %+v", o.History)
		}
	}
}

// TestPayDeliversAndCompletes pays an order and follows the sandbox to
// COMPLETED: one delivery of the quoted base units of the token to the
// wallet on the chain, the transaction on CRYPTO_SENT, an event and a
// Published call per transition, and the partner fee pending in evm.
func TestPayDeliversAndCompletes(t *testing.T) {
	e := newEnv(t)
	e.start(short)
	p := e.partner("ptn_a", account.AnonymousOnrampFeeBps)
	o := e.checkout(p)
	if got := e.order(o.UID); !reflect.DeepEqual(got, o) {
		t.Fatalf("checkout stored %+v, answered %+v", got, o)
	}
	paid, err := e.desk.Act(context.Background(), o.UID, onramp.Pay)
	if err != nil || paid.State != onramp.PaymentReceived {
		t.Fatalf("pay: %+v %v", paid, err)
	}
	done := e.waitState(o.UID, onramp.Completed)
	e.waitPublished(3)
	checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	hash := txHashOf("onramp/" + o.UID)
	if sent := done.History[2]; sent.TxHash != hash || done.TxHash != hash {
		t.Fatalf("CRYPTO_SENT step %+v, order txHash %q, want %s", sent, done.TxHash, hash)
	}
	usdc, _ := catalogue.Asset("USDC", arbitrum)
	want := []call{{chainID: arbitrum, ref: "onramp/" + o.UID, to: wallet, token: usdc.Token.Address, amount: big.NewInt(100_000_000)}}
	if got := e.delivery.made(); !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries %+v, want %+v", got, want)
	}
	if want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}; !slices.Equal(e.events(o.UID), want) {
		t.Fatalf("events %v, want %v", e.events(o.UID), want)
	}
	if n := e.published.Load(); n != 3 {
		t.Fatalf("Published called %d times, want 3", n)
	}
	earnings, err := e.store.Earnings(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []account.EarningsGroup{{Ecosystem: "evm", RowCount: 1, TotalMicroUSD: 1_500_000}}; !reflect.DeepEqual(earnings.Pending, want) {
		t.Fatalf("pending earnings %+v, want %+v", earnings.Pending, want)
	}
	// A completed order has nothing more to do.
	time.Sleep(50 * short)
	if n := len(e.delivery.made()); n != 1 || e.published.Load() != 3 {
		t.Fatalf("a completed order went on: %d deliveries, %d publications", n, e.published.Load())
	}
}

// act is one action of a user on the checkout page; wait is the state the
// order must reach first, refused whether the desk must refuse it.
type act struct {
	action  onramp.Action
	wait    onramp.State
	refused bool
}

// TestActions drives orders through the checkout page's actions, the
// refused ones included: a refused action is onramp.ErrTransition and
// changes nothing (the stored order, the events, the Published calls).
func TestActions(t *testing.T) {
	pay, fail, refund := onramp.Pay, onramp.Fail, onramp.Refund
	cases := []struct {
		name      string
		step      time.Duration
		acts      []act
		want      onramp.State
		history   []onramp.State
		events    []string
		delivered int
	}{
		{name: "fail before payment", step: long, acts: []act{{action: fail}}, want: onramp.Failed,
			history: []onramp.State{onramp.Created, onramp.Failed}, events: []string{webhook.OnrampFailed}},
		{name: "refund after payment", step: long, acts: []act{{action: pay}, {action: refund}}, want: onramp.Refunded,
			history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			events:  []string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded}},
		{name: "fail after payment", step: long, acts: []act{{action: pay}, {action: fail}}, want: onramp.Failed,
			history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Failed},
			events:  []string{webhook.OnrampPaymentReceived, webhook.OnrampFailed}},
		{name: "refund before payment", step: long, acts: []act{{action: refund, refused: true}}, want: onramp.Created,
			history: []onramp.State{onramp.Created}, events: []string{}},
		{name: "unknown action", step: long, acts: []act{{action: "steal", refused: true}}, want: onramp.Created,
			history: []onramp.State{onramp.Created}, events: []string{}},
		{name: "pay twice", step: long, acts: []act{{action: pay}, {action: pay, refused: true}}, want: onramp.PaymentReceived,
			history: []onramp.State{onramp.Created, onramp.PaymentReceived}, events: []string{webhook.OnrampPaymentReceived}},
		{name: "anything after failing", step: long,
			acts: []act{{action: fail}, {action: pay, refused: true}, {action: fail, refused: true}, {action: refund, refused: true}},
			want: onramp.Failed, history: []onramp.State{onramp.Created, onramp.Failed}, events: []string{webhook.OnrampFailed}},
		{name: "anything after a refund", step: long,
			acts: []act{{action: pay}, {action: refund}, {action: refund, refused: true}, {action: pay, refused: true}, {action: fail, refused: true}},
			want: onramp.Refunded, history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.Refunded},
			events: []string{webhook.OnrampPaymentReceived, webhook.OnrampRefunded}},
		{name: "anything after completion", step: short,
			acts: []act{{action: pay}, {action: refund, wait: onramp.Completed, refused: true}, {action: fail, refused: true}, {action: pay, refused: true}},
			want: onramp.Completed, history: []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed},
			events:    []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted},
			delivered: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			e.start(tc.step)
			o := e.checkout(e.partner("ptn_a", 100))
			for _, a := range tc.acts {
				if a.wait != "" {
					e.waitState(o.UID, a.wait)
					e.waitPublished(int64(len(e.events(o.UID))))
				}
				before, events, published := e.order(o.UID), e.events(o.UID), e.published.Load()
				got, err := e.desk.Act(ctx, o.UID, a.action)
				if a.refused {
					if !errors.Is(err, onramp.ErrTransition) {
						t.Fatalf("%s on a %s order: %v, want ErrTransition", a.action, before.State, err)
					}
					if after := e.order(o.UID); !reflect.DeepEqual(after, before) {
						t.Fatalf("a refused %s changed the order:\n%+v\n%+v", a.action, before, after)
					}
					if !slices.Equal(e.events(o.UID), events) || e.published.Load() != published {
						t.Fatalf("a refused %s published something", a.action)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s on a %s order: %v", a.action, before.State, err)
				}
				target, _ := a.action.Target()
				// The desk may have gone on since (a short step delay), so the
				// stored history starts with the answered one.
				stored := e.order(o.UID)
				if got.State != target || len(stored.History) < len(got.History) || !reflect.DeepEqual(stored.History[:len(got.History)], got.History) {
					t.Fatalf("%s answered %+v, stored %+v", a.action, got, stored)
				}
				if last := got.History[len(got.History)-1]; last.Reason != a.action.Reason() {
					t.Fatalf("%s left the reason %q", a.action, last.Reason)
				}
			}
			final := e.order(o.UID)
			if final.State != tc.want {
				t.Fatalf("order ended %s, want %s", final.State, tc.want)
			}
			checkHistory(t, final, tc.history...)
			if got := e.events(o.UID); !slices.Equal(got, tc.events) {
				t.Fatalf("events %v, want %v", got, tc.events)
			}
			if n := e.published.Load(); n != int64(len(tc.events)) {
				t.Fatalf("Published called %d times for %d events", n, len(tc.events))
			}
			if n := len(e.delivery.made()); n != tc.delivered {
				t.Fatalf("%d deliveries, want %d", n, tc.delivered)
			}
			// A terminal order keeps nothing scheduled: no delivery or
			// expiry can touch it later.
			if tc.want.Terminal() {
				e.desk.mu.Lock()
				_, pending := e.desk.timers[o.UID]
				e.desk.mu.Unlock()
				if pending {
					t.Fatalf("a %s order still has a step scheduled", tc.want)
				}
			}
		})
	}
}

// TestExpiry lets an unpaid order's checkout run out: the desk expires it
// by itself at ExpiresAt, publishing nothing, and a payment that comes
// after ExpiresAt is refused even before that happened.
func TestExpiry(t *testing.T) {
	t.Run("at ExpiresAt", func(t *testing.T) {
		e := newEnv(t)
		e.start(short)
		// Opened almost a whole TTL ago, so that it expires in one to two
		// seconds (ExpiresAt is a whole second).
		o := e.checkoutAt(e.partner("ptn_a", 100), e.clock.Now().Add(-onramp.CheckoutTTL+2*time.Second))
		if got := e.order(o.UID); got.State != onramp.Created {
			t.Fatalf("expired a second early: %+v", got)
		}
		done := e.waitState(o.UID, onramp.Expired)
		checkHistory(t, done, onramp.Created, onramp.Expired)
		if at := done.History[1].At; at.Before(done.ExpiresAt) {
			t.Fatalf("expired at %v, before ExpiresAt %v", at, done.ExpiresAt)
		}
		if ev := e.events(o.UID); len(ev) != 0 || e.published.Load() != 0 || len(e.delivery.made()) != 0 {
			t.Fatalf("an expiry published %v (%d calls) or delivered", ev, e.published.Load())
		}
	})
	t.Run("a late payment", func(t *testing.T) {
		e := newEnv(t)
		e.start(short)
		o := e.checkout(e.partner("ptn_a", 100))
		e.clock.Jump(onramp.CheckoutTTL + time.Second)
		got, err := e.desk.Act(context.Background(), o.UID, onramp.Pay)
		if !errors.Is(err, onramp.ErrTransition) || got == nil || got.State != onramp.Expired {
			t.Fatalf("late payment: %+v %v, want the expired order and ErrTransition", got, err)
		}
		checkHistory(t, e.order(o.UID), onramp.Created, onramp.Expired)
		if ev := e.events(o.UID); len(ev) != 0 || e.published.Load() != 0 || len(e.delivery.made()) != 0 {
			t.Fatalf("a late payment published %v (%d calls) or delivered", ev, e.published.Load())
		}
	})
}

// TestExpiryWhileStoppedAppliedAtStart stops the desk with an unpaid order
// and starts it again after the order's expiry: the start applies it.
func TestExpiryWhileStoppedAppliedAtStart(t *testing.T) {
	e := newEnv(t)
	e.start(short)
	o := e.checkout(e.partner("ptn_a", 100))
	e.stop()
	e.clock.Jump(onramp.CheckoutTTL + time.Minute)
	e.restart(short)
	done := e.waitState(o.UID, onramp.Expired)
	checkHistory(t, done, onramp.Created, onramp.Expired)
	if at := done.History[1].At; at.Before(o.ExpiresAt.Add(time.Minute)) {
		t.Fatalf("expired at %v; the desk started after %v", at, o.ExpiresAt.Add(time.Minute))
	}
	if ev := e.events(o.UID); len(ev) != 0 || e.published.Load() != 0 {
		t.Fatalf("an expiry published %v", ev)
	}
}

// TestPaidOrderResumesAfterRestart stops the desk while a paid order waits
// for its delivery; the restarted desk delivers it, once, and completes it.
func TestPaidOrderResumesAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.start(long)
	o := e.checkout(e.partner("ptn_a", 100))
	if _, err := e.desk.Act(context.Background(), o.UID, onramp.Pay); err != nil {
		t.Fatal(err)
	}
	e.restart(short)
	done := e.waitState(o.UID, onramp.Completed)
	checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	e.waitPublished(3)
	if n := len(e.delivery.made()); n != 1 {
		t.Fatalf("%d deliveries, want 1", n)
	}
	if want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}; !slices.Equal(e.events(o.UID), want) {
		t.Fatalf("events %v, want %v", e.events(o.UID), want)
	}
}

// TestStartResumesEveryOpenOrder stores orders in every state, as a
// service that stopped would have left them, and starts a desk: each open
// order goes where it was going and the terminal ones are left alone.
func TestStartResumesEveryOpenOrder(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	now := e.clock.Now()
	cases := []struct {
		name      string
		opened    time.Time
		path      []onramp.State
		want      onramp.State
		delivered bool
	}{
		{"unpaid, not yet due", now, nil, onramp.Created, false},
		{"unpaid, expiry passed", now.Add(-onramp.CheckoutTTL - time.Minute), nil, onramp.Expired, false},
		{"paid", now, []onramp.State{onramp.PaymentReceived}, onramp.Completed, true},
		{"sent", now, []onramp.State{onramp.PaymentReceived, onramp.CryptoSent}, onramp.Completed, false},
		{"failed", now, []onramp.State{onramp.Failed}, onramp.Failed, false},
		{"refunded", now, []onramp.State{onramp.PaymentReceived, onramp.Refunded}, onramp.Refunded, false},
	}
	q, err := onramp.Price(market{}, &request(t).Request, 100, now, onramp.CheckoutTTL)
	if err != nil {
		t.Fatal(err)
	}
	uids := make([]string, len(cases))
	for i, tc := range cases {
		o := onramp.NewOrder("ptn_a", "sandbox", request(t), q, tc.opened)
		if err := e.store.SaveOnrampOrder(ctx, o, nil); err != nil {
			t.Fatal(err)
		}
		for _, to := range tc.path {
			if _, err := o.Move(to, tc.opened.Add(time.Second), txHashOf("onramp/"+o.UID), ""); err != nil {
				t.Fatal(err)
			}
			if err := e.store.SaveOnrampOrder(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
		}
		uids[i] = o.UID
	}
	e.start(short)
	for i, tc := range cases {
		if tc.want == onramp.Created || tc.want == onramp.Failed || tc.want == onramp.Refunded {
			continue
		}
		e.waitState(uids[i], tc.want)
	}
	// Long enough for any step that should not happen to have happened.
	time.Sleep(50 * short)
	var delivered []string
	for _, c := range e.delivery.made() {
		delivered = append(delivered, strings.TrimPrefix(c.ref, "onramp/"))
	}
	for i, tc := range cases {
		if got := e.order(uids[i]).State; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if slices.Contains(delivered, uids[i]) != tc.delivered {
			t.Errorf("%s: delivered %v, want %v", tc.name, !tc.delivered, tc.delivered)
		}
	}
	if len(delivered) != 1 {
		t.Errorf("deliveries %v, want one", delivered)
	}
}

// TestDeliveryRetries makes the chain refuse the delivery: a delivery
// refused fewer than five times is retried until it goes through; refused
// five times, the order fails with the reason and is not tried again.
func TestDeliveryRetries(t *testing.T) {
	cases := []struct {
		failures int
		want     onramp.State
		calls    int
		events   []string
	}{
		{1, onramp.Completed, 2, []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}},
		{4, onramp.Completed, 5, []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}},
		{5, onramp.Failed, 5, []string{webhook.OnrampPaymentReceived, webhook.OnrampFailed}},
		{1000, onramp.Failed, 5, []string{webhook.OnrampPaymentReceived, webhook.OnrampFailed}},
	}
	for _, tc := range cases {
		t.Run(strings.ToLower(string(tc.want))+" after "+strconv.Itoa(tc.failures)+" refusals", func(t *testing.T) {
			e := newEnv(t)
			e.delivery.failFirst = tc.failures
			e.start(short)
			o := e.checkout(e.partner("ptn_a", 100))
			if _, err := e.desk.Act(context.Background(), o.UID, onramp.Pay); err != nil {
				t.Fatal(err)
			}
			done := e.waitState(o.UID, tc.want)
			e.waitPublished(int64(len(tc.events)))
			// Long enough for a retry that should not happen to have
			// happened.
			time.Sleep(50 * short)
			calls := e.delivery.made()
			if len(calls) != tc.calls {
				t.Fatalf("%d delivery calls, want %d", len(calls), tc.calls)
			}
			for _, c := range calls {
				if c.ref != "onramp/"+o.UID || c.canceled {
					t.Fatalf("delivery call %+v", c)
				}
			}
			last := done.History[len(done.History)-1]
			if tc.want == onramp.Failed {
				checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.Failed)
				if !strings.Contains(last.Reason, errRefused.Error()) || done.TxHash != "" {
					t.Fatalf("failed with reason %q, txHash %q", last.Reason, done.TxHash)
				}
			} else {
				checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
				if done.TxHash != txHashOf("onramp/"+o.UID) {
					t.Fatalf("txHash %q", done.TxHash)
				}
			}
			if got := e.events(o.UID); !slices.Equal(got, tc.events) {
				t.Fatalf("events %v, want %v", got, tc.events)
			}
			if n := e.published.Load(); n != int64(len(tc.events)) {
				t.Fatalf("Published called %d times for %d events", n, len(tc.events))
			}
		})
	}
}

// TestFeeTiers prices with the partner's on-ramp fee, the anonymous tier's
// 150 bps without a key, and refuses a partner stored above the platform
// maximum with PARTNER_FEE_EXCEEDS_MAX, at quote and at checkout, storing
// nothing.
func TestFeeTiers(t *testing.T) {
	cases := []struct {
		name    string
		partner *account.Partner
		bps     int
		fee     onramp.Cents
		refused bool
	}{
		{"anonymous", nil, 150, 150, false},
		{"partner at 75 bps", &account.Partner{ID: "ptn_a", FeeTier: account.FeeTier{OnrampFeeBps: 75}}, 75, 75, false},
		{"partner at no fee", &account.Partner{ID: "ptn_a", FeeTier: account.FeeTier{OnrampFeeBps: 0}}, 0, 0, false},
		{"partner at the maximum", &account.Partner{ID: "ptn_a", FeeTier: account.FeeTier{OnrampFeeBps: account.MaxFeeBps}}, account.MaxFeeBps, 500, false},
		{"partner above the maximum", &account.Partner{ID: "ptn_a", FeeTier: account.FeeTier{OnrampFeeBps: account.MaxFeeBps + 1}}, 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			e.start(long)
			q, qerr := e.desk.Quote(ctx, tc.partner, &request(t).Request, e.clock.Now())
			o, _, cerr := e.desk.Checkout(ctx, tc.partner, request(t), e.clock.Now())
			if tc.refused {
				for _, err := range []error{qerr, cerr} {
					var aerr *apierr.Error
					if !errors.As(err, &aerr) || aerr.Code != apierr.PartnerFeeExceedsMax {
						t.Fatalf("got %v, want PARTNER_FEE_EXCEEDS_MAX", err)
					}
				}
				if q != nil || o != nil {
					t.Fatalf("a refused partner got %+v and %+v", q, o)
				}
				n := 0
				if err := e.store.EachOpenOnrampOrder(ctx, func(*onramp.Order) bool { n++; return true }); err != nil || n != 0 {
					t.Fatalf("a refused checkout stored %d orders (%v)", n, err)
				}
				return
			}
			if qerr != nil || cerr != nil {
				t.Fatalf("quote %v, checkout %v", qerr, cerr)
			}
			for _, got := range []*onramp.Quote{q, &o.Quote} {
				if got.PartnerFeeBps != tc.bps || got.Fees.Partner != tc.fee ||
					got.Fees.Total != got.Fees.Network+got.Fees.Processing+got.Fees.Partner || got.Total != got.Amount+got.Fees.Total {
					t.Fatalf("priced %+v, want %d bps, a fee of %s", got, tc.bps, tc.fee)
				}
			}
			wantPartner := ""
			if tc.partner != nil {
				wantPartner = tc.partner.ID
			}
			if o.PartnerID != wantPartner {
				t.Fatalf("order of partner %q, want %q", o.PartnerID, wantPartner)
			}
		})
	}
}

// slowSave is a store whose save of an order entering one state lasts until
// the clock reaches a moment: a synced write slow enough for a timer to
// fire meanwhile.
type slowSave struct {
	Store
	clock *clock
	state onramp.State
	mu    sync.Mutex
	until time.Time
}

func (s *slowSave) SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error {
	s.mu.Lock()
	until := s.until
	s.mu.Unlock()
	if o.State == s.state {
		for s.clock.Now().Before(until) {
			time.Sleep(time.Millisecond)
		}
	}
	return s.Store.SaveOnrampOrder(ctx, o, events)
}

// TestPaymentStraddlingTheExpiry pays an order just before its expiry with
// a store write that ends after it, so that the expiry's timer fires while
// the payment holds the desk. The payment stands, and the step that fired
// for the expiry must not take the paid order on: its delivery waits for
// the step delay, and the desk stops at once.
func TestPaymentStraddlingTheExpiry(t *testing.T) {
	e := newEnv(t)
	slow := &slowSave{Store: e.store, clock: e.clock, state: onramp.PaymentReceived}
	d, err := Start(context.Background(), slow, e.options(long))
	if err != nil {
		t.Fatal(err)
	}
	e.desk = d
	// The checkout expires in one to two seconds (ExpiresAt is a whole
	// second).
	o := e.checkoutAt(e.partner("ptn_a", 100), e.clock.Now().Add(-onramp.CheckoutTTL+2*time.Second))
	slow.mu.Lock()
	slow.until = o.ExpiresAt.Add(300 * time.Millisecond)
	slow.mu.Unlock()
	got, err := d.Act(context.Background(), o.UID, onramp.Pay)
	if err != nil || got.State != onramp.PaymentReceived {
		t.Fatalf("a payment made before the expiry: %+v %v", got, err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := e.order(o.UID); got.State != onramp.PaymentReceived || len(e.delivery.made()) != 0 {
		t.Fatalf("the paid order went on before its step delay: %s, %d deliveries", got.State, len(e.delivery.made()))
	}
	e.stop()
}

// flakyStore refuses the first saves of orders entering a state.
type flakyStore struct {
	Store
	mu      sync.Mutex
	refuse  map[onramp.State]int
	refused int
}

var errDisk = errors.New("disk full")

func (s *flakyStore) SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error {
	s.mu.Lock()
	if s.refuse[o.State] > 0 {
		s.refuse[o.State]--
		s.refused++
		s.mu.Unlock()
		return errDisk
	}
	s.mu.Unlock()
	return s.Store.SaveOnrampOrder(ctx, o, events)
}

// TestStoreRefusals makes the store refuse transitions: one the user asked
// for is answered with the error and leaves the order, its events and the
// Published calls as they were; one the desk makes by itself is tried
// again until stored, each event stored once and the delivery repeated
// under the same ref (the chain's delivery is idempotent by ref).
func TestStoreRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		refuse    map[onramp.State]int
		delivered int
	}{
		{"payment", map[onramp.State]int{onramp.PaymentReceived: 1}, 1},
		{"crypto sent", map[onramp.State]int{onramp.CryptoSent: 2}, 3},
		{"completion", map[onramp.State]int{onramp.Completed: 2}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			flaky := &flakyStore{Store: e.store, refuse: maps.Clone(tc.refuse)}
			d, err := Start(ctx, flaky, e.options(short))
			if err != nil {
				t.Fatal(err)
			}
			e.desk = d
			o := e.checkout(e.partner("ptn_a", 100))
			_, err = d.Act(ctx, o.UID, onramp.Pay)
			if tc.refuse[onramp.PaymentReceived] > 0 {
				if !errors.Is(err, errDisk) {
					t.Fatalf("a refused payment answered %v", err)
				}
				if got := e.order(o.UID); !reflect.DeepEqual(got, o) || e.published.Load() != 0 || len(e.events(o.UID)) != 0 {
					t.Fatalf("a refused payment left %+v, %d publications", got, e.published.Load())
				}
				_, err = d.Act(ctx, o.UID, onramp.Pay)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := e.waitState(o.UID, onramp.Completed)
			e.waitPublished(3)
			checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
			if want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}; !slices.Equal(e.events(o.UID), want) {
				t.Fatalf("events %v, want %v", e.events(o.UID), want)
			}
			calls := e.delivery.made()
			if len(calls) != tc.delivered {
				t.Fatalf("%d deliveries, want %d", len(calls), tc.delivered)
			}
			for _, c := range calls {
				if c.ref != "onramp/"+o.UID {
					t.Fatalf("delivery under ref %s", c.ref)
				}
			}
			if done.TxHash != txHashOf("onramp/"+o.UID) || e.published.Load() != 3 {
				t.Fatalf("txHash %q, %d publications", done.TxHash, e.published.Load())
			}
			want := 0
			for _, n := range tc.refuse {
				want += n
			}
			flaky.mu.Lock()
			refused := flaky.refused
			flaky.mu.Unlock()
			if refused != want {
				t.Fatalf("the store refused %d saves, want %d", refused, want)
			}
		})
	}
}

// blockingDelivery holds each delivery until released.
type blockingDelivery struct {
	delivery
	started chan struct{}
	release chan struct{}
}

func (d *blockingDelivery) Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	d.started <- struct{}{}
	<-d.release
	return d.delivery.Deliver(ctx, chainID, ref, to, token, amount)
}

// TestStopWaitsForARunningDelivery stops the desk while a delivery is under
// way: Stop returns only once the delivery has been recorded (CRYPTO_SENT),
// nothing runs after it, and the next start completes the order without
// delivering again.
func TestStopWaitsForARunningDelivery(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	bd := &blockingDelivery{started: make(chan struct{}, 1), release: make(chan struct{})}
	opt := e.options(short)
	opt.Delivery = bd
	d, err := Start(ctx, e.store, opt)
	if err != nil {
		t.Fatal(err)
	}
	e.desk = d
	o := e.checkout(nil)
	if _, err := d.Act(ctx, o.UID, onramp.Pay); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bd.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery did not start")
	}
	stopped := make(chan struct{})
	go func() { d.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a delivery was under way")
	case <-time.After(100 * time.Millisecond):
	}
	close(bd.release)
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not return after the delivery")
	}
	e.desk = nil
	if got := e.order(o.UID); got.State != onramp.CryptoSent {
		t.Fatalf("stopped mid-way as %s, want CRYPTO_SENT", got.State)
	}
	time.Sleep(50 * short)
	if got := e.order(o.UID); got.State != onramp.CryptoSent {
		t.Fatalf("a stopped desk went on to %s", got.State)
	}
	e.restart(short)
	e.waitState(o.UID, onramp.Completed)
	if n := len(bd.made()) + len(e.delivery.made()); n != 1 {
		t.Fatalf("%d deliveries, want 1", n)
	}
}
