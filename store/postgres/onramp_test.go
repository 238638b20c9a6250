package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's on-ramp tests (store/pebble/onramp_test.go), run
// against PostgreSQL.

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

// The order the on-ramp tests save: 100 USD of USDC on Arbitrum by credit
// card at the anonymous tier's 150 bps, so the partner fee is 1.50 USD,
// which is 1.5 USDC (1,500,000 base units) at the rate of 1.
const (
	onrampWallet       = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	onrampChain        = 42161
	onrampFeeMicroUSD  = 1_500_000
	onrampFeeBaseUnits = "1500000"
)

var onrampCatalogue = func() *onramp.Catalogue {
	reg, err := registry.Load()
	if err != nil {
		panic(err)
	}
	return onramp.NewCatalogue(reg)
}()

// usdcOnArbitrum is the registry address of the delivered token.
func usdcOnArbitrum(t *testing.T) string {
	t.Helper()
	a, ok := onrampCatalogue.Asset("USDC", onrampChain)
	if !ok {
		t.Fatal("the catalogue offers no USDC on Arbitrum")
	}
	return a.Token.Address
}

// newOnrampOrder opens an order as the desk does: the checkout resolved
// against the real catalogue and priced at the partner fee of bps.
func newOnrampOrder(t *testing.T, partner string, bps int, now time.Time) *onramp.Order {
	t.Helper()
	amount, cur, asset, chain, wallet, ext := 100.0, "USD", "USDC", uint64(onrampChain), onrampWallet, "acme-42"
	req, aerr := onrampCatalogue.ResolveCheckout(&onramp.CheckoutBody{QuoteBody: onramp.QuoteBody{FiatAmount: &amount,
		FiatCurrency: &cur, CryptoAsset: &asset, ChainID: &chain, WalletAddress: &wallet}, ExternalID: &ext})
	if aerr != nil {
		t.Fatal(aerr)
	}
	q, err := onramp.Price(onrampMarket{}, &req.Request, bps, now, onramp.CheckoutTTL)
	if err != nil {
		t.Fatal(err)
	}
	return onramp.NewOrder(partner, "sandbox", req, q, now)
}

// moveAndSave applies one transition at at and saves the order with the
// event it publishes, as the desk does.
func moveAndSave(t *testing.T, s *Store, o *onramp.Order, to onramp.State, at time.Time, txHash, reason string) *webhook.Event {
	t.Helper()
	ev, err := o.Move(to, at, txHash, reason)
	if err != nil {
		t.Fatalf("move %s → %s: %v", o.State, to, err)
	}
	var events []webhook.Event
	if ev != nil {
		events = append(events, *ev)
	}
	if err := s.SaveOnrampOrder(context.Background(), o, events); err != nil {
		t.Fatalf("save %s: %v", to, err)
	}
	return ev
}

