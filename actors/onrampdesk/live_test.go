package onrampdesk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// reporter is a live provider in memory: the sandbox's prices, a checkout
// URL of its own, webhooks "signed" with goodSignature whose body is an
// Update as JSON, and lookups that answer what the test set.
type reporter struct {
	onramp.Sandbox
	mu      sync.Mutex
	answers map[string]*onramp.Update
	fail    error
	lookups map[string]int
}

const goodSignature = "signed"

func newReporter() *reporter {
	return &reporter{Sandbox: onramp.Sandbox{Market: market{}}, answers: map[string]*onramp.Update{}, lookups: map[string]int{}}
}

func (r *reporter) Name() string { return "live" }

func (r *reporter) Open(_ context.Context, o *onramp.Order) (string, error) {
	return "https://provider.example/widget?id=" + o.UID, nil
}

func (r *reporter) Webhook(signature string, body []byte, _ time.Time) (*onramp.Update, error) {
	if signature != goodSignature {
		return nil, onramp.ErrBadSignature
	}
	var u onramp.Update
	if err := json.Unmarshal(body, &u); err != nil {
		return nil, fmt.Errorf("%w: %w", onramp.ErrMalformedWebhook, err)
	}
	if u.UID == "" {
		return nil, nil
	}
	return &u, nil
}

func (r *reporter) Lookup(_ context.Context, o *onramp.Order) (*onramp.Update, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups[o.UID]++
	if r.fail != nil {
		return nil, r.fail
	}
	return r.answers[o.UID], nil
}

func (r *reporter) answer(uid string, u *onramp.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[uid] = u
}

func (r *reporter) failing(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

func (r *reporter) count(uid string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[uid]
}

// startLive starts a live desk on the env's store: no delivery, the
// reporter as the provider.
func (e *env) startLive(r *reporter, interval time.Duration) *Desk {
	e.t.Helper()
	opt := e.options(long)
	opt.Provider, opt.Delivery, opt.LookupInterval = r, nil, interval
	d, err := Start(context.Background(), e.store, opt)
	if err != nil {
		e.t.Fatal(err)
	}
	e.desk = d
	return d
}

func (e *env) liveCheckout(p *account.Partner) *onramp.Order {
	e.t.Helper()
	o, url, err := e.desk.Checkout(context.Background(), p, request(e.t), e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if url != "https://provider.example/widget?id="+o.UID || o.Provider != "live" || o.State != onramp.Created {
		e.t.Fatalf("checkout answered %s for %+v", url, o)
	}
	return o
}

func hook(t *testing.T, u onramp.Update) []byte {
	t.Helper()
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// In live mode the provider's webhooks move the order: each accepted one
// stores its moves with their events, a report that skips states walks the
// order through them, and a forged, replayed, unreadable or impossible
// report changes nothing. The checkout page's actions are refused and
// nothing is delivered by the service.
func TestLiveWebhooksMoveTheOrder(t *testing.T) {
	e := newEnv(t)
	r := newReporter()
	e.startLive(r, long)
	p := e.partner("ptn_live", 100)
	o := e.liveCheckout(p)
	ctx := context.Background()

	type step struct {
		name      string
		signature string
		body      []byte
		err       error
		state     onramp.State
		events    []string
	}
	paid := onramp.Update{UID: o.UID, State: onramp.PaymentReceived}
	done := onramp.Update{UID: o.UID, State: onramp.Completed, TxHash: "0xfeed"}
	steps := []step{
		{"forged", "forged", hook(t, done), onramp.ErrBadSignature, onramp.Created, []string{}},
		{"unreadable", goodSignature, []byte("{"), onramp.ErrMalformedWebhook, onramp.Created, []string{}},
		{"another service's order", goodSignature, hook(t, onramp.Update{UID: "not-ours", State: onramp.Completed}), nil, onramp.Created, []string{}},
		{"an unknown order", goodSignature, hook(t, onramp.Update{UID: onramp.NewUID(), State: onramp.Completed}), nil, onramp.Created, []string{}},
		{"still waiting", goodSignature, hook(t, onramp.Update{UID: o.UID, State: onramp.Created}), nil, onramp.Created, []string{}},
		{"paid", goodSignature, hook(t, paid), nil, onramp.PaymentReceived, []string{webhook.OnrampPaymentReceived}},
		{"paid, replayed", goodSignature, hook(t, paid), nil, onramp.PaymentReceived, []string{webhook.OnrampPaymentReceived}},
		{"completed, the sent step missed", goodSignature, hook(t, done), nil, onramp.Completed,
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}},
		{"completed, replayed", goodSignature, hook(t, done), nil, onramp.Completed,
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}},
		{"failed after completion", goodSignature, hook(t, onramp.Update{UID: o.UID, State: onramp.Failed}), nil, onramp.Completed,
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}},
	}
	for _, s := range steps {
		before := e.order(o.UID)
		err := e.desk.ProviderWebhook(ctx, s.signature, s.body)
		if !errors.Is(err, s.err) || (s.err == nil && err != nil) {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.err)
		}
		after := e.order(o.UID)
		if after.State != s.state {
			t.Fatalf("%s: %s, want %s", s.name, after.State, s.state)
		}
		if got := e.events(o.UID); !slices.Equal(got, s.events) {
			t.Fatalf("%s: events %v, want %v", s.name, got, s.events)
		}
		if after.State == before.State && len(after.History) != len(before.History) {
			t.Fatalf("%s: history changed without a move: %+v", s.name, after.History)
		}
	}
	final := e.order(o.UID)
	checkHistory(t, final, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	if final.TxHash != "0xfeed" || final.History[2].TxHash != "0xfeed" {
		t.Fatalf("tx hash %q, step %+v", final.TxHash, final.History[2])
	}
	e.waitPublished(2)
	if n := e.published.Load(); n != 2 {
		t.Fatalf("Published %d times, want one per accepted webhook that moved the order (2)", n)
	}
	earnings, err := e.store.Earnings(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []account.EarningsGroup{{Ecosystem: "evm", RowCount: 1, TotalMicroUSD: 1_000_000}}; !slices.Equal(earnings.Pending, want) {
		t.Fatalf("pending earnings %+v, want %+v", earnings.Pending, want)
	}
	if _, err := e.desk.Act(ctx, o.UID, onramp.Pay); !errors.Is(err, onramp.ErrTransition) {
		t.Fatalf("a checkout page action in live mode: %v", err)
	}
	if n := len(e.delivery.made()); n != 0 {
		t.Fatalf("the live desk delivered %d times", n)
	}
}

// A webhook that never arrives is caught up by the periodic lookup, which
// stops once the order is final; a failing lookup is retried.
func TestLiveLookupCatchesUp(t *testing.T) {
	e := newEnv(t)
	r := newReporter()
	r.failing(errors.New("the provider is down"))
	e.startLive(r, 10*time.Millisecond)
	o := e.liveCheckout(e.partner("ptn_lookup", 0))
	deadline := time.Now().Add(20 * time.Second)
	for r.count(o.UID) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no lookups while the provider fails")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if got := e.order(o.UID); got.State != onramp.Created {
		t.Fatalf("a failing lookup moved the order to %s", got.State)
	}
	r.failing(nil)
	r.answer(o.UID, &onramp.Update{UID: o.UID, State: onramp.CryptoSent, TxHash: "0xabc"})
	e.waitState(o.UID, onramp.CryptoSent)
	r.answer(o.UID, &onramp.Update{UID: o.UID, State: onramp.Completed, TxHash: "0xabc"})
	done := e.waitState(o.UID, onramp.Completed)
	checkHistory(t, done, onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed)
	if want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}; !slices.Equal(e.events(o.UID), want) {
		t.Fatalf("events %v", e.events(o.UID))
	}
	n := r.count(o.UID)
	time.Sleep(100 * time.Millisecond)
	if m := r.count(o.UID); m > n+1 {
		t.Fatalf("a completed order is still looked up: %d → %d", n, m)
	}
}

