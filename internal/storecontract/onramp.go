package storecontract

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// OnrampOrders is the on-ramp orders (onrampdesk.Store), with the ledger
// and the outbox a transition writes to. An order is written with the
// events of its transition, the partner's activity line and, the first
// time the line carries an earning, the earning, all or nothing, durably.
type OnrampOrders interface {
	onrampdesk.Store
	Ledger
	Webhooks
}

// onrampMarket prices every token at one dollar but the native coin, and
// every chain's gas alike, so that an order's figures are known by hand.
type onrampMarket struct{}

func (onrampMarket) Price(_ uint64, token string) (float64, bool) {
	if token == registry.NativeAddressEVM {
		return 2000, true
	}
	return 1, true
}

func (onrampMarket) Gas(chainID uint64) (gas.Record, bool) {
	return gas.Record{ChainID: chainID, Speed: gas.Speeds{Standard: gas.Tier{GasPrice: "10000000"}}}, true
}

// newOrder opens ptn_a's order of 100 USD of USDC on Arbitrum at the
// anonymous tier's 150 bps (a partner fee of 1.50 USD), as the desk does.
func newOrder(t testing.TB, now time.Time) *onramp.Order {
	t.Helper()
	reg, err := registry.Load()
	mustNil(t, "registry", err)
	amount, cur, asset, chain, wallet, ext := 100.0, "USD", "USDC", uint64(42161), "0x8ba1f109551bD432803012645Ac136ddd64DBA72", "acme-42"
	req, aerr := onramp.NewCatalogue(reg).ResolveCheckout(&onramp.CheckoutBody{QuoteBody: onramp.QuoteBody{FiatAmount: &amount,
		FiatCurrency: &cur, CryptoAsset: &asset, ChainID: &chain, WalletAddress: &wallet}, ExternalID: &ext})
	if aerr != nil {
		t.Fatal(aerr)
	}
	q, err := onramp.Price(onrampMarket{}, &req.Request, account.AnonymousOnrampFeeBps, now, onramp.CheckoutTTL)
	mustNil(t, "price", err)
	return onramp.NewOrder("ptn_a", "sandbox", req, q, now)
}

// move applies one transition and saves it with its event, as the desk does.
func move(ctx context.Context, s onrampdesk.Store, o *onramp.Order, to onramp.State, at time.Time) error {
	ev, err := o.Move(to, at, "0xfeed", "")
	if err != nil {
		return err
	}
	var events []webhook.Event
	if ev != nil {
		events = append(events, *ev)
	}
	return s.SaveOnrampOrder(ctx, o, events)
}

// orderState is the stored state of order uid, "" for none.
func orderState(t testing.TB, s onrampdesk.Store, uid string) onramp.State {
	t.Helper()
	o, err := s.OnrampOrder(context.Background(), uid)
	if errors.Is(err, account.ErrNotFound) {
		return ""
	}
	mustNil(t, "order", err)
	return o.State
}

// openOrders lists the UIDs of the orders not in a terminal state.
func openOrders(t testing.TB, s onrampdesk.Store) []string {
	t.Helper()
	var out []string
	mustNil(t, "open orders", s.EachOpenOnrampOrder(context.Background(), func(o *onramp.Order) bool { out = append(out, o.UID); return true }))
	return out
}

// RunOnrampOrders holds an OnrampOrders implementation to its contract.
func RunOnrampOrders(t *testing.T, open Factory[OnrampOrders]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[OnrampOrders])
	}{
		{"an order reads back as saved at every step, open until terminal, its line following", func(t *testing.T, h *Handle[OnrampOrders]) {
			s := h.Store
			o := newOrder(t, t0)
			mustNil(t, "save", s.SaveOnrampOrder(ctx, o, nil))
			at := t0
			for _, to := range []onramp.State{onramp.Created, onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed} {
				if to != onramp.Created {
					at = at.Add(time.Second)
					mustNil(t, "move", move(ctx, s, o, to, at))
				}
				got, err := s.OnrampOrder(ctx, o.UID)
				if err != nil || !reflect.DeepEqual(got, o) {
					t.Fatalf("after %s read back %+v %v\nwant %+v", to, got, err, o)
				}
				line, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
				if err != nil || len(line) != 1 || line[0].Kind != account.ActivityOnramp || line[0].Status != string(to) {
					t.Fatalf("after %s the activity is %+v (%v)", to, line, err)
				}
				if open := openOrders(t, s); (len(open) == 1) != (to != onramp.Completed) {
					t.Fatalf("after %s open orders %v", to, open)
				}
			}
			if p := pendingOf(t, s, "ptn_a"); p != "[evm=1500000/1]" {
				t.Fatalf("the completed order's earning: pending %s", p)
			}
			// Saved again (a retried save): the earning is still one.
			mustNil(t, "save again", s.SaveOnrampOrder(ctx, o, nil))
			if p := pendingOf(t, s, "ptn_a"); p != "[evm=1500000/1]" {
				t.Fatalf("a second save counted the earning again: pending %s", p)
			}
			if _, err := s.OnrampOrder(ctx, "ord_missing"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("missing order: %v", err)
			}
		}},
		{"an interrupted completion writes none of its parts, an acknowledged one survives a crash", func(t *testing.T, h *Handle[OnrampOrders]) {
			mustNil(t, "webhook", h.Store.CreateWebhook(ctx, hook("ptn_a", webhook.OnrampCompleted)))
			o := newOrder(t, t0)
			mustNil(t, "save", h.Store.SaveOnrampOrder(ctx, o, nil))
			mustNil(t, "move", move(ctx, h.Store, o, onramp.PaymentReceived, t0.Add(time.Second)))
			mustNil(t, "move", move(ctx, h.Store, o, onramp.CryptoSent, t0.Add(2*time.Second)))
			Interrupt(t, h, func(ctx context.Context, s OnrampOrders) error {
				cur, err := s.OnrampOrder(context.Background(), o.UID)
				if err != nil {
					return err
				}
				return move(ctx, s, cur, onramp.Completed, t0.Add(3*time.Second))
			}, func(t testing.TB, s OnrampOrders) {
				if st, p := orderState(t, s, o.UID), pendingOf(t, s, "ptn_a"); st != onramp.CryptoSent || p != "[]" || owedIDs(t, s) != "[]" {
					t.Fatalf("an interrupted completion left state %s, pending %s, owed %s", st, p, owedIDs(t, s))
				}
			}, func(t testing.TB, s OnrampOrders) {
				if st, p := orderState(t, s, o.UID), pendingOf(t, s, "ptn_a"); st != onramp.Completed || p != "[evm=1500000/1]" || len(owed(t, s)) != 1 {
					t.Fatalf("after the completion: state %s, pending %s, owed %s", st, p, owedIDs(t, s))
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}
