package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Fenced transitions, for the nodes of a cluster. Each open swap, on-ramp
// order and multi-step deposit is worked on by the node that owns it, but
// while the cluster's topology changes two nodes may briefly both believe
// they do and both move one record. Each of these writes is therefore
// conditional: it replaces the stored record only while the stored record
// is still prev, the one its writer read and moved on from (compared as
// jsonb, so the encoding's spelling does not matter), in the same
// transaction that writes the events and the activity line. Of two nodes
// that read one state and both move it, one commits and the other gets
// store.ErrStale with nothing written: no event is published twice
// for one transition and no activity line is written twice.

// SaveSwapFrom is SaveSwap fenced by prev, the swap as its writer read it.
func (s *Store) SaveSwapFrom(ctx context.Context, prev, t *swap.Swap, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	was, val, err := encodePair(prev, t)
	if err != nil {
		return fmt.Errorf("postgres: encode swap %s: %w", t.ID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := fencedUpdate(ctx, tx, `UPDATE swaps SET open = $2, record = $3 WHERE id = $1 AND record = $4::jsonb`,
			swap.NormalizeHash(t.ID), swapOpen(t), val, was); err != nil {
			return err
		}
		return s.swapFollowers(ctx, tx, t, events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit swap %s: %w", t.ID, err)
	}
	return nil
}

// SaveOnrampOrderFrom is SaveOnrampOrder fenced by prev, the order as its
// writer read it.
func (s *Store) SaveOnrampOrderFrom(ctx context.Context, prev, o *onramp.Order, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	was, val, err := encodePair(prev, o)
	if err != nil {
		return fmt.Errorf("postgres: encode on-ramp order %s: %w", o.UID, err)
	}
	a, line, err := orderLine(o)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := fencedUpdate(ctx, tx, `UPDATE onramp_orders SET open = $2, record = $3 WHERE uid = $1 AND record = $4::jsonb`,
			o.UID, !o.State.Terminal(), val, was); err != nil {
			return err
		}
		return s.onrampFollowers(ctx, tx, o, a, line, events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit on-ramp order %s: %w", o.UID, err)
	}
	return nil
}

// SaveInboundDepositFrom is SaveInboundDeposit fenced by prev, the deposit
// as its writer read it.
func (s *Store) SaveInboundDepositFrom(ctx context.Context, prev, d *inbound.Record, events []webhook.Event) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	was, val, err := encodePair(prev, d)
	if err != nil {
		return fmt.Errorf("postgres: encode inbound deposit: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := fencedUpdate(ctx, tx, `UPDATE inbound_deposits SET open = $2, record = $3 WHERE tx_hash = $1 AND record = $4::jsonb`,
			inboundKey(d), !d.Deposit.State.Terminal(), val, was); err != nil {
			return err
		}
		return s.publishIn(ctx, tx, d.PartnerID, events)
	})
	if err != nil {
		return fmt.Errorf("postgres: commit inbound deposit: %w", err)
	}
	return nil
}

// encodePair encodes the record read and the record to write.
func encodePair(prev, next any) (was, val []byte, err error) {
	if was, err = json.Marshal(prev); err != nil {
		return nil, nil, err
	}
	if val, err = json.Marshal(next); err != nil {
		return nil, nil, err
	}
	return was, val, nil
}

// fencedUpdate runs a conditional update of one row and fails with
// store.ErrStale when it changed none (the row is not the one read,
// or is gone), which rolls the transaction back.
func fencedUpdate(ctx context.Context, tx pgx.Tx, sql string, args ...any) error {
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return store.ErrStale
	}
	return nil
}