// An unpaid order expires at its expiry after a last lookup, whether the
// provider answers nothing or fails; one the lookup finds paid does not
// expire. A restarted desk resumes the lookups of its open orders.
func TestLiveExpiryAndResume(t *testing.T) {
	tests := []struct {
		name   string
		answer *onramp.Update
		fail   bool
		want   onramp.State
	}{
		{"no transaction", nil, false, onramp.Expired},
		{"the provider fails", nil, true, onramp.Expired},
		{"still waiting", &onramp.Update{State: onramp.Created}, false, onramp.Expired},
		{"paid at the last minute", &onramp.Update{State: onramp.PaymentReceived}, false, onramp.PaymentReceived},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := newReporter()
			e.startLive(r, long)
			o := e.liveCheckout(e.partner("ptn_expiry", 0))
			if tt.answer != nil {
				u := *tt.answer
				u.UID = o.UID
				r.answer(o.UID, &u)
			}
			if tt.fail {
				r.failing(errors.New("down"))
			}
			// Stopped, the desk misses the expiry; restarted past it, it
			// looks the order up at once and decides.
			e.stop()
			e.clock.Jump(onramp.CheckoutTTL + time.Second)
			opt := e.options(long)
			opt.Provider, opt.Delivery, opt.LookupInterval = r, nil, long
			d, err := Start(context.Background(), e.store, opt)
			if err != nil {
				t.Fatal(err)
			}
			e.desk = d
			e.waitState(o.UID, tt.want)
			if r.count(o.UID) == 0 {
				t.Fatal("decided without a lookup")
			}
			if tt.want == onramp.Expired && len(e.events(o.UID)) != 0 {
				t.Fatalf("an expiry published %v", e.events(o.UID))
			}
			if tt.want == onramp.PaymentReceived && !slices.Equal(e.events(o.UID), []string{webhook.OnrampPaymentReceived}) {
				t.Fatalf("events %v", e.events(o.UID))
			}
		})
	}
}

func TestLiveNeedsAReporter(t *testing.T) {
	e := newEnv(t)
	opt := e.options(long)
	opt.Delivery = nil
	if _, err := Start(context.Background(), e.store, opt); err == nil {
		t.Fatal("a desk with neither a delivery nor a reporting provider started")
	}
	d := e.start(long)
	if err := d.ProviderWebhook(context.Background(), goodSignature, []byte("{}")); !errors.Is(err, onramp.ErrBadSignature) {
		t.Fatalf("a sandbox desk took a provider webhook: %v", err)
	}
}
