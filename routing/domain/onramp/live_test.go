package onramp

import (
	"errors"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

func liveOrder(t *testing.T, states ...State) *Order {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := &Order{UID: NewUID(), State: Created, History: []Step{{State: Created, At: at}}, ExpiresAt: at.Add(CheckoutTTL)}
	for _, s := range states {
		hash := ""
		if s == CryptoSent {
			hash = "0xaaa"
		}
		if _, err := o.Move(s, at, hash, "r"); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// Follow walks an order through every state between where it is and where
// the provider says it is, publishing each state's event in order, and
// ignores what it already knows.
func TestFollow(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)
	tests := []struct {
		name    string
		from    []State
		update  Update
		state   State
		events  []string
		txHash  string
		wantErr error
	}{
		{"created → paid", nil, Update{State: PaymentReceived}, PaymentReceived, []string{webhook.OnrampPaymentReceived}, "", nil},
		{"created → completed fills the gap", nil, Update{State: Completed, TxHash: "0xbbb"}, Completed,
			[]string{webhook.OnrampPaymentReceived, webhook.OnrampCryptoSent, webhook.OnrampCompleted}, "0xbbb", nil},
		{"paid → sent", []State{PaymentReceived}, Update{State: CryptoSent, TxHash: "0xccc"}, CryptoSent, []string{webhook.OnrampCryptoSent}, "0xccc", nil},
		{"replay of the current state", []State{PaymentReceived}, Update{State: PaymentReceived}, PaymentReceived, nil, "", nil},
		{"an older report", []State{PaymentReceived, CryptoSent}, Update{State: PaymentReceived}, CryptoSent, nil, "0xaaa", nil},
		{"waiting changes nothing", nil, Update{State: Created}, Created, nil, "", nil},
		{"created → failed", nil, Update{State: Failed, Reason: "declined"}, Failed, []string{webhook.OnrampFailed}, "", nil},
		{"paid → failed", []State{PaymentReceived}, Update{State: Failed, Reason: "x"}, Failed, []string{webhook.OnrampFailed}, "", nil},
		{"terminal stays", []State{Failed}, Update{State: Completed, TxHash: "0x1"}, Failed, nil, "", nil},
		{"sent cannot fail", []State{PaymentReceived, CryptoSent}, Update{State: Failed}, CryptoSent, nil, "0xaaa", ErrTransition},
		{"expired is not reported", nil, Update{State: Expired}, Created, nil, "", ErrTransition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := liveOrder(t, tt.from...)
			steps := len(o.History)
			evs, err := o.Follow(&tt.update, at)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if o.State != tt.state || o.TxHash != tt.txHash {
				t.Fatalf("state %s tx %q, want %s %q", o.State, o.TxHash, tt.state, tt.txHash)
			}
			var names []string
			for _, e := range evs {
				names = append(names, e.Name)
				if e.Data.(Payload).OrderUID != o.UID {
					t.Fatalf("event %s for %v", e.Name, e.Data)
				}
			}
			if !slices.Equal(names, tt.events) {
				t.Fatalf("events %v, want %v", names, tt.events)
			}
			if got := len(o.History) - steps; got != len(tt.events) {
				t.Fatalf("%d steps added for %d events", got, len(tt.events))
			}
		})
	}
}

// Quoted applies the package's rounding to a provider's figures and keeps
// the identity total = amount + fees.
func TestQuoted(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalogue(reg)
	usdc, _ := c.Asset("USDC", 8453)
	eth, _ := c.Asset("ETH", 1)
	cur, _ := c.Currency("EUR")
	card, _ := c.Method(CreditCard)
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		asset        *Asset
		crypto, px   string
		wantCrypto   string
		wantRate     string
		net, pr, pa  Cents
		wantTotalFee Cents
	}{
		{usdc, "99.123456789", "1.00881234567", "99.123456", "1.0088123", 5, 399, 120, 524},
		{eth, "0.0312345678912", "3201.5", "0.03123456", "3201.5", 82, 399, 0, 481},
	}
	for _, tt := range tests {
		r := &Request{Currency: cur, Amount: 10_000, Asset: tt.asset, Method: card}
		cr, _ := new(big.Rat).SetString(tt.crypto)
		px, _ := new(big.Rat).SetString(tt.px)
		q := Quoted(r, Figures{Amount: 10_000, Crypto: cr, Price: px, Network: tt.net, Processing: tt.pr, Partner: tt.pa}, 120, now, QuoteTTL)
		if q.CryptoAmount != tt.wantCrypto || q.ExchangeRate != tt.wantRate || q.Fees.Total != tt.wantTotalFee ||
			q.Total != 10_000+tt.wantTotalFee || q.Currency != "EUR" || q.ChainID != tt.asset.ChainID || q.Token != tt.asset.Token.Address ||
			q.PartnerFeeBps != 120 || q.USDRate != "23/25" || !q.ExpiresAt.Equal(now.Add(QuoteTTL)) {
			t.Fatalf("%s: %+v", tt.asset.Symbol, q)
		}
	}
	if got := RoundCents(big.NewRat(12345, 1000)); got != 1235 {
		t.Fatalf("RoundCents(12.345) = %d", got)
	}
}
