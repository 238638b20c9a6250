package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// The outbox (migrations/0005_outbox.sql) is shared by every node: each
// delivers what it claims. An entry is claimed, when a scan of due
// entries (DueDeliveries) or a read by key (OutboxEntries) hands it out,
// with a lease of Options.OutboxLease on the database's clock: rows are
// picked FOR UPDATE SKIP LOCKED among those no other node's live lease
// holds, so two nodes scanning at once never both take one entry, and
// none takes an entry another holds until that lease lapses (its node
// died, or stalled past it); then it is taken over and delivered again,
// which the at-least-once contract allows (receivers deduplicate). A
// node's own rescans renew the leases of the entries it still holds. In a
// cluster (Options.LeaseOnEnqueue) the node that commits an entry holds
// its lease from the commit on, since its delivery pool takes the entries
// it commits directly, without a claim; otherwise another node's scan
// could deliver the same entry at the same time. An entry is removed, or moved to its retry time with its lease released,
// only in the transaction that records its attempt's outcome
// (FinishAttempts), so a crash mid-attempt leaves it in place.
//
// Every write here commits with synchronous_commit on, and PostgreSQL
// shows a synchronously committed transaction to other sessions only once
// its commit record is flushed: whatever a scan hands out is durable.

// DefaultOutboxLease is Options.OutboxLease's default: well past a
// delivery attempt's timeout and the delivery pool's rescans, which renew
// the leases of the entries a node holds.
const DefaultOutboxLease = time.Minute

// claimChunk is how many entries one claim takes.
const claimChunk = 64

// claimReturning is what a claim returns of each entry.
const claimReturning = `RETURNING o.delivery_id, o.due_ns, o.webhook_id, o.entry, c.mine`

// claimDueSQL claims, in due order, up to $4 entries due in ((due, id) >
// ($1, $6)) and at or before $2, that no other node's live lease holds;
// mine says the entry was already this node's (a renewal).
const claimDueSQL = `WITH c AS (
		SELECT delivery_id, coalesce(lease_owner = $3 AND lease_until > clock_timestamp(), false) AS mine
		FROM outbox
		WHERE (due_ns, delivery_id) > ($1, $6) AND due_ns <= $2
			AND (lease_until IS NULL OR lease_until <= clock_timestamp() OR lease_owner = $3)
		ORDER BY due_ns, delivery_id
		LIMIT $4
		FOR UPDATE SKIP LOCKED)
	UPDATE outbox o SET lease_owner = $3, lease_until = clock_timestamp() + $5 * interval '1 microsecond'
	FROM c WHERE o.delivery_id = c.delivery_id ` + claimReturning

// claimKeysSQL claims the entries named by ($1, $2) (delivery ID and due
// time) that no other node's live lease holds.
const claimKeysSQL = `WITH c AS (
		SELECT o.delivery_id, coalesce(o.lease_owner = $3 AND o.lease_until > clock_timestamp(), false) AS mine
		FROM outbox o JOIN unnest($1::text[], $2::bigint[]) AS k(id, due) ON o.delivery_id = k.id AND o.due_ns = k.due
		WHERE o.lease_until IS NULL OR o.lease_until <= clock_timestamp() OR o.lease_owner = $3
		FOR UPDATE OF o SKIP LOCKED)
	UPDATE outbox o SET lease_owner = $3, lease_until = clock_timestamp() + $4 * interval '1 microsecond'
	FROM c WHERE o.delivery_id = c.delivery_id ` + claimReturning

// claimed is an entry a claim returned.
type claimed struct {
	id, webhookID string
	due           int64
	entry         []byte
	mine          bool
}

