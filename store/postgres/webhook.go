package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// webhookColumns are the columns scanWebhook reads, in its order.
const webhookColumns = `id, partner_id, url, events, active, sealed_secret, created_ns, updated_ns`

// scanWebhook reads one webhooks row, its secret opened.
func (s *Store) scanWebhook(row pgx.Row) (*webhook.Registration, error) {
	var (
		w                webhook.Registration
		events           []string
		sealed           []byte
		created, updated int64
	)
	if err := row.Scan(&w.ID, &w.PartnerID, &w.URL, &events, &w.Active, &sealed, &created, &updated); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, store.ErrNotFound
		}
		return nil, fmt.Errorf("postgres: read webhook: %w", err)
	}
	secret, err := s.seal.Open(w.PartnerID, w.ID, sealed)
	if err != nil {
		return nil, fmt.Errorf("postgres: webhook %s: %w", w.ID, err)
	}
	w.Events, w.Secret = events, secret
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &w, nil
}

// lockPartnerWebhooks holds, until tx ends, a lock on the partner's set of
// webhooks (a transaction advisory lock on its ID: the partner may have no
// row of its own to lock), so that the count and the insert of
// CreateWebhook are one step on every node.
func lockPartnerWebhooks(ctx context.Context, tx pgx.Tx, partnerID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('webhooks/' || $1, 0))`, partnerID)
	if err != nil {
		return fmt.Errorf("postgres: lock the webhooks of %s: %w", partnerID, err)
	}
	return nil
}

// CreateWebhook stores a new registration, its secret sealed, in one
// committed transaction. An empty w.ID is generated; CreatedAt and
// UpdatedAt are set to now and w is updated in place. The caller has
// validated URL, events and secret. It fails with webhook.ErrLimit when the
// partner already has webhook.MaxPerPartner webhooks (counted and inserted
// under the partner's lock, so two concurrent registrations, on any nodes,
// cannot both see room for the tenth), and with store.ErrExists when
// the ID is taken.
func (s *Store) CreateWebhook(ctx context.Context, w *webhook.Registration) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(w.PartnerID) {
		return fmt.Errorf("postgres: webhook partner id %q invalid", w.PartnerID)
	}
	if w.ID == "" {
		id, err := webhook.NewID()
		if err != nil {
			return err
		}
		w.ID = id
	} else if !account.ValidID(w.ID) {
		return fmt.Errorf("postgres: webhook id %q invalid", w.ID)
	}
	sealed, err := s.seal.Seal(w.PartnerID, w.ID, w.Secret)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockPartnerWebhooks(ctx, tx, w.PartnerID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE partner_id = $1`, w.PartnerID).Scan(&n); err != nil {
			return fmt.Errorf("postgres: count webhooks: %w", err)
		}
		if n >= webhook.MaxPerPartner {
			return fmt.Errorf("%w: partner %s has %d", webhook.ErrLimit, w.PartnerID, n)
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
			w.ID, w.PartnerID, w.URL, w.Events, w.Active, sealed, nanos(now))
		if uniqueViolation(err) != "" {
			return fmt.Errorf("%w: webhook %s", store.ErrExists, w.ID)
		}
		if err != nil {
			return fmt.Errorf("postgres: insert webhook: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.CreatedAt, w.UpdatedAt = now, now
	return nil
}

// Webhooks returns a partner's webhooks, oldest first (ties by ID).
func (s *Store) Webhooks(ctx context.Context, partnerID string) ([]*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(partnerID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE partner_id = $1
		ORDER BY created_ns, id`, partnerID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list webhooks: %w", err)
	}
	defer rows.Close()
	var out []*webhook.Registration
	for rows.Next() {
		w, err := s.scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list webhooks: %w", err)
	}
	return out, nil
}

// Webhook returns one of a partner's webhooks. Another partner's webhook is
// store.ErrNotFound, exactly like a missing one, so IDs cannot be
// probed.
//
// Unlike the Pebble store it keeps no cache of registrations: another node
// may delete one, and a cache here would go on delivering to it.
func (s *Store) Webhook(ctx context.Context, partnerID, id string) (*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(partnerID) || !account.ValidID(id) {
		return nil, store.ErrNotFound
	}
	return s.scanWebhook(s.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1 AND partner_id = $2`, id, partnerID))
}

// WebhookByID returns a webhook by ID alone, for the delivery pool.
func (s *Store) WebhookByID(ctx context.Context, id string) (*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(id) {
		return nil, store.ErrNotFound
	}
	return s.scanWebhook(s.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1`, id))
}

// DeleteWebhook removes a partner's webhook and its delivery history in one
// committed transaction. Outbox entries still queued for it are dropped by
// the delivery pool when they come due (it finds no webhook), so the
// delete needs no scan of the outbox. Another partner's webhook is
// store.ErrNotFound.
func (s *Store) DeleteWebhook(ctx context.Context, partnerID, id string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(partnerID) || !account.ValidID(id) {
		return store.ErrNotFound
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE id = $1 AND partner_id = $2`, id, partnerID)
		if err != nil {
			return fmt.Errorf("postgres: delete webhook: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.Exec(ctx, `DELETE FROM deliveries WHERE webhook_id = $1`, id); err != nil {
			return fmt.Errorf("postgres: delete webhook's deliveries: %w", err)
		}
		return nil
	})
}
