package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// What the trackers follow (migrations/0006_trackers.sql): tracked swaps,
// on-ramp orders and multi-step deposits. Each transition is one committed
// transaction holding the record, the webhook events it publishes and,
// where it has one, the partner's activity line, so that none of them is
// durable without the others.

// trackerChunk is how many records a resume scan reads at a time.
const trackerChunk = 256

// eachOpen calls fn with the record of every open row of table, in key
// order, reading trackerChunk rows at a time, until fn returns false.
// table and key are this file's constants.
func (s *Store) eachOpen(ctx context.Context, table, key string, fn func(raw []byte) (bool, error)) error {
	after := ""
	for {
		rows, err := s.pool.Query(ctx, `SELECT `+key+`, record FROM `+table+` WHERE open AND `+key+` > $1 ORDER BY `+key+` LIMIT $2`,
			after, trackerChunk)
		if err != nil {
			return fmt.Errorf("postgres: open %s: %w", table, err)
		}
		n := 0
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&after, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: open %s: %w", table, err)
			}
			n++
			more, err := fn(raw)
			if err != nil || !more {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: open %s: %w", table, err)
		}
		if n < trackerChunk {
			return nil
		}
	}
}

// publishIn enqueues events in tx for the partner (none for an anonymous
// record).
func (s *Store) publishIn(ctx context.Context, tx pgx.Tx, partnerID string, events []webhook.Event) error {
	if partnerID == "" {
		return nil
	}
	for _, ev := range events {
		if _, err := s.enqueueEvent(ctx, tx, partnerID, ev); err != nil {
			return err
		}
	}
	return nil
}

// rowOf reads one record of table by key, or store.ErrNotFound.
func (s *Store) rowOf(ctx context.Context, table, key, id string) ([]byte, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM `+table+` WHERE `+key+` = $1`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return raw, err
}

func decodeSwap(b []byte) (*swap.Swap, error) {
	var t swap.Swap
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("postgres: decode swap: %w", err)
	}
	return &t, nil
}

// swapOpen says whether a tracker resumes t after a start.
func swapOpen(t *swap.Swap) bool { return !t.Terminal() && !t.NextPoll.IsZero() }

// Swap returns the tracked swap whose source transaction is hash, or
// store.ErrNotFound.
func (s *Store) Swap(ctx context.Context, hash string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	raw, err := s.rowOf(ctx, "swaps", "id", swap.NormalizeHash(hash))
	if err != nil {
		return nil, fmt.Errorf("postgres: swap %s: %w", hash, err)
	}
	return decodeSwap(raw)
}

// CreateSwap stores a newly tracked swap, with its deposit's index entry
// when it is an intents deposit, in one committed transaction, or returns
// the one already tracked under the same hash (created false), so that
// reporting a swap twice, to any node, tracks it once.
func (s *Store) CreateSwap(ctx context.Context, t *swap.Swap) (stored *swap.Swap, created bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	val, err := json.Marshal(t)
	if err != nil {
		return nil, false, fmt.Errorf("postgres: encode swap %s: %w", t.ID, err)
	}
	id := swap.NormalizeHash(t.ID)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO swaps (id, open, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
			id, swapOpen(t), val)
		if err != nil {
			return err
		}
		if created = tag.RowsAffected() == 1; !created {
			return nil
		}
		if t.DepositAddress == "" {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO deposit_swaps (address, memo, swap_id) VALUES ($1, $2, $3)
			ON CONFLICT (address, memo) DO UPDATE SET swap_id = excluded.swap_id`, t.DepositAddress, t.DepositMemo, t.ID)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: commit swap %s: %w", t.ID, err)
	}
	if created {
		return t, true, nil
	}
	old, err := s.Swap(ctx, id)
	return old, false, err
}

