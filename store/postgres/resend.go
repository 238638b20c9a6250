package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// ResendDelivery owes one of the partner's failed deliveries again, with
// the Pebble store's promises (pebblestore.Store.ResendDelivery): a dead
// one gets a new outbox row, a retrying one's row not leased and not due
// within webhook.ResendMargin is brought forward to now; a pending or
// delivered one is left as it is. The delivery's history row is locked
// from the read to the write, so two resends at once, on any node, owe it
// once.
func (s *Store) ResendDelivery(ctx context.Context, partnerID, webhookID, deliveryID string, now time.Time) (*webhook.OutboxEntry, *webhook.DeliveryRecord, error) {
	if _, err := s.Webhook(ctx, partnerID, webhookID); err != nil {
		return nil, nil, err
	}
	now = now.UTC()
	var (
		out *webhook.OutboxEntry
		rec *webhook.DeliveryRecord
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, rec = nil, nil
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT record FROM deliveries WHERE delivery_id = $1 AND webhook_id = $2 FOR UPDATE`,
			deliveryID, webhookID).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("postgres: resend: read delivery: %w", err)
		}
		if rec, err = decodeDelivery(raw); err != nil {
			return err
		}
		var e *webhook.OutboxEntry
		switch rec.State {
		case webhook.DeliveryDead:
			if len(rec.Body) == 0 {
				return store.ErrNotResendable
			}
			e = &webhook.OutboxEntry{DeliveryID: rec.ID, WebhookID: webhookID, PartnerID: partnerID, Event: rec.Event,
				Body: rec.Body, Attempt: rec.Attempt, CreatedAt: rec.CreatedAt, Due: now}
			val, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("postgres: encode outbox entry: %w", err)
			}
			tag, err := tx.Exec(ctx, `INSERT INTO outbox (delivery_id, due_ns, webhook_id, entry) VALUES ($1, $2, $3, $4)
				ON CONFLICT (delivery_id) DO NOTHING`, e.DeliveryID, nanos(now), webhookID, val)
			if err != nil {
				return fmt.Errorf("postgres: resend: %w", err)
			}
			if tag.RowsAffected() == 0 {
				return nil
			}
		case webhook.DeliveryRetrying:
			var entry []byte
			err := tx.QueryRow(ctx, `SELECT entry FROM outbox WHERE delivery_id = $1 AND due_ns > $2
				AND (lease_owner IS NULL OR lease_until <= clock_timestamp()) FOR UPDATE`,
				deliveryID, nanos(now.Add(webhook.ResendMargin))).Scan(&entry)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("postgres: resend: read outbox: %w", err)
			}
			if e, err = decodeOutbox(deliveryID, entry); err != nil {
				return err
			}
			e.Due = now
			val, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("postgres: encode outbox entry: %w", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE outbox SET due_ns = $2, entry = $3, lease_owner = NULL, lease_until = NULL
				WHERE delivery_id = $1`, deliveryID, nanos(now), val); err != nil {
				return fmt.Errorf("postgres: resend: %w", err)
			}
		default:
			return nil
		}
		rec.State, rec.UpdatedAt, rec.NextAttemptAt = webhook.DeliveryPending, now, time.Time{}
		val, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("postgres: encode delivery record: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE deliveries SET record = $2 WHERE delivery_id = $1`, deliveryID, val); err != nil {
			return fmt.Errorf("postgres: resend: %w", err)
		}
		out = e
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, rec, nil
}
