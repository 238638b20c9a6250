package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
	"github.com/swapgate/swapgate/store/local"
)

// The tickets of issued quotes, held to what the ticket log
// (local.TicketLog) answers for the same tickets.
func TestTicketsLikeTheTicketLog(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	log, err := local.OpenTicketLog(t.TempDir(), local.TicketLogOptions{Horizon: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	now := time.Now().Truncate(time.Second)
	deposit := func(at time.Time, addr, memo string) *quote.Issued {
		return issued(at, &quote.Route{Provider: "intents", DepositAddress: addr, DepositMemo: memo})
	}
	quotes := []*quote.Issued{
		issued(now.Add(-10*time.Minute), &quote.Route{}),
		issued(now, &quote.Route{Shape: quote.ShapeMultiStep, MultiStep: &quote.MultiStepQuote{}}),
		deposit(now.Add(-time.Minute), "0xdeposit", ""),
		deposit(now, "0xdeposit", ""),
		deposit(now, "0xdeposit", "memo-1"),
	}
	var enc []store.EncodedTicket
	for _, is := range quotes {
		e, err := store.EncodeTicket(is)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, e)
	}
	// Written in two batches, one ticket twice.
	for _, batch := range [][]store.EncodedTicket{enc[:3], enc[2:]} {
		if err := s.PutTickets(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := log.PutTickets(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, is := range quotes {
		got, err := s.Ticket(ctx, is.ID)
		if err != nil {
			t.Fatalf("ticket %s: %v", is.ID, err)
		}
		want, err := log.Ticket(ctx, is.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("ticket %s:\n got %+v\nwant %+v (%v)", is.ID, got, want, err)
		}
	}
	for _, c := range []struct{ addr, memo string }{{"0xdeposit", ""}, {"0xdeposit", "memo-1"}, {"0xdeposit", "memo-2"}, {"0xnone", ""}} {
		got, err := s.QuoteByDeposit(ctx, c.addr, c.memo)
		want, werr := log.QuoteByDeposit(ctx, c.addr, c.memo)
		if got != want || errors.Is(err, store.ErrNotFound) != errors.Is(werr, store.ErrNotFound) {
			t.Errorf("QuoteByDeposit(%s, %q) = %q %v; the ticket log: %q %v", c.addr, c.memo, got, err, want, werr)
		}
	}
	for _, id := range []string{"qt_malformed", quote.NewID(now)} {
		if _, err := s.Ticket(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ticket %s: %v, want ErrNotFound", id, err)
		}
	}
	if err := s.PutTickets(ctx, []store.EncodedTicket{{ID: "qt_malformed"}}); err == nil {
		t.Fatal("a ticket with a malformed id was stored")
	}
	// A sweep takes the tickets issued before its bound.
	if err := s.SweepTickets(ctx, now.Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ticket(ctx, quotes[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a swept ticket: %v", err)
	}
	if _, err := s.Ticket(ctx, quotes[2].ID); err != nil {
		t.Fatalf("a ticket after the bound: %v", err)
	}
}