// SaveSwap records a transition of a tracked swap in one committed
// transaction: the swap record, its webhook events in the partner's
// outbox, and the status of the partner's activity line of the quote (kind
// swap; a quote without a line, an anonymous one, has none to follow).
func (s *Store) SaveSwap(ctx context.Context, t *swap.Swap, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	val, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("postgres: encode swap %s: %w", t.ID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO swaps (id, open, record) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET open = excluded.open, record = excluded.record`,
			swap.NormalizeHash(t.ID), swapOpen(t), val); err != nil {
			return err
		}
		return s.swapFollowers(ctx, tx, t, events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit swap %s: %w", t.ID, err)
	}
	return nil
}

// swapFollowers writes in tx what a swap's transition carries besides its
// record: its events in the partner's outbox and the status of the
// partner's activity line.
func (s *Store) swapFollowers(ctx context.Context, tx pgx.Tx, t *swap.Swap, events []webhook.Event) error {
	if t.PartnerID == "" {
		return nil
	}
	if err := s.publishIn(ctx, tx, t.PartnerID, events); err != nil {
		return err
	}
	if t.QuoteID == "" || t.QuoteIssuedAt.IsZero() || !account.ValidID(t.PartnerID) {
		return nil
	}
	// The line's kind, status, wallets and transactions change in place
	// (swap.MarkLine's fields, an empty one left out as the Pebble store
	// leaves it); the rest of it (its earning, which settlement may be
	// rewriting) is left as stored. from_wallet and to_wallet list it in
	// its wallets' histories (migration 18).
	var l account.Activity
	t.MarkLine(&l)
	_, err := tx.Exec(ctx, `UPDATE activity SET record = (record::jsonb || jsonb_build_object('kind', $4::text, 'status', $5::text)
			|| jsonb_strip_nulls(jsonb_build_object('fromAddress', $6::text, 'toAddress', $7::text, 'sendingTxHash', $8::text, 'receivingTxHash', $9::text)))::json,
			from_wallet = $10, to_wallet = $11
		WHERE partner_id = $1 AND created_ns = $2 AND id = $3`,
		t.PartnerID, nanos(t.QuoteIssuedAt), t.QuoteID, l.Kind, l.Status,
		orNull(l.FromAddress), orNull(l.ToAddress), orNull(l.SendingTxHash), orNull(l.ReceivingTxHash),
		orNull(account.WalletKey(l.FromAddress)), orNull(account.WalletKey(l.ToAddress)))
	return err
}

// orNull is s as a nullable parameter: NULL when empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// EachOpenSwap calls fn for every tracked swap still due a poll (not
// terminal, tracking not given up), in hash order, for trackers resuming
// after a start.
func (s *Store) EachOpenSwap(ctx context.Context, fn func(*swap.Swap) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	return s.eachOpen(ctx, "swaps", "id", func(raw []byte) (bool, error) {
		t, err := decodeSwap(raw)
		if err != nil {
			return false, err
		}
		return fn(t), nil
	})
}

// SwapByDeposit returns the tracked swap of the intents deposit to address
// (and memo), or store.ErrNotFound.
func (s *Store) SwapByDeposit(ctx context.Context, address, memo string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var id string
	err := s.pool.QueryRow(ctx, `SELECT swap_id FROM deposit_swaps WHERE address = $1 AND memo = $2`, address, memo).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: deposit swap %s: %w", address, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: deposit swap %s: %w", address, err)
	}
	return s.Swap(ctx, id)
}

func decodeOnramp(b []byte) (*onramp.Order, error) {
	var o onramp.Order
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("postgres: decode on-ramp order: %w", err)
	}
	return &o, nil
}

// OnrampOrder returns an order by uid, or store.ErrNotFound.
func (s *Store) OnrampOrder(ctx context.Context, uid string) (*onramp.Order, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	raw, err := s.rowOf(ctx, "onramp_orders", "uid", uid)
	if err != nil {
		return nil, fmt.Errorf("postgres: on-ramp order %s: %w", uid, err)
	}
	return decodeOnramp(raw)
}

// SaveOnrampOrder writes an order as it now stands in one committed
// transaction with what goes with it: the events its last transition
// publishes (to the order's partner's webhooks) and the partner's activity
// line, which, the first time it carries an earning (the order completed
// with a partner fee), enters its ecosystem's pending order. A line that
// already carries its earning (pending or settled) is left as it is. A new
// order is saved the same way, with no events.
func (s *Store) SaveOnrampOrder(ctx context.Context, o *onramp.Order, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	val, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("postgres: encode on-ramp order: %w", err)
	}
	a, line, err := orderLine(o)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO onramp_orders (uid, open, record) VALUES ($1, $2, $3)
			ON CONFLICT (uid) DO UPDATE SET open = excluded.open, record = excluded.record`,
			o.UID, !o.State.Terminal(), val); err != nil {
			return err
		}
		return s.onrampFollowers(ctx, tx, o, a, line, events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit on-ramp order %s: %w", o.UID, err)
	}
	return nil
}

// orderLine is the partner's activity line of o as it now stands, nil
// for an order without one.
func orderLine(o *onramp.Order) (*account.Activity, *store.EncodedQuote, error) {
	a := o.Activity()
	if a == nil {
		return nil, nil, nil
	}
	q, err := store.EncodeQuote(a)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: on-ramp order %s: %w", o.UID, err)
	}
	return a, &q, nil
}