// reloadEquals reads the order back and holds it to the one saved, field
// by field and step by step.
func reloadEquals(t *testing.T, s *Store, want *onramp.Order) {
	t.Helper()
	got, err := s.OnrampOrder(context.Background(), want.UID)
	if err != nil {
		t.Fatalf("reload %s: %v", want.UID, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reloaded order differs:\n got %+v\nwant %+v", got, want)
	}
}

// onrampLine is the partner's activity line of the order.
func onrampLine(t *testing.T, s *Store, partner, uid string) *account.Activity {
	t.Helper()
	list, _, err := s.Activities(context.Background(), partner, account.ActivityQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.ID == uid {
			return a
		}
	}
	t.Fatalf("no activity line %s for %s in %+v", uid, partner, list)
	return nil
}

// pendingIndexSize counts the earnings pending settlement.
func pendingIndexSize(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM activity WHERE pending_ecosystem IS NOT NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// decodedEntry is an outbox entry's event and the order data it carries.
type decodedEntry struct {
	webhook string
	event   string
	data    onramp.Payload
}

func outboxOf(t *testing.T, s *Store) []decodedEntry {
	t.Helper()
	var out []decodedEntry
	for _, e := range dueEntries(t, s, time.Now().Add(24*365*time.Hour)) {
		var body struct {
			Event string         `json:"event"`
			Data  onramp.Payload `json:"data"`
		}
		if err := json.Unmarshal(e.Body, &body); err != nil {
			t.Fatalf("outbox body %s: %v", e.Body, err)
		}
		if body.Event != e.Event {
			t.Fatalf("entry of %s carries a %s body", e.Event, body.Event)
		}
		out = append(out, decodedEntry{webhook: e.WebhookID, event: e.Event, data: body.Data})
	}
	return out
}

// TestOnrampEarningOnlyOnCompletion ends orders every way the state machine
// allows: only a completed order with a partner fee earns, so only it leaves
// an earning and a pending index entry; the others' lines carry their final
// status and nothing to pay.
func TestOnrampEarningOnlyOnCompletion(t *testing.T) {
	paid := []onramp.State{onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed}
	cases := []struct {
		name  string
		bps   int
		path  []onramp.State
		earns bool
	}{
		{"completed", 150, paid, true},
		{"completed without a partner fee", 0, paid, false},
		{"failed before payment", 150, []onramp.State{onramp.Failed}, false},
		{"failed after payment", 150, []onramp.State{onramp.PaymentReceived, onramp.Failed}, false},
		{"refunded", 150, []onramp.State{onramp.PaymentReceived, onramp.Refunded}, false},
		{"expired", 150, []onramp.State{onramp.Expired}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			s := openTest(t, Options{Now: clock.Now})
			const pid = "ptn_a"
			o := newOnrampOrder(t, pid, tc.bps, clock.Now())
			if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
			for _, to := range tc.path {
				at := clock.Now().Add(time.Second)
				if to == onramp.Expired {
					at = o.ExpiresAt
				}
				moveAndSave(t, s, o, to, at, "0xabc", "")
			}
			reloadEquals(t, s, o)
			a := onrampLine(t, s, pid, o.UID)
			if a.Status != string(tc.path[len(tc.path)-1]) || a.Kind != account.ActivityOnramp {
				t.Fatalf("line %+v", a)
			}
			if (a.Earning != nil) != tc.earns || (a.FeeMicroUSD > 0) != tc.earns {
				t.Fatalf("line earning %+v, fee %d µUSD; want an earning: %v", a.Earning, a.FeeMicroUSD, tc.earns)
			}
			want := map[bool]int{false: 0, true: 1}[tc.earns]
			if n := pendingIndexSize(t, s); n != want {
				t.Fatalf("%d pending index entries, want %d", n, want)
			}
			e, err := s.Earnings(ctx, pid)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Pending) != want || len(e.Settled) != 0 {
				t.Fatalf("earnings %+v", e)
			}
		})
	}
}

// TestOnrampAnonymousOrderWritesNoActivity carries an order made without a
// key to completion: the order is kept, but no partner's history, ledger or
// webhooks hear of it, whoever else has webhooks.
func TestOnrampAnonymousOrderWritesNoActivity(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	if err := s.CreateWebhook(ctx, newHook("ptn_a", webhook.OnrampPaymentReceived, webhook.OnrampCompleted)); err != nil {
		t.Fatal(err)
	}
	o := newOnrampOrder(t, "", account.AnonymousOnrampFeeBps, clock.Now())
	if o.Quote.Fees.Partner == 0 {
		t.Fatal("the anonymous tier charged no fee; the test needs one")
	}
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	for _, to := range []onramp.State{onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed} {
		clock.Advance(time.Second)
		moveAndSave(t, s, o, to, clock.Now(), "0xabc", "")
	}
	reloadEquals(t, s, o)
	for _, table := range []string{"activity", "outbox", "deliveries"} {
		if n := countRows(t, s, table); n != 0 {
			t.Errorf("an anonymous order wrote %d rows in %s", n, table)
		}
	}
}

