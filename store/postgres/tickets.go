package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// The tickets of issued quotes (migrations/0009_tickets.sql), with the
// ticket log's methods (local.TicketLog) and promises: a batch is
// written unsynced (through the unsynced pool: a crash of the server may
// lose the last few hundred milliseconds of tickets, as a crash of the
// machine may lose the ticket log's unsynced appends), a ticket written
// twice is found at its later record, and a sweep removes the tickets of
// quotes issued before its bound.

// PutTickets stores a batch of tickets in one statement, committed
// without waiting for its WAL flush.
func (s *Store) PutTickets(ctx context.Context, ts []store.EncodedTicket) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(ts) == 0 {
		return nil
	}
	ids, issued := make([]string, len(ts)), make([]int64, len(ts))
	addrs, memos, recs := make([]*string, len(ts)), make([]*string, len(ts)), make([][]byte, len(ts))
	for i, t := range ts {
		at, ok := quote.IssuedAt(t.ID)
		if !ok {
			return fmt.Errorf("postgres: ticket: malformed quote id %q", t.ID)
		}
		ids[i], issued[i], recs[i] = t.ID, nanos(at), t.Record()
		if k := t.DepositKey(); k != "" {
			addr, memo, _ := strings.Cut(k, "\x00")
			addrs[i], memos[i] = &addr, &memo
		}
	}
	// The last record of an id in the batch wins, as in the ticket log.
	if _, err := s.async.Exec(ctx, `INSERT INTO tickets (id, issued_ns, deposit_address, deposit_memo, record)
		SELECT DISTINCT ON (i) i, t, a, m, r
		FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bytea[]) WITH ORDINALITY AS b(i, t, a, m, r, n)
		ORDER BY i, n DESC
		ON CONFLICT (id) DO UPDATE SET issued_ns = excluded.issued_ns, deposit_address = excluded.deposit_address,
			deposit_memo = excluded.deposit_memo, record = excluded.record`,
		ids, issued, addrs, memos, recs); err != nil {
		return fmt.Errorf("postgres: put tickets: %w", err)
	}
	return nil
}

// Ticket returns the ticket of quote id, or store.ErrNotFound (a
// malformed id, one never issued, or one swept).
func (s *Store) Ticket(ctx context.Context, id string) (*quote.Ticket, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if _, ok := quote.IssuedAt(id); !ok {
		return nil, fmt.Errorf("postgres: ticket %q: %w", id, store.ErrNotFound)
	}
	var rec []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM tickets WHERE id = $1`, id).Scan(&rec)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: ticket %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: ticket %s: %w", id, err)
	}
	t, err := store.DecodeTicketRecord(id, rec)
	if err != nil {
		return nil, err
	}
	if t.ID != id {
		return nil, fmt.Errorf("postgres: ticket %s: %w", id, store.ErrNotFound)
	}
	return t, nil
}

// QuoteByDeposit returns the id of the latest intents quote whose deposit
// target is address (and memo) among the tickets kept, or
// store.ErrNotFound.
func (s *Store) QuoteByDeposit(ctx context.Context, address, memo string) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM tickets WHERE deposit_address = $1 AND deposit_memo = $2
		ORDER BY issued_ns DESC, id DESC LIMIT 1`, address, memo).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("postgres: deposit %s: %w", address, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: deposit %s: %w", address, err)
	}
	return id, nil
}

// SweepTickets removes the tickets of the quotes issued before the given
// time, unsynced (a removal lost to a crash is taken by the next sweep).
func (s *Store) SweepTickets(ctx context.Context, before time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.async.Exec(ctx, `DELETE FROM tickets WHERE issued_ns < $1`, nanos(before)); err != nil {
		return fmt.Errorf("postgres: sweep tickets: %w", err)
	}
	return nil
}
