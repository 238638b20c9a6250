package storecontract

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/tickets"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/store"
)

// Tickets is the compact records of issued quotes (tickets.Store), kept
// for execute and status to find by id or by deposit target. Tickets are
// written without waiting for durability: a crash may lose the last
// moments' (the keeper serves those from memory until they are written),
// a clean close loses none.
type Tickets = tickets.Store

// issuedQuote is ptn_a's quote of route r issued at now.
func issuedQuote(now time.Time, r *quote.Route) *quote.Issued {
	req := &quote.Request{ID: quote.NewID(now), From: &registry.Chain{ID: 42161}, To: &registry.Chain{ID: 8453},
		FromToken:  &registry.Token{Address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"},
		ToToken:    &registry.Token{Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		FromAmount: big.NewInt(1000), FromAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		ToAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72", PartnerID: "ptn_a", Dry: true, Now: now}
	return &quote.Issued{ID: req.ID, Request: req, Route: r, Provider: "aggregator", FeeBps: 25, ExpiresAt: now.Add(quote.TTL)}
}

func plainRoute() *quote.Route {
	return &quote.Route{Tool: "sbx-arcbridge", FromAmount: big.NewInt(1000), ToAmount: big.NewInt(990), ToAmountMin: big.NewInt(985),
		Tx: &quote.TxRequest{To: "0xrouter", From: "0xfrom", Data: []byte{0xab}, Value: big.NewInt(0), ChainID: 42161, GasLimit: 300000}}
}

func multiStep() *quote.Route {
	return &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{Steps: []quote.Step{
		{Step: 1, TransactionRequest: &quote.StepTx{To: "0xr", Data: "0x02", Value: "0x0", ChainID: 10}}, {Step: 2, Automated: true}}}}
}

func intents(address, memo string) *quote.Route {
	return &quote.Route{Tool: "sbx-near", FromAmount: big.NewInt(1000), ToAmount: big.NewInt(990), DepositAddress: address, DepositMemo: memo}
}

// encoded encodes issued quotes' tickets as the keeper does.
func encoded(t testing.TB, is ...*quote.Issued) []store.EncodedTicket {
	t.Helper()
	out := make([]store.EncodedTicket, len(is))
	for i, q := range is {
		var err error
		if out[i], err = store.EncodeTicket(q); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// RunTickets holds a Tickets implementation to its contract.
func RunTickets(t *testing.T, open Factory[Tickets]) {
	ctx := context.Background()
	plain := issuedQuote(t0, plainRoute())
	first := issuedQuote(t0.Add(time.Second), intents("dep.near", "m1"))
	later := issuedQuote(t0.Add(20*time.Second), intents("dep.near", "m1"))
	other := issuedQuote(t0.Add(21*time.Second), intents("dep.near", ""))
	all := []*quote.Issued{plain, first, later, other}
	// kept checks that every ticket of all reads back as encoded and that
	// deposit targets lead to the latest quote.
	kept := func(t testing.TB, s Tickets) {
		t.Helper()
		for _, e := range encoded(t, all...) {
			want, err := store.DecodeTicket(e)
			mustNil(t, "decode", err)
			got, err := s.Ticket(ctx, e.ID)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("ticket %s: %+v %v\nwant %+v", e.ID, got, err, want)
			}
		}
		for _, c := range []struct{ address, memo, want string }{{"dep.near", "m1", later.ID}, {"dep.near", "", other.ID}} {
			if id, err := s.QuoteByDeposit(ctx, c.address, c.memo); err != nil || id != c.want {
				t.Fatalf("by deposit %s/%s: %q %v, want %q", c.address, c.memo, id, err, c.want)
			}
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Tickets])
	}{
		{"tickets read back by id, deposit targets lead to the latest quote", func(t *testing.T, h *Handle[Tickets]) {
			mustNil(t, "put", h.Store.PutTickets(ctx, encoded(t, plain, first)))
			mustNil(t, "put", h.Store.PutTickets(ctx, encoded(t, later, other)))
			kept(t, h.Store)
			for _, id := range []string{quote.NewID(t0.Add(time.Hour)), "qt_malformed", ""} {
				if _, err := h.Store.Ticket(ctx, id); !errors.Is(err, account.ErrNotFound) {
					t.Errorf("ticket %q never issued: %v, want ErrNotFound", id, err)
				}
			}
			if _, err := h.Store.QuoteByDeposit(ctx, "dep.near", "m2"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("unknown deposit target: %v", err)
			}
		}},
		{"a batch written again is harmless", func(t *testing.T, h *Handle[Tickets]) {
			mustNil(t, "put", h.Store.PutTickets(ctx, encoded(t, all...)))
			mustNil(t, "put again", h.Store.PutTickets(ctx, encoded(t, all...)))
			kept(t, h.Store)
		}},
		{"a sweep takes the tickets issued well before its bound, and only those", func(t *testing.T, h *Handle[Tickets]) {
			mustNil(t, "put", h.Store.PutTickets(ctx, encoded(t, all...)))
			mustNil(t, "sweep", h.Store.SweepTickets(ctx, t0.Add(-time.Hour)))
			kept(t, h.Store)
			mustNil(t, "sweep", h.Store.SweepTickets(ctx, t0.Add(time.Hour)))
			for _, q := range all {
				if _, err := h.Store.Ticket(ctx, q.ID); !errors.Is(err, account.ErrNotFound) {
					t.Fatalf("ticket %s after its sweep: %v", q.ID, err)
				}
			}
			if _, err := h.Store.QuoteByDeposit(ctx, "dep.near", "m1"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("a swept quote is found by its deposit: %v", err)
			}
		}},
		{"tickets outlive a clean close", func(t *testing.T, h *Handle[Tickets]) {
			if h.Reopen == nil {
				t.Skip("the backend has nothing to reopen")
			}
			mustNil(t, "put", h.Store.PutTickets(ctx, encoded(t, all...)))
			kept(t, h.Reopen(t))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}
