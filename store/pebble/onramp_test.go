package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

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

func pendingIndexSize(t *testing.T, s *Store) int {
	t.Helper()
	return countPrefix(t, s, prefixLedgerEco)
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

// TestOnrampOrderSavedThroughItsStates carries a partner's order from its
// checkout to COMPLETED, saving each step as the desk does, and checks after
// each save what the store holds: the order exactly as saved (history times
// included), the activity line with the step's status and, from completion
// on only, its earning indexed as pending. The completed order is saved
// again, the store closed and reopened, and the earning settled: it is
// counted and paid exactly once.
func TestOnrampOrderSavedThroughItsStates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Nanoseconds in the clock: the order keeps milliseconds.
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.UTC)}
	s := openWebhookStore(t, dir, clock)
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
	for i, st := range steps {
		clock.Advance(1500*time.Millisecond + 777)
		ev := moveAndSave(t, s, o, st.to, clock.Now(), st.txHash, "")
		if ev == nil || ev.Name != st.event {
			t.Fatalf("%s published %v, want %s", st.to, ev, st.event)
		}
		reloadEquals(t, s, o)
		if h := o.History[len(o.History)-1]; !h.At.Equal(clock.Now().Truncate(time.Millisecond)) || h.TxHash != st.txHash {
			t.Fatalf("step %d kept %+v", i, h)
		}
		a := onrampLine(t, s, pid, o.UID)
		if a.Kind != account.ActivityOnramp || a.Status != string(st.to) {
			t.Fatalf("after %s the line is %+v", st.to, a)
		}
		completed := st.to == onramp.Completed
		if (a.Earning != nil) != completed || (a.FeeMicroUSD != 0) != completed {
			t.Fatalf("after %s the line's earning is %+v (fee %d µUSD)", st.to, a.Earning, a.FeeMicroUSD)
		}
		if want := map[bool]int{false: 0, true: 1}[completed]; pendingIndexSize(t, s) != want {
			t.Fatalf("after %s the pending index has %d entries, want %d", st.to, pendingIndexSize(t, s), want)
		}
	}
	if len(o.History) != 4 || o.TxHash != "0xfeed" {
		t.Fatalf("history %+v, txHash %q", o.History, o.TxHash)
	}

	// The line, as the partner's transactions list shows it.
	token := usdcOnArbitrum(t)
	line := onrampLine(t, s, pid, o.UID)
	wantLine := &account.Activity{PartnerID: pid, ID: o.UID, Kind: account.ActivityOnramp, Status: string(onramp.Completed),
		Provider: "sandbox", ToChain: onrampChain, FromToken: "USD", ToToken: token, FromAmount: "100.00", ToAmount: "100000000",
		FeeMicroUSD: onrampFeeMicroUSD, VolumeMicroUSD: 100_000_000, CreatedAt: o.CreatedAt,
		Earning: &account.Earning{Ecosystem: "evm", FeeToken: token, FeeAmount: onrampFeeBaseUnits, State: account.EarningPending}}
	if !reflect.DeepEqual(line, wantLine) {
		t.Fatalf("line\n got %+v %+v\nwant %+v %+v", line, line.Earning, wantLine, wantLine.Earning)
	}

	// The outbox holds each event for the hooks subscribed to it, in order,
	// each carrying the order as it stood.
	statusOf := map[string]onramp.State{webhook.OnrampPaymentReceived: onramp.PaymentReceived,
		webhook.OnrampCryptoSent: onramp.CryptoSent, webhook.OnrampCompleted: onramp.Completed}
	var gotEvery, gotCompleted []string
	for _, e := range outboxOf(t, s) {
		if e.data.OrderUID != o.UID || e.data.ExternalID != "acme-42" || e.data.WalletAddress != onrampWallet {
			t.Fatalf("event %s carries %+v", e.event, e.data)
		}
		if e.data.Status != statusOf[e.event] {
			t.Fatalf("event %s carries status %s", e.event, e.data.Status)
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

	// Saving the completed order again (a resumed desk may) indexes nothing
	// more and counts the earning once.
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	checkEarnings := func(stage string, pending, settled []account.EarningsGroup) {
		t.Helper()
		e, err := s.Earnings(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.Pending, pending) || !reflect.DeepEqual(e.Settled, settled) {
			t.Fatalf("%s: earnings pending %+v settled %+v, want %+v and %+v", stage, e.Pending, e.Settled, pending, settled)
		}
	}
	evm := []account.EarningsGroup{{Ecosystem: "evm", RowCount: 1, TotalMicroUSD: onrampFeeMicroUSD}}
	none := []account.EarningsGroup{}
	checkEarnings("saved again", evm, none)
	if n := pendingIndexSize(t, s); n != 1 {
		t.Fatalf("saved again: %d pending index entries, want 1", n)
	}

	// All of it survives a close and a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWebhookStore(t, dir, clock)
	reloadEquals(t, s, o)
	checkEarnings("reopened", evm, none)
	if n := pendingIndexSize(t, s); n != 1 {
		t.Fatalf("reopened: %d pending index entries, want 1", n)
	}
	if n := len(outboxOf(t, s)); n != 4 {
		t.Fatalf("reopened: %d outbox entries, want 4", n)
	}

	// Without a fee wallet the earning waits; with one it is paid, once.
	b, err := admin.Settle(ctx, s, "evm", false, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Payouts) != 0 || len(b.Skipped) != 1 || b.Skipped[0] != (account.Unpaid{PartnerID: pid, RowCount: 1, TotalMicroUSD: onrampFeeMicroUSD}) {
		t.Fatalf("settled without a wallet: %+v", b)
	}
	const feeWallet = "0x1111111111111111111111111111111111111111"
	if err := s.PutFeeWallet(ctx, pid, "evm", feeWallet); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	b, err = admin.Settle(ctx, s, "evm", false, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == "" || !reflect.DeepEqual(b.Payouts, []account.Payout{{PartnerID: pid, Wallet: feeWallet, RowCount: 1, TotalMicroUSD: onrampFeeMicroUSD}}) {
		t.Fatalf("settlement %+v", b)
	}
	checkEarnings("settled", none, evm)
	if e := onrampLine(t, s, pid, o.UID).Earning; e.State != account.EarningSettled || e.SettledTo != feeWallet || e.SettledBatch != b.ID {
		t.Fatalf("settled earning %+v", e)
	}
	again, err := admin.Settle(ctx, s, "evm", false, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != "" || len(again.Payouts) != 0 {
		t.Fatalf("a second settlement paid %+v", again)
	}

	// A save after settlement leaves the settled line as it is.
	if err := s.SaveOnrampOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	checkEarnings("saved after settlement", none, evm)
	if n := pendingIndexSize(t, s); n != 0 {
		t.Fatalf("saved after settlement: %d pending index entries, want 0", n)
	}
	if b, err := admin.Settle(ctx, s, "evm", false, clock.Now()); err != nil || len(b.Payouts) != 0 {
		t.Fatalf("a settlement after the save paid %+v (%v)", b, err)
	}
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
			s := openTestStore(t, clock)
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
	s := openWebhookStore(t, t.TempDir(), clock)
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
	for _, prefix := range []string{prefixActivity, prefixLedgerEco, prefixOutbox, prefixDelivery} {
		if n := countPrefix(t, s, prefix); n != 0 {
			t.Errorf("an anonymous order wrote %d records under %s", n, prefix)
		}
	}
}

// TestEachOpenOnrampOrder stores an order in every state and checks that
// the resume scan returns exactly the non-terminal ones, before and after a
// reopen, that it stops when told to, and that an order leaves it once it
// is saved terminal.
func TestEachOpenOnrampOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openWebhookStore(t, dir, clock)
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
	s = openWebhookStore(t, dir, clock)
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
	s := openTestStore(t, nil)
	if _, err := s.OnrampOrder(context.Background(), onramp.NewUID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown order: %v, want store.ErrNotFound", err)
	}
}