func scanClaims(rows pgx.Rows) ([]claimed, error) {
	defer rows.Close()
	var out []claimed
	for rows.Next() {
		var c claimed
		if err := rows.Scan(&c.id, &c.due, &c.webhookID, &c.entry, &c.mine); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// releaseLeases gives back the leases this node took on ids and did not
// use, so that another node need not wait for them to lapse.
func (s *Store) releaseLeases(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	// Locked in lock order (lockorder.go) before they are updated.
	_, err := s.pool.Exec(ctx, `UPDATE outbox SET lease_owner = NULL, lease_until = NULL
		WHERE delivery_id IN (SELECT delivery_id FROM outbox WHERE delivery_id = ANY($1) AND lease_owner = $2
			ORDER BY delivery_id, due_ns FOR UPDATE)`, ids, s.owner)
	if err != nil {
		return fmt.Errorf("postgres: release outbox leases: %w", err)
	}
	return nil
}

func decodeOutbox(id string, b []byte) (*webhook.OutboxEntry, error) {
	var e webhook.OutboxEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("postgres: decode outbox entry %s: %w", id, err)
	}
	return &e, nil
}

func decodeDelivery(b []byte) (*webhook.DeliveryRecord, error) {
	var r webhook.DeliveryRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("postgres: decode delivery record: %w", err)
	}
	return &r, nil
}