// TestEachOpenOnrampOrder stores an order in every state and checks that
// the resume scan returns exactly the non-terminal ones, before and after a
// reopen, that it stops when told to, and that an order leaves it once it
// is saved terminal.
func TestEachOpenOnrampOrder(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := db.open(t, Options{Now: clock.Now})
	paths := map[onramp.State][]onramp.State{
		onramp.Created:         nil,
		onramp.PaymentReceived: {onramp.PaymentReceived},
		onramp.CryptoSent:      {onramp.PaymentReceived, onramp.CryptoSent},
		onramp.Completed:       {onramp.PaymentReceived, onramp.CryptoSent, onramp.Completed},
		onramp.Failed:          {onramp.Failed},
		onramp.Refunded:        {onramp.PaymentReceived, onramp.Refunded},
		onramp.Expired:         {onramp.Expired},
	}
	orders := map[string]*onramp.Order{}
	var wantOpen []string
	for _, partner := range []string{"ptn_a", ""} {
		for state, path := range paths {
			o := newOnrampOrder(t, partner, 100, clock.Now())
			if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
				t.Fatal(err)
			}
			for _, to := range path {
				at := clock.Now().Add(time.Second)
				if to == onramp.Expired {
					at = o.ExpiresAt
				}
				moveAndSave(t, s, o, to, at, "0xabc", "")
			}
			if o.State != state {
				t.Fatalf("built a %s order for %s", o.State, state)
			}
			orders[o.UID] = o
			if !state.Terminal() {
				wantOpen = append(wantOpen, o.UID)
			}
		}
	}
	slices.Sort(wantOpen)
	scan := func() []string {
		t.Helper()
		var got []string
		if err := s.EachOpenOnrampOrder(ctx, func(o *onramp.Order) bool {
			if !reflect.DeepEqual(o, orders[o.UID]) {
				t.Errorf("scan returned %+v, saved %+v", o, orders[o.UID])
			}
			got = append(got, o.UID)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := scan(); !slices.Equal(got, wantOpen) {
		t.Fatalf("open orders %v, want %v", got, wantOpen)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = db.open(t, Options{Now: clock.Now})
	if got := scan(); !slices.Equal(got, wantOpen) {
		t.Fatalf("open orders after a reopen %v, want %v", got, wantOpen)
	}
	calls := 0
	if err := s.EachOpenOnrampOrder(ctx, func(*onramp.Order) bool { calls++; return false }); err != nil || calls != 1 {
		t.Fatalf("a scan told to stop made %d calls (%v)", calls, err)
	}

	// An open order saved terminal leaves the scan.
	first := orders[wantOpen[0]]
	to := onramp.Failed
	if first.State == onramp.CryptoSent {
		to = onramp.Completed
	}
	moveAndSave(t, s, first, to, clock.Now().Add(time.Hour), "", "the payment was declined")
	if got := scan(); !slices.Equal(got, wantOpen[1:]) {
		t.Fatalf("open orders after %s ended: %v, want %v", first.UID, got, wantOpen[1:])
	}
}

func TestOnrampOrderNotFound(t *testing.T) {
	s := openTest(t, Options{})
	if _, err := s.OnrampOrder(context.Background(), onramp.NewUID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown order: %v, want store.ErrNotFound", err)
	}
}

// TestOnrampOrderSavedThroughItsStates carries a partner's order from its
// checkout to COMPLETED, saving each step as the desk does, and checks
// after each save the order exactly as saved, the activity line with the
// step's status, from completion on its earning pending, and the events in
// the outbox; a save of the completed order again, and one after its
// earning settled, change nothing of the line.
func TestOnrampOrderSavedThroughItsStates(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.UTC)}
	s := db.open(t, Options{Now: clock.Now})
	const pid = "ptn_onramp"
	every := newHook(pid, webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted,
		webhook.OnrampFailed, webhook.OnrampRefunded)
	completedOnly := newHook(pid, webhook.OnrampCompleted)
	for _, w := range []*webhook.Registration{every, completedOnly} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	o := newOnrampOrder(t, pid, account.AnonymousOnrampFeeBps, clock.Now())
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	reloadEquals(t, s, o)
	if a := onrampLine(t, s, pid, o.UID); a.Status != string(onramp.Created) || a.Earning != nil || a.FeeMicroUSD != 0 {
		t.Fatalf("a new order's line: %+v", a)
	}
	steps := []struct {
		to     onramp.State
		txHash string
		event  string
	}{
		{onramp.PaymentReceived, "", webhook.OnrampPaymentReceived},
		{onramp.CryptoSent, "0xfeed", webhook.OnrampCryptoSent},
		{onramp.Completed, "", webhook.OnrampCompleted},
	}
	for _, st := range steps {
		clock.Advance(1500*time.Millisecond + 777)
		ev := moveAndSave(t, s, o, st.to, clock.Now(), st.txHash, "")
		if ev == nil || ev.Name != st.event {
			t.Fatalf("%s published %v, want %s", st.to, ev, st.event)
		}
		reloadEquals(t, s, o)
		a := onrampLine(t, s, pid, o.UID)
		completed := st.to == onramp.Completed
		if a.Kind != account.ActivityOnramp || a.Status != string(st.to) || (a.Earning != nil) != completed {
			t.Fatalf("after %s the line is %+v", st.to, a)
		}
		if want := map[bool]int{false: 0, true: 1}[completed]; pendingIndexSize(t, s) != want {
			t.Fatalf("after %s %d earnings pending, want %d", st.to, pendingIndexSize(t, s), want)
		}
	}
	token := usdcOnArbitrum(t)
	wantLine := &account.Activity{PartnerID: pid, ID: o.UID, Kind: account.ActivityOnramp, Status: string(onramp.Completed),
		Provider: "sandbox", ToChain: onrampChain, FromToken: "USD", ToToken: token, FromAmount: "100.00", ToAmount: "100000000",
		FeeMicroUSD: onrampFeeMicroUSD, VolumeMicroUSD: 100_000_000, CreatedAt: o.CreatedAt,
		Earning: &account.Earning{Ecosystem: "evm", FeeToken: token, FeeAmount: onrampFeeBaseUnits, State: account.EarningPending}}
	if line := onrampLine(t, s, pid, o.UID); !reflect.DeepEqual(line, wantLine) {
		t.Fatalf("line\n got %+v %+v\nwant %+v %+v", line, line.Earning, wantLine, wantLine.Earning)
	}
	var gotEvery, gotCompleted []string
	for _, e := range outboxOf(t, s) {
		if e.data.OrderUID != o.UID || e.data.ExternalID != "acme-42" {
			t.Fatalf("event %s carries %+v", e.event, e.data)
		}
		switch e.webhook {
		case every.ID:
			gotEvery = append(gotEvery, e.event)
		case completedOnly.ID:
			gotCompleted = append(gotCompleted, e.event)
		default:
			t.Fatalf("entry for an unknown webhook %s", e.webhook)
		}
	}
	if want := []string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}; !slices.Equal(gotEvery, want) {
		t.Fatalf("events of the hook taking all: %v, want %v", gotEvery, want)
	}
	if want := []string{webhook.OnrampCompleted}; !slices.Equal(gotCompleted, want) {
		t.Fatalf("events of the hook taking completions: %v, want %v", gotCompleted, want)
	}
	// Saved again, by another node: nothing more pending, counted once.
	s = db.open(t, Options{Now: clock.Now})
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Earnings(ctx, pid); err != nil || len(e.Pending) != 1 || e.Pending[0].RowCount != 1 || e.Pending[0].TotalMicroUSD != onrampFeeMicroUSD {
		t.Fatalf("earnings after a second save: %+v %v", e, err)
	}
	if n := pendingIndexSize(t, s); n != 1 {
		t.Fatalf("%d earnings pending, want 1", n)
	}
	// Once settled, a save leaves the line as it is.
	if err := s.PutFeeWallet(ctx, pid, "evm", "0x1111111111111111111111111111111111111111"); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Settle(ctx, "evm", false, clock.Now()); err != nil || len(b.Payouts) != 1 || b.Payouts[0].TotalMicroUSD != onrampFeeMicroUSD {
		t.Fatalf("settlement %+v %v", b, err)
	}
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	if a := onrampLine(t, s, pid, o.UID); a.Earning == nil || a.Earning.State != account.EarningSettled {
		t.Fatalf("a save after settlement rewrote the line: %+v", a.Earning)
	}
	if n := pendingIndexSize(t, s); n != 0 {
		t.Fatalf("a save after settlement made %d earnings pending", n)
	}
}
