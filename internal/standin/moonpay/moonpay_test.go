package moonpay

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	adapter "github.com/swapgate/swapgate/routing/adapters/moonpay"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The stand-in and the service's adapter, written apart from the same
// documented protocol, agree: the adapter's quote of the stand-in's prices
// adds up, its widget URL passes the stand-in's signature check, the
// stand-in's webhooks pass the adapter's, and a lookup reads what Set left.
func TestStandinSpeaksTheAdaptersProtocol(t *testing.T) {
	var mu sync.Mutex
	var got []*onramp.Update
	var p *adapter.Provider
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u, err := p.Webhook(r.Header.Get(adapter.SignatureHeader), b, time.Now())
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, u)
		mu.Unlock()
	}))
	defer hook.Close()
	s := Start(Config{APIKey: "pk", SecretKey: "sk", WebhookKey: "wk", WebhookURL: hook.URL})
	defer s.Close()
	var err error
	if p, err = adapter.New(adapter.Config{APIURL: s.URL(), WidgetURL: s.WidgetURL(), APIKey: "pk", SecretKey: "sk", WebhookKey: "wk"}); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	cat := adapter.Catalogue(reg)
	tests := []struct {
		currency, symbol string
		chainID          uint64
		method           string
		crypto           string
		total            onramp.Cents
	}{
		// 100 USD of USDC on Base by card: 4.50 fee, 1.20 extra, 0.05 network.
		{"USD", "USDC", 8453, onramp.CreditCard, "100", 10_575},
		// 100 EUR of ETH by SEPA: 1.00 fee, 1.20 extra, 1.38 network.
		{"EUR", "ETH", 1, onramp.BankTransfer, "0.03623188", 10_358},
	}
	for _, tt := range tests {
		cur, _ := cat.Currency(tt.currency)
		a, _ := cat.Asset(tt.symbol, tt.chainID)
		m, _ := cat.Method(tt.method)
		q, err := p.Quote(context.Background(), &onramp.Request{Currency: cur, Amount: 10_000, Asset: a, Method: m}, 120, time.Now(), onramp.QuoteTTL)
		if err != nil {
			t.Fatal(err)
		}
		if q.CryptoAmount != tt.crypto || q.Total != tt.total || q.Fees.Partner != 120 {
			t.Fatalf("%s %s: %+v", tt.currency, tt.symbol, q)
		}
	}

	o := &onramp.Order{UID: onramp.NewUID(), Wallet: "0x3333333333333333333333333333333333333333",
		Quote: onramp.Quote{Currency: "USD", Amount: 10_000, Symbol: "USDC", ChainID: 8453, Method: onramp.CreditCard}}
	u, err := p.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyWidgetURL(u); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("widget: %d", resp.StatusCode)
	}
	if err := s.VerifyWidgetURL(u[:len(u)-3] + "abc"); err == nil {
		t.Fatal("a changed signature verifies")
	}

	if up, err := p.Lookup(context.Background(), o); err != nil || up != nil {
		t.Fatalf("lookup before any transaction: %+v %v", up, err)
	}
	if st, err := s.Move(context.Background(), o.UID, "pending", "", ""); err != nil || st != http.StatusOK {
		t.Fatalf("move: %d %v", st, err)
	}
	if st, err := s.Post(context.Background(), []byte(`{"type":"transaction_updated"}`), "wk_forged"); err != nil || st != http.StatusBadRequest {
		t.Fatalf("forged: %d %v", st, err)
	}
	s.Set(o.UID, "completed", "0xabc", "")
	up, err := p.Lookup(context.Background(), o)
	if err != nil || up == nil || up.State != onramp.Completed || up.TxHash != "0xabc" {
		t.Fatalf("lookup: %+v %v", up, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].UID != o.UID || got[0].State != onramp.PaymentReceived {
		t.Fatalf("webhooks %+v", got)
	}
}
