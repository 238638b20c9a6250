package onramp

import (
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func newTestOrder(t *testing.T, partner string) *Order {
	t.Helper()
	req := &CheckoutRequest{Request: Request{Wallet: "0x8ba1f109551bD432803012645Ac136ddd64DBA72"}, ExternalID: "acme-42"}
	q := &Quote{Currency: "USD", Amount: 10_000, Symbol: "USDC", ChainID: 42161, Token: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
		Decimals: 6, Ecosystem: "evm", USDRate: "1", ExchangeRate: "1", CryptoAmount: "100",
		Fees: Fees{Network: 391, Processing: 299, Partner: 150, Total: 840}, Total: 10_840, Method: CreditCard}
	return NewOrder(partner, "sandbox", req, q, time.Unix(1_700_000_000, 0))
}

// TestStateMachine tries every pair of states: exactly the transitions of
// the specification's decision are allowed, each publishing its event
// (EXPIRED none), and a refused one leaves the order untouched.
func TestStateMachine(t *testing.T) {
	all := []State{Created, PaymentReceived, CryptoSent, Completed, Failed, Refunded, Expired}
	allowed := map[[2]State]string{
		{Created, PaymentReceived}:    webhook.OnrampPaymentReceived,
		{Created, Failed}:             webhook.OnrampFailed,
		{Created, Expired}:            "",
		{PaymentReceived, CryptoSent}: webhook.OnrampCryptoSent,
		{PaymentReceived, Failed}:     webhook.OnrampFailed,
		{PaymentReceived, Refunded}:   webhook.OnrampRefunded,
		{CryptoSent, Completed}:       webhook.OnrampCompleted,
	}
	for _, from := range all {
		for _, to := range all {
			o := newTestOrder(t, "ptn_1")
			o.State = from
			at := o.ExpiresAt.Add(time.Second)
			ev, err := o.Move(to, at, "0xabc", "")
			want, ok := allowed[[2]State{from, to}]
			if !ok {
				if !errors.Is(err, ErrTransition) {
					t.Errorf("%s → %s: err = %v, want ErrTransition", from, to, err)
				}
				if o.State != from || len(o.History) != 1 {
					t.Errorf("%s → %s: a refused move changed the order", from, to)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s → %s: %v", from, to, err)
				continue
			}
			if o.State != to || o.History[len(o.History)-1].State != to || !o.History[len(o.History)-1].At.Equal(at) {
				t.Errorf("%s → %s: state %s, history %+v", from, to, o.State, o.History)
			}
			switch {
			case want == "" && ev != nil:
				t.Errorf("%s → %s published %s", from, to, ev.Name)
			case want != "" && (ev == nil || ev.Name != want):
				t.Errorf("%s → %s: event %v, want %s", from, to, ev, want)
			case ev != nil:
				p := ev.Data.(Payload)
				if p.OrderUID != o.UID || p.Status != to || p.ExternalID != "acme-42" {
					t.Errorf("%s → %s: payload %+v", from, to, p)
				}
			}
			if from.Terminal() {
				t.Errorf("%s is terminal but left for %s", from, to)
			}
		}
	}
}

func TestExpiryWaitsForExpiresAt(t *testing.T) {
	o := newTestOrder(t, "")
	if _, err := o.Move(Expired, o.ExpiresAt.Add(-time.Millisecond), "", ""); !errors.Is(err, ErrTransition) {
		t.Fatalf("expired early: %v", err)
	}
	if _, err := o.Move(Expired, o.ExpiresAt, "", ""); err != nil {
		t.Fatalf("at expiresAt: %v", err)
	}
	if o.ExpiresAt.Sub(o.CreatedAt) > CheckoutTTL || o.ExpiresAt.Sub(o.CreatedAt) < CheckoutTTL-time.Second {
		t.Errorf("checkout lives %v", o.ExpiresAt.Sub(o.CreatedAt))
	}
}

// TestActivityEarnsOnlyOnCompletion: an order's line carries its volume
// from the start and its partner fee, with a pending earning in the
// asset's ecosystem, only once completed; an anonymous order has none.
func TestActivityEarnsOnlyOnCompletion(t *testing.T) {
	if newTestOrder(t, "").Activity() != nil {
		t.Fatal("an anonymous order has an activity line")
	}
	o := newTestOrder(t, "ptn_1")
	a := o.Activity()
	if a.Kind != "onramp" || a.Status != "CREATED" || a.Earning != nil || a.FeeMicroUSD != 0 || a.VolumeMicroUSD != 100_000_000 {
		t.Fatalf("created: %+v", a)
	}
	at := o.CreatedAt
	for _, st := range []State{PaymentReceived, CryptoSent, Completed} {
		at = at.Add(time.Second)
		if _, err := o.Move(st, at, "0x01", ""); err != nil {
			t.Fatal(err)
		}
	}
	a = o.Activity()
	if a.Status != "COMPLETED" || a.FeeMicroUSD != 1_500_000 || a.Earning == nil || a.Earning.Ecosystem != "evm" ||
		a.Earning.FeeAmount != "1500000" || a.Earning.FeeToken != o.Quote.Token || a.Earning.State != "pending" {
		t.Fatalf("completed: %+v %+v", a, a.Earning)
	}
	if !a.CreatedAt.Equal(o.CreatedAt) || a.ToAmount != "100000000" || a.FromAmount != "100.00" || a.FromToken != "USD" {
		t.Fatalf("identity or amounts: %+v", a)
	}
}

func TestUIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		u := NewUID()
		if !ValidUID(u) || seen[u] {
			t.Fatalf("uid %q invalid or repeated", u)
		}
		seen[u] = true
	}
	for _, bad := range []string{"", "ord_", "ord_AAAAAAAAAAAAAAAAAAAAAAAAAA", "xyz_aaaaaaaaaaaaaaaaaaaaaaaaaa", "ord_aaaaaaaaaaaaaaaaaaaaaaaaa1", "ord_../../etc/passwd"} {
		if ValidUID(bad) {
			t.Errorf("ValidUID(%q)", bad)
		}
	}
}

func TestCentsJSON(t *testing.T) {
	for _, tc := range []struct {
		c    Cents
		want string
	}{{0, "0.00"}, {5, "0.05"}, {10_840, "108.40"}, {-125, "-1.25"}} {
		b, _ := tc.c.MarshalJSON()
		if string(b) != tc.want {
			t.Errorf("%d → %s, want %s", tc.c, b, tc.want)
		}
		var back Cents
		if err := back.UnmarshalJSON(b); err != nil || back != tc.c {
			t.Errorf("%s ← %d, %v", b, back, err)
		}
	}
}