// onrampFollowers writes in tx what an order's transition carries besides
// its record: the partner's activity line a (encoded as line; nil: none)
// and the events, to the order's partner's webhooks.
func (s *Store) onrampFollowers(ctx context.Context, tx pgx.Tx, o *onramp.Order, a *account.Activity, line *store.EncodedQuote, events []webhook.Event) error {
	if line == nil {
		return nil
	}
	var eco *string
	if a.Earning != nil {
		eco = &a.Earning.Ecosystem
	}
	if _, err := tx.Exec(ctx, `INSERT INTO activity (partner_id, created_ns, id, record, pending_ecosystem, ledger_seq)
		VALUES ($1, $2, $3, $4, $5, CASE WHEN $5::text IS NULL THEN NULL ELSE nextval('ledger_seq') END)
		ON CONFLICT (partner_id, created_ns, id) DO UPDATE
			SET record = excluded.record, pending_ecosystem = excluded.pending_ecosystem, ledger_seq = excluded.ledger_seq
			WHERE activity.record->'earning' IS NULL`,
		a.PartnerID, nanos(a.CreatedAt), a.ID, line.Record(), eco); err != nil {
		return err
	}
	return s.publishIn(ctx, tx, o.PartnerID, events)
}

// EachOpenOnrampOrder calls fn for every order not in a terminal state, in
// uid order, for the on-ramp desk resuming after a start.
func (s *Store) EachOpenOnrampOrder(ctx context.Context, fn func(*onramp.Order) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	return s.eachOpen(ctx, "onramp_orders", "uid", func(raw []byte) (bool, error) {
		o, err := decodeOnramp(raw)
		if err != nil {
			return false, err
		}
		return fn(o), nil
	})
}

func decodeInbound(b []byte) (*inbound.Record, error) {
	var d inbound.Record
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("postgres: decode inbound deposit: %w", err)
	}
	return &d, nil
}

func inboundKey(d *inbound.Record) string {
	return strings.ToLower(d.Deposit.Registration.TxHash.Hex())
}

// InboundDepositByHash returns the deposit registered for a step-1
// transaction, or store.ErrNotFound.
func (s *Store) InboundDepositByHash(ctx context.Context, txHash string) (*inbound.Record, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	raw, err := s.rowOf(ctx, "inbound_deposits", "tx_hash", strings.ToLower(txHash))
	if err != nil {
		return nil, fmt.Errorf("postgres: inbound deposit %s: %w", txHash, err)
	}
	return decodeInbound(raw)
}

// CreateInboundDeposit stores a newly registered deposit with its events
// (deposit.received) in one committed transaction, or returns the deposit
// already registered for that transaction (created false), on any node.
func (s *Store) CreateInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) (*inbound.Record, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	created, err := s.commitInbound(ctx, d, events, false)
	if err != nil {
		return nil, false, err
	}
	if created {
		return d, true, nil
	}
	old, err := s.InboundDepositByHash(ctx, inboundKey(d))
	return old, false, err
}

// SaveInboundDeposit records a step of a deposit with the events it
// publishes in one committed transaction.
func (s *Store) SaveInboundDeposit(ctx context.Context, d *inbound.Record, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	_, err := s.commitInbound(ctx, d, events, true)
	return err
}

// commitInbound writes d (replacing the stored one when replace, else only
// where none is) with its events, and reports whether it wrote.
func (s *Store) commitInbound(ctx context.Context, d *inbound.Record, events []webhook.Event, replace bool) (bool, error) {
	val, err := json.Marshal(d)
	if err != nil {
		return false, fmt.Errorf("postgres: encode inbound deposit: %w", err)
	}
	conflict := `DO NOTHING`
	if replace {
		conflict = `DO UPDATE SET open = excluded.open, record = excluded.record`
	}
	wrote := false
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO inbound_deposits (tx_hash, open, record) VALUES ($1, $2, $3)
			ON CONFLICT (tx_hash) `+conflict, inboundKey(d), !d.Deposit.State.Terminal(), val)
		if err != nil {
			return err
		}
		if wrote = tag.RowsAffected() == 1; !wrote {
			return nil
		}
		return s.publishIn(ctx, tx, d.PartnerID, events)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: commit inbound deposit: %w", err)
	}
	return wrote, nil
}

// EachOpenInboundDeposit calls fn for every deposit not in a terminal
// state, in hash order, for the step-2 runner resuming after a start.
func (s *Store) EachOpenInboundDeposit(ctx context.Context, fn func(*inbound.Record) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	return s.eachOpen(ctx, "inbound_deposits", "tx_hash", func(raw []byte) (bool, error) {
		d, err := decodeInbound(raw)
		if err != nil {
			return false, err
		}
		return fn(d), nil
	})
}

// SwapByQuote returns the tracked swap of quote id (the latest tracked,
// should one quote have been reported with several transactions), or
// store.ErrNotFound; the swaps_by_quote index (migration 20) serves it.
func (s *Store) SwapByQuote(ctx context.Context, quoteID string) (*swap.Swap, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM swaps WHERE record->>'quoteId' = $1
		ORDER BY (record->>'createdAt')::timestamptz DESC, id LIMIT 1`, quoteID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: swap of quote %s: %w", quoteID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: swap of quote %s: %w", quoteID, err)
	}
	return decodeSwap(raw)
}
