package pebblestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// maxResendScan bounds how many of a webhook's history rows, newest first,
// a resend looks through for its delivery: far more than the 100 the
// delivery log lists.
const maxResendScan = 10_000

// ResendDelivery owes one of the partner's deliveries again, at now, with
// the payload and delivery ID of the original (so the same signature),
// and returns the entry it put in the outbox (nil when it put none) and
// the delivery's history row as it now stands. Only a failed delivery is
// resent: a dead one gets a new outbox entry, one more attempt than it
// had; a retrying one's waiting entry is brought forward to now, unless it
// is due within webhook.ResendMargin anyway. A pending or delivered one is
// left as it is, so that resending twice sends once. A missing webhook or
// delivery, or another partner's, is store.ErrNotFound.
func (s *Store) ResendDelivery(ctx context.Context, partnerID, webhookID, deliveryID string, now time.Time) (*webhook.OutboxEntry, *webhook.DeliveryRecord, error) {
	if _, err := s.Webhook(ctx, partnerID, webhookID); err != nil {
		return nil, nil, err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	key, rec, err := s.findDelivery(webhookID, deliveryID)
	if err != nil {
		return nil, nil, err
	}
	now = now.UTC()
	var e *webhook.OutboxEntry
	b := s.db.NewBatch()
	defer b.Close()
	switch rec.State {
	case webhook.DeliveryDead:
		if len(rec.Body) == 0 {
			return nil, rec, store.ErrNotResendable
		}
		e = &webhook.OutboxEntry{DeliveryID: rec.ID, WebhookID: webhookID, PartnerID: partnerID, Event: rec.Event,
			Body: rec.Body, Attempt: rec.Attempt, CreatedAt: rec.CreatedAt, Due: now}
	case webhook.DeliveryRetrying:
		if rec.NextAttemptAt.IsZero() || rec.NextAttemptAt.Before(now.Add(webhook.ResendMargin)) {
			return nil, rec, nil
		}
		val, err := s.get(outboxKey(rec.NextAttemptAt, rec.ID))
		if errors.Is(err, store.ErrNotFound) {
			return nil, rec, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("pebblestore: resend: %w", err)
		}
		if e, err = decodeOutbox(outboxKey(rec.NextAttemptAt, rec.ID), val); err != nil {
			return nil, nil, err
		}
		if err := b.Delete(outboxKey(e.Due, e.DeliveryID), nil); err != nil {
			return nil, nil, fmt.Errorf("pebblestore: resend: %w", err)
		}
		e.Due = now
	default:
		return nil, rec, nil
	}
	val, err := json.Marshal(outboxRecord{V: 1, OutboxEntry: *e})
	if err != nil {
		return nil, nil, fmt.Errorf("pebblestore: encode outbox entry: %w", err)
	}
	if err := b.Set(outboxKey(e.Due, e.DeliveryID), val, nil); err != nil {
		return nil, nil, fmt.Errorf("pebblestore: resend: %w", err)
	}
	rec.State, rec.UpdatedAt, rec.NextAttemptAt = webhook.DeliveryPending, now, time.Time{}
	recVal, err := json.Marshal(deliveryRecord{V: deliveryVersion, DeliveryRecord: *rec})
	if err != nil {
		return nil, nil, fmt.Errorf("pebblestore: encode delivery record: %w", err)
	}
	if err := b.Set(key, recVal, nil); err != nil {
		return nil, nil, fmt.Errorf("pebblestore: resend: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, nil, fmt.Errorf("pebblestore: commit resend: %w", err)
	}
	return e, rec, nil
}

// findDelivery looks through the webhook's newest maxResendScan history
// rows for a delivery.
func (s *Store) findDelivery(webhookID, deliveryID string) ([]byte, *webhook.DeliveryRecord, error) {
	prefix := deliveryWebhookPrefix(webhookID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, nil, fmt.Errorf("pebblestore: delivery iterator: %w", err)
	}
	defer it.Close()
	n := 0
	for ok := it.Last(); ok && n < maxResendScan; ok = it.Prev() {
		n++
		k := it.Key()
		if len(k) < len(prefix)+8 || !bytes.Equal(k[len(prefix)+8:], []byte(deliveryID)) {
			continue
		}
		rec, err := decodeDelivery(it.Value())
		if err != nil {
			return nil, nil, err
		}
		return bytes.Clone(k), rec, nil
	}
	if err := it.Error(); err != nil {
		return nil, nil, fmt.Errorf("pebblestore: find delivery: %w", err)
	}
	return nil, nil, store.ErrNotFound
}
