package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/account"
	"github.com/swapgate/swapgate/routing/quote"
)

// memTickets is a TicketKeeper in a map.
type memTickets map[string]*quote.Ticket

func (m memTickets) Keep(_ context.Context, is *quote.Issued) error {
	m[is.ID] = &quote.Ticket{ID: is.ID, ExpiresAt: is.ExpiresAt}
	return nil
}

func (m memTickets) QuoteByDeposit(context.Context, string, string) (string, error) {
	return "", account.ErrNotFound
}

func (m memTickets) Ticket(_ context.Context, id string) (*quote.Ticket, error) {
	if t, ok := m[id]; ok {
		return t, nil
	}
	return nil, account.ErrNotFound
}

func TestLookupTellsExpiredFromUnknown(t *testing.T) {
	now := time.Unix(1_767_225_600, 0)
	store := memTickets{}
	live, stale, swept := quote.NewID(now.Add(-10*time.Second)), quote.NewID(now.Add(-61*time.Second)), quote.NewID(now.Add(-time.Hour))
	store[live] = &quote.Ticket{ID: live, ExpiresAt: now.Add(50 * time.Second)}
	store[stale] = &quote.Ticket{ID: stale, ExpiresAt: now.Add(-time.Second)}
	q := NewQuoter(nil, nil, nil, store, nil, func() time.Time { return now })
	tests := []struct {
		id   string
		want error
	}{
		{live, nil},
		{stale, quote.ErrExpired},
		{swept, quote.ErrExpired},
		{quote.NewID(now), quote.ErrUnknown},
		{"qt_nonsense", quote.ErrUnknown},
	}
	for _, tt := range tests {
		tk, err := q.Lookup(context.Background(), tt.id)
		if !errors.Is(err, tt.want) || (tt.want == nil && tk.ID != tt.id) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tt.id, tk, err, tt.want)
		}
	}
}