// enqueue adds in tx one outbox entry of event for w, and its pending
// history row.
func (s *Store) enqueue(ctx context.Context, tx pgx.Tx, w *webhook.Registration, event string, body []byte, now time.Time) (*webhook.OutboxEntry, error) {
	id, err := webhook.NewDeliveryID()
	if err != nil {
		return nil, err
	}
	e := &webhook.OutboxEntry{DeliveryID: id, WebhookID: w.ID, PartnerID: w.PartnerID, Event: event,
		Body: body, CreatedAt: now, Due: now}
	val, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode outbox entry: %w", err)
	}
	rec, err := json.Marshal(webhook.DeliveryRecord{ID: id, WebhookID: w.ID, Event: event,
		State: webhook.DeliveryPending, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		return nil, fmt.Errorf("postgres: encode delivery record: %w", err)
	}
	// With LeaseOnEnqueue the entry is this node's from the start: the
	// node's pool, which is handed it directly or wakes to scan for it,
	// delivers it, and no other node's scan delivers it at the same time.
	var leaseOwner *string
	if s.leaseOnEnqueue {
		leaseOwner = &s.owner
	}
	if _, err := tx.Exec(ctx, `INSERT INTO outbox (delivery_id, due_ns, webhook_id, entry, lease_owner, lease_until)
		VALUES ($1, $2, $3, $4, $5, CASE WHEN $5::text IS NULL THEN NULL ELSE clock_timestamp() + $6 * interval '1 microsecond' END)`,
		id, nanos(e.Due), w.ID, val, leaseOwner, s.lease.Microseconds()); err != nil {
		return nil, fmt.Errorf("postgres: enqueue delivery: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO deliveries (delivery_id, webhook_id, created_ns, record) VALUES ($1, $2, $3, $4)`,
		id, w.ID, nanos(now), rec); err != nil {
		return nil, fmt.Errorf("postgres: write delivery record: %w", err)
	}
	return e, nil
}

// enqueueEvent adds in tx one outbox entry (and a pending history row)
// for every active webhook of the partner subscribed to ev.Name, read in
// tx, so that the event is exactly as durable as the state change tx
// commits with it.
func (s *Store) enqueueEvent(ctx context.Context, tx pgx.Tx, partnerID string, ev webhook.Event) ([]*webhook.OutboxEntry, error) {
	if !account.ValidID(partnerID) {
		return nil, fmt.Errorf("postgres: enqueue event: partner id %q invalid", partnerID)
	}
	body, err := ev.Body()
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE partner_id = $1 ORDER BY created_ns, id`, partnerID)
	if err != nil {
		return nil, fmt.Errorf("postgres: webhooks of %s: %w", partnerID, err)
	}
	var hooks []*webhook.Registration
	for rows.Next() {
		w, err := s.scanWebhook(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if w.Subscribes(ev.Name) {
			hooks = append(hooks, w)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: webhooks of %s: %w", partnerID, err)
	}
	now := s.now().UTC()
	var out []*webhook.OutboxEntry
	for _, w := range hooks {
		e, err := s.enqueue(ctx, tx, w, ev.Name, body, now)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Publish enqueues ev for every active webhook of the partner subscribed
// to ev.Name, in one committed transaction, and returns the entries it
// committed (nil when no webhook subscribes).
func (s *Store) Publish(ctx context.Context, partnerID string, ev webhook.Event) ([]*webhook.OutboxEntry, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var out []*webhook.OutboxEntry
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.enqueueEvent(ctx, tx, partnerID, ev)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: publish event: %w", err)
	}
	return out, nil
}

// PublishTo enqueues ev for webhook w alone, whatever its subscriptions,
// in a committed transaction of its own, and returns the entry (its
// DeliveryID is the delivery's). It serves test deliveries.
func (s *Store) PublishTo(ctx context.Context, w *webhook.Registration, ev webhook.Event) (*webhook.OutboxEntry, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	body, err := ev.Body()
	if err != nil {
		return nil, err
	}
	var e *webhook.OutboxEntry
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		e, err = s.enqueue(ctx, tx, w, ev.Name, body, s.now().UTC())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: commit test delivery: %w", err)
	}
	return e, nil
}

// DueDeliveries claims outbox entries due at or after from and at or
// before now, earliest first, and calls fn with each until fn returns
// false (see the lease rules above: an entry another node holds is not
// read). The zero from reads from the start of the outbox. Entries that
// skip reports true for (nil skips none) are passed over without decoding
// their value: skip is given the entry's due time, delivery ID and webhook
// ID; the byte slices are valid only during the call. The leases taken on
// entries skipped, or left unread when fn stopped, are given back unless
// the node held them already. Every entry handed out is durable.
func (s *Store) DueDeliveries(ctx context.Context, from, now time.Time, skip func(due time.Time, deliveryID, webhookID []byte) bool, fn func(*webhook.OutboxEntry) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	afterNs, afterID := int64(math.MinInt64), ""
	if !from.IsZero() {
		afterNs = nanos(from)
	}
	var unused []string
	defer func() { _ = s.releaseLeases(context.WithoutCancel(ctx), unused) }()
	for {
		rows, err := s.pool.Query(ctx, claimDueSQL, afterNs, nanos(now), s.owner, claimChunk, s.lease.Microseconds(), afterID)
		if err != nil {
			return fmt.Errorf("postgres: claim due deliveries: %w", err)
		}
		cs, err := scanClaims(rows)
		if err != nil {
			return fmt.Errorf("postgres: claim due deliveries: %w", err)
		}
		slices.SortFunc(cs, func(a, b claimed) int {
			if a.due != b.due {
				return compareInt(a.due, b.due)
			}
			return compareString(a.id, b.id)
		})
		for i, c := range cs {
			afterNs, afterID = c.due, c.id
			if skip != nil && skip(fromNanos(c.due), []byte(c.id), []byte(c.webhookID)) {
				if !c.mine {
					unused = append(unused, c.id)
				}
				continue
			}
			e, err := decodeOutbox(c.id, c.entry)
			if err != nil {
				return err
			}
			if !fn(e) {
				for _, r := range cs[i+1:] {
					if !r.mine {
						unused = append(unused, r.id)
					}
				}
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(cs) < claimChunk {
			return nil
		}
	}
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// OutboxEntries reads again, and claims, entries scans saw and left in
// place, by their keys, in one statement, calling fn with each key's index
// and its entry, nil when it is no longer there at that key or another
// node's live lease holds it (that node delivers it).
func (s *Store) OutboxEntries(ctx context.Context, keys []store.OutboxKey, fn func(i int, e *webhook.OutboxEntry)) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	ids, dues := make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		ids[i], dues[i] = k.DeliveryID, nanos(k.Due)
	}
	rows, err := s.pool.Query(ctx, claimKeysSQL, ids, dues, s.owner, s.lease.Microseconds())
	if err != nil {
		return fmt.Errorf("postgres: read outbox entries: %w", err)
	}
	cs, err := scanClaims(rows)
	if err != nil {
		return fmt.Errorf("postgres: read outbox entries: %w", err)
	}
	got := make(map[string]claimed, len(cs))
	for _, c := range cs {
		got[c.id] = c
	}
	for i, k := range keys {
		c, ok := got[k.DeliveryID]
		if !ok {
			fn(i, nil)
			continue
		}
		e, err := decodeOutbox(c.id, c.entry)
		if err != nil {
			return err
		}
		fn(i, e)
	}
	return nil
}

// NextDue returns the due time of the earliest outbox entry due after
// after, and false when there is none: the next retry coming due, for a
// caller that wants to scan then rather than poll.
func (s *Store) NextDue(ctx context.Context, after time.Time) (time.Time, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return time.Time{}, false, err
	}
	var due *int64
	if err := s.pool.QueryRow(ctx, `SELECT min(due_ns) FROM outbox WHERE due_ns > $1`, nanos(after)).Scan(&due); err != nil {
		return time.Time{}, false, fmt.Errorf("postgres: next due delivery: %w", err)
	}
	if due == nil {
		return time.Time{}, false, nil
	}
	return fromNanos(*due), true, nil
}

// FinishAttempts records the outcomes of attempts in one committed
// transaction. For each outcome the outbox entry is removed or, when
// RetryAt is not zero, moved to RetryAt with its Attempt set to the
// record's and its lease released, and the history row is written, its
// attempt log being the stored row's with this attempt appended
// (webhook.AppendAttempt, sent at the outcome's At, or now when that is
// zero; the outcome's own Attempts are ignored); a webhook deleted
// meanwhile gets no history row.
//
// An outcome whose entry is no longer at the key it was claimed at (its
// due time), or that another node's live lease now holds (this node's
// lapsed and was taken over), is left out: that node's attempt is the one
// recorded. The transaction is atomic: after an error none is recorded and
// every entry is still in the outbox as it was. Entries recorded are
// updated in place only after the commit; the outcomes' records are not
// modified.
func (s *Store) FinishAttempts(ctx context.Context, outs []webhook.AttemptOutcome) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(outs) == 0 {
		return nil
	}
	next := make([]webhook.OutboxEntry, len(outs))
	done := make([]bool, len(outs))
	updatedAt := s.now().UTC()
	order := outcomeOrder(outs) // lockorder.go
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		clear(done)
		alive := make(map[string]bool, 8)
		for _, i := range order {
			o := outs[i]
			e := o.Entry
			next[i] = *e
			const held = ` AND (lease_owner IS NULL OR lease_owner = $3 OR lease_until <= clock_timestamp())`
			var (
				tag pgconn.CommandTag
				err error
			)
			if o.RetryAt.IsZero() {
				tag, err = tx.Exec(ctx, `DELETE FROM outbox WHERE delivery_id = $1 AND due_ns = $2`+held,
					e.DeliveryID, nanos(e.Due), s.owner)
			} else {
				n := &next[i]
				n.Attempt, n.Due = o.Record.Attempt, o.RetryAt.UTC()
				val, merr := json.Marshal(n)
				if merr != nil {
					return fmt.Errorf("postgres: encode outbox entry: %w", merr)
				}
				tag, err = tx.Exec(ctx, `UPDATE outbox SET due_ns = $4, entry = $5, lease_owner = NULL, lease_until = NULL
					WHERE delivery_id = $1 AND due_ns = $2`+held, e.DeliveryID, nanos(e.Due), s.owner, nanos(n.Due), val)
			}
			if err != nil {
				return fmt.Errorf("postgres: update outbox entry: %w", err)
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			done[i] = true
			ok, seen := alive[e.WebhookID]
			if !seen {
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = $1)`, e.WebhookID).Scan(&ok); err != nil {
					return fmt.Errorf("postgres: webhook check: %w", err)
				}
				alive[e.WebhookID] = ok
			}
			if !ok {
				continue
			}
			rec := *o.Record
			rec.ID, rec.WebhookID, rec.Event, rec.CreatedAt = e.DeliveryID, e.WebhookID, e.Event, e.CreatedAt
			rec.UpdatedAt = updatedAt
			var log []webhook.Attempt
			if e.Attempt > 0 {
				var raw []byte
				switch err := tx.QueryRow(ctx, `SELECT record FROM deliveries WHERE delivery_id = $1`, e.DeliveryID).Scan(&raw); {
				case errors.Is(err, pgx.ErrNoRows):
				case err != nil:
					return fmt.Errorf("postgres: read delivery record: %w", err)
				default:
					prev, err := decodeDelivery(raw)
					if err != nil {
						return err
					}
					log = prev.Attempts
				}
			}
			at := o.At
			if at.IsZero() {
				at = updatedAt
			}
			rec.Attempts = webhook.AppendAttempt(log, rec.LatestAttempt(at.UTC()))
			val, err := json.Marshal(rec)
			if err != nil {
				return fmt.Errorf("postgres: encode delivery record: %w", err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO deliveries (delivery_id, webhook_id, created_ns, record) VALUES ($1, $2, $3, $4)
				ON CONFLICT (delivery_id) DO UPDATE SET record = excluded.record`,
				rec.ID, rec.WebhookID, nanos(rec.CreatedAt), val); err != nil {
				return fmt.Errorf("postgres: write delivery record: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: commit %d delivery outcomes: %w", len(outs), err)
	}
	for i, o := range outs {
		if done[i] {
			*o.Entry = next[i]
		}
	}
	return nil
}

// DropDelivery removes an outbox entry without recording anything, for
// deliveries whose webhook was deleted or deactivated.
func (s *Store) DropDelivery(ctx context.Context, e *webhook.OutboxEntry) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM outbox WHERE delivery_id = $1 AND due_ns = $2`, e.DeliveryID, nanos(e.Due)); err != nil {
		return fmt.Errorf("postgres: drop delivery: %w", err)
	}
	return nil
}

// Deliveries returns up to limit history rows of one of the partner's
// webhooks, newest first. Another partner's webhook is
// store.ErrNotFound.
func (s *Store) Deliveries(ctx context.Context, partnerID, webhookID string, limit int) ([]*webhook.DeliveryRecord, error) {
	if _, err := s.Webhook(ctx, partnerID, webhookID); err != nil {
		return nil, err
	}
	out := []*webhook.DeliveryRecord{}
	if limit <= 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT record FROM deliveries WHERE webhook_id = $1
		ORDER BY created_ns DESC, delivery_id DESC LIMIT $2`, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: list deliveries: %w", err)
		}
		rec, err := decodeDelivery(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", err)
	}
	return out, nil
}

// CountOutbox counts the deliveries still owed: due, whose next attempt is
// due at now or before, and scheduled, due later (retries waiting out their
// backoff), leased or not. It reads at most limit (positive) entries, the
// earliest due: past it the counts stop, so that a metrics scrape of a huge
// backlog costs bounded work; due plus scheduled equal to limit means at
// least that many.
func (s *Store) CountOutbox(ctx context.Context, now time.Time, limit int) (due, scheduled int, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, 0, err
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE due_ns <= $1), count(*) FILTER (WHERE due_ns > $1)
		FROM (SELECT due_ns FROM outbox ORDER BY due_ns LIMIT $2) x`, nanos(now), max(limit, 0)).Scan(&due, &scheduled); err != nil {
		return 0, 0, fmt.Errorf("postgres: count outbox: %w", err)
	}
	return due, scheduled, nil
}
