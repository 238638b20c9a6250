package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Outbox key families (see the package comment):
//
//	outbox/<due:8><deliveryID>                 a delivery still owed, ordered by the
//	                                           time its next attempt is due
//	delivery/<webhookID>/<ts:8><deliveryID>    the delivery's history row, ts being
//	                                           its creation time; updated after
//	                                           every attempt, whose outcome joins
//	                                           the row's attempt log
//
// An event enters the outbox in the same batch as the state change that
// caused it, so a crash can lose neither one without the other. The delivery
// pool removes an entry only in the batch that records its outcome, so a
// crash mid-attempt leaves the entry in place and the attempt is repeated
// (at-least-once; receivers deduplicate, as the specification says). It
// reads entries only through DueDeliveries, which hands out none before it
// is on disk, so nothing is delivered that a crash could take back.
const (
	prefixOutbox   = "outbox/"
	prefixDelivery = "delivery/"
)

// outboxRecord is the stored encoding of an outbox entry: the entry's own
// JSON fields and the record version.
type outboxRecord struct {
	V int `json:"v"`
	webhook.OutboxEntry
}

// deliveryRecord is the stored encoding of a delivery history row: the row's
// own JSON fields and the record version. Version 2 adds the attempt log
// ("attempts"); a version 1 row, written before attempts were logged, is
// read with a log of its latest attempt alone, sent at its updatedAt, since
// the earlier ones were never kept.
type deliveryRecord struct {
	V int `json:"v"`
	webhook.DeliveryRecord
}

// deliveryVersion is the version of the delivery rows this build writes.
const deliveryVersion = 2

func decodeDelivery(b []byte) (*webhook.DeliveryRecord, error) {
	var rec deliveryRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("pebblestore: decode delivery record: %w", err)
	}
	switch rec.V {
	case 1:
		rec.Attempts = nil
		if rec.Attempt > 0 {
			rec.Attempts = []webhook.Attempt{rec.LatestAttempt(rec.UpdatedAt)}
		}
	case deliveryVersion:
	default:
		return nil, fmt.Errorf("pebblestore: delivery record version %d unknown", rec.V)
	}
	return &rec.DeliveryRecord, nil
}

func outboxKey(due time.Time, deliveryID string) []byte {
	k := make([]byte, 0, len(prefixOutbox)+8+len(deliveryID))
	k = append(k, prefixOutbox...)
	k = binary.BigEndian.AppendUint64(k, uint64(due.UnixNano()))
	return append(k, deliveryID...)
}

// outboxDue is the due time in an outbox key at least 8 bytes past its
// prefix.
func outboxDue(key []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(key[len(prefixOutbox):]))).UTC()
}

func deliveryWebhookPrefix(webhookID string) string { return prefixDelivery + webhookID + "/" }

func deliveryKey(webhookID string, createdAt time.Time, deliveryID string) []byte {
	p := deliveryWebhookPrefix(webhookID)
	k := make([]byte, 0, len(p)+8+len(deliveryID))
	k = append(k, p...)
	k = binary.BigEndian.AppendUint64(k, uint64(createdAt.UnixNano()))
	return append(k, deliveryID...)
}

// EnqueueEvent adds to b one outbox entry (and a pending history row) for
// every active webhook of the partner subscribed to ev.Name. Event sources
// call it with the batch that records the state change and commit that batch
// with pebble.Sync, which makes the event exactly as durable as the change;
// afterwards they wake the delivery pool so that delivery does not wait for
// its periodic scan. Webhooks are read from the committed state, not from b.
func (s *Store) EnqueueEvent(b *pebble.Batch, partnerID string, ev webhook.Event) error {
	_, err := s.enqueueEvent(b, partnerID, ev)
	return err
}

func (s *Store) enqueueEvent(b *pebble.Batch, partnerID string, ev webhook.Event) ([]*webhook.OutboxEntry, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	if !account.ValidID(partnerID) {
		return nil, fmt.Errorf("pebblestore: enqueue event: partner id %q invalid", partnerID)
	}
	body, err := ev.Body()
	if err != nil {
		return nil, err
	}
	hooks, err := s.listWebhooks(partnerID)
	if err != nil {
		return nil, err
	}
	var out []*webhook.OutboxEntry
	for _, w := range hooks {
		if !w.Subscribes(ev.Name) {
			continue
		}
		e, err := s.enqueue(b, w, ev.Name, body)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// EnqueueDelivery adds to b one outbox entry for w alone, whatever its
// subscriptions, and returns the delivery ID. It serves test deliveries.
func (s *Store) EnqueueDelivery(b *pebble.Batch, w *webhook.Registration, ev webhook.Event) (string, error) {
	if s.closed.Load() {
		return "", store.ErrClosed
	}
	e, err := s.enqueueTo(b, w, ev)
	if err != nil {
		return "", err
	}
	return e.DeliveryID, nil
}

// enqueueTo adds to b one outbox entry of ev for w alone.
func (s *Store) enqueueTo(b *pebble.Batch, w *webhook.Registration, ev webhook.Event) (*webhook.OutboxEntry, error) {
	body, err := ev.Body()
	if err != nil {
		return nil, err
	}
	return s.enqueue(b, w, ev.Name, body)
}

func (s *Store) enqueue(b *pebble.Batch, w *webhook.Registration, event string, body []byte) (*webhook.OutboxEntry, error) {
	id, err := webhook.NewDeliveryID()
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	e := &webhook.OutboxEntry{DeliveryID: id, WebhookID: w.ID, PartnerID: w.PartnerID, Event: event,
		Body: body, CreatedAt: now, Due: now}
	val, err := json.Marshal(outboxRecord{V: 1, OutboxEntry: *e})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode outbox entry: %w", err)
	}
	if err := b.Set(outboxKey(e.Due, id), val, nil); err != nil {
		return nil, fmt.Errorf("pebblestore: enqueue delivery: %w", err)
	}
	rec := webhook.DeliveryRecord{ID: id, WebhookID: w.ID, Event: event, State: webhook.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	if err := setDelivery(b, &rec); err != nil {
		return nil, err
	}
	return e, nil
}

func setDelivery(b *pebble.Batch, rec *webhook.DeliveryRecord) error {
	val, err := json.Marshal(deliveryRecord{V: deliveryVersion, DeliveryRecord: *rec})
	if err != nil {
		return fmt.Errorf("pebblestore: encode delivery record: %w", err)
	}
	if err := b.Set(deliveryKey(rec.WebhookID, rec.CreatedAt, rec.ID), val, nil); err != nil {
		return fmt.Errorf("pebblestore: write delivery record: %w", err)
	}
	return nil
}

// Publish enqueues ev for the partner's subscribed webhooks in a batch of its
// own, committed with pebble.Sync, for sources with no state change to
// commit alongside, and returns the entries it committed.
func (s *Store) Publish(ctx context.Context, partnerID string, ev webhook.Event) ([]*webhook.OutboxEntry, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	entries, err := s.enqueueEvent(b, partnerID, ev)
	if err != nil {
		return nil, err
	}
	if b.Empty() {
		return nil, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("pebblestore: commit published event: %w", err)
	}
	return entries, nil
}

// PublishTo enqueues ev for webhook w alone in a synced batch of its own and
// returns the entry it committed (its DeliveryID is the delivery's).
func (s *Store) PublishTo(ctx context.Context, w *webhook.Registration, ev webhook.Event) (*webhook.OutboxEntry, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	e, err := s.enqueueTo(b, w, ev)
	if err != nil {
		return nil, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("pebblestore: commit test delivery: %w", err)
	}
	return e, nil
}

// DueDeliveries calls fn for outbox entries due at or after from and at or
// before now, earliest first, until fn returns false. The iterator is
// bounded above by now, so entries waiting for a later retry are never read.
// The zero from reads from the start of the outbox. Delivered entries leave
// tombstones at its front until compaction, which every scan from the start
// walks again; a caller that knows nothing it must see lies before some time
// passes that time as from and never reads them. Entries that skip reports
// true for (nil skips none) are passed over without decoding their value:
// skip is given the entry's due time and delivery ID, from its key, and its
// webhook's ID, read from the stored bytes without decoding them (nil when
// they cannot be read so); the byte slices are valid only during the call.
// The delivery pool skips the entries it already holds and those of webhooks that can take no more, which keeps a rescan
// cheap however many are in flight or waiting.
//
// Every entry handed to fn is durable. Pebble shows a committed batch to
// readers once it is applied, before its WAL record is synced (or even
// written), so the entry of a state change whose synced commit is still
// under way can be read here; delivered, then lost with its change in a
// crash, it would announce a change the store never kept. Before the first
// entry it reads, DueDeliveries waits for a WAL sync that covers every batch
// its iterator sees, so that the entries skip is shown (which the pool may
// park and read again by key with OutboxEntry) are durable too.
func (s *Store) DueDeliveries(ctx context.Context, from, now time.Time, skip func(due time.Time, deliveryID, webhookID []byte) bool, fn func(*webhook.OutboxEntry) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	lower := []byte(prefixOutbox)
	if !from.IsZero() {
		lower = binary.BigEndian.AppendUint64(lower, uint64(from.UnixNano()))
	}
	upper := binary.BigEndian.AppendUint64([]byte(prefixOutbox), uint64(now.UnixNano())+1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("pebblestore: outbox iterator: %w", err)
	}
	defer it.Close()
	synced := false
	for ok := it.First(); ok; ok = it.Next() {
		if !synced {
			if err := s.syncWAL(); err != nil {
				return fmt.Errorf("pebblestore: make the outbox durable before delivery: %w", err)
			}
			synced = true
		}
		if skip != nil && len(it.Key()) > len(prefixOutbox)+8 {
			val, err := it.ValueAndErr()
			if err != nil {
				return fmt.Errorf("pebblestore: read outbox entry %q: %w", it.Key(), err)
			}
			if skip(outboxDue(it.Key()), it.Key()[len(prefixOutbox)+8:], peekWebhookID(val)) {
				continue
			}
		}
		e, err := decodeOutbox(it.Key(), it.Value())
		if err != nil {
			return err
		}
		if !fn(e) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return it.Error()
}

func decodeOutbox(key, val []byte) (*webhook.OutboxEntry, error) {
	var rec outboxRecord
	if err := json.Unmarshal(val, &rec); err != nil {
		return nil, fmt.Errorf("pebblestore: decode outbox entry %q: %w", key, err)
	}
	if rec.V != 1 {
		return nil, fmt.Errorf("pebblestore: outbox entry version %d unknown", rec.V)
	}
	return &rec.OutboxEntry, nil
}

// webhookIDField is how the webhook's ID starts in an outbox entry's stored
// JSON. Identifiers hold no quote or backslash, and the only field before it,
// the delivery ID, none either, so its first occurrence is the field.
var webhookIDField = []byte(`"webhookId":"`)

// peekWebhookID returns the webhook ID of an outbox entry's stored value
// without decoding it, or nil when it cannot be found so.
func peekWebhookID(val []byte) []byte {
	i := bytes.Index(val, webhookIDField)
	if i < 0 {
		return nil
	}
	rest := val[i+len(webhookIDField):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 {
		return nil
	}
	return rest[:j]
}

// OutboxEntries reads again entries scans saw and left in place, by their
// keys, with one iterator (keys in due order cost a short step each, not a
// lookup), calling fn with each key's index and its entry, nil when it is no
// longer there.
func (s *Store) OutboxEntries(ctx context.Context, keys []store.OutboxKey, fn func(i int, e *webhook.OutboxEntry)) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixOutbox), UpperBound: prefixUpperBound(prefixOutbox)})
	if err != nil {
		return fmt.Errorf("pebblestore: outbox iterator: %w", err)
	}
	defer it.Close()
	for i, k := range keys {
		key := outboxKey(k.Due, k.DeliveryID)
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			if err := it.Error(); err != nil {
				return fmt.Errorf("pebblestore: read outbox entry: %w", err)
			}
			fn(i, nil)
			continue
		}
		e, err := decodeOutbox(key, it.Value())
		if err != nil {
			return err
		}
		fn(i, e)
	}
	return it.Error()
}

// NextDue returns the due time of the earliest outbox entry due after
// after, and false when there is none: the next retry coming due, for a
// caller that wants to scan then rather than poll.
func (s *Store) NextDue(ctx context.Context, after time.Time) (time.Time, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return time.Time{}, false, err
	}
	lower := binary.BigEndian.AppendUint64([]byte(prefixOutbox), uint64(after.UnixNano())+1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixUpperBound(prefixOutbox)})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("pebblestore: outbox iterator: %w", err)
	}
	defer it.Close()
	if !it.First() {
		return time.Time{}, false, it.Error()
	}
	k := it.Key()
	if len(k) < len(prefixOutbox)+8 {
		return time.Time{}, false, fmt.Errorf("pebblestore: outbox key %q too short", k)
	}
	return outboxDue(k), true, nil
}

// FinishAttempts records the outcomes of attempts in one synced batch, so
// that attempts finishing together share one WAL sync. For each outcome the
// history row is written, its attempt log being the stored row's with this
// attempt appended (webhook.AppendAttempt, sent at the outcome's At, or now
// when that is zero; the outcome's own Attempts are ignored), and the
// outbox entry is removed or, when RetryAt is not zero, moved to RetryAt
// with its Attempt set to the record's; a webhook deleted meanwhile gets no
// history row. The log is read from the committed row (but for a first
// attempt, whose row has none), so outs holds at most one attempt of a
// delivery, which the pool guarantees: it makes a delivery's next attempt
// only after the previous one was recorded. The
// batch is atomic: after an error none of them is recorded and every entry
// is still in the outbox at its old key (its delivery will be repeated).
// Entries are updated in place only after the commit succeeded; the
// outcomes' records are not modified.
func (s *Store) FinishAttempts(ctx context.Context, outs []webhook.AttemptOutcome) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(outs) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	alive := make(map[string]bool, 8)
	next := make([]webhook.OutboxEntry, len(outs))
	updatedAt := s.now().UTC()
	for i, o := range outs {
		e := o.Entry
		if err := b.Delete(outboxKey(e.Due, e.DeliveryID), nil); err != nil {
			return fmt.Errorf("pebblestore: remove outbox entry: %w", err)
		}
		next[i] = *e
		if !o.RetryAt.IsZero() {
			n := &next[i]
			n.Attempt, n.Due = o.Record.Attempt, o.RetryAt.UTC()
			val, err := json.Marshal(outboxRecord{V: 1, OutboxEntry: *n})
			if err != nil {
				return fmt.Errorf("pebblestore: encode outbox entry: %w", err)
			}
			if err := b.Set(outboxKey(n.Due, n.DeliveryID), val, nil); err != nil {
				return fmt.Errorf("pebblestore: reschedule outbox entry: %w", err)
			}
		}
		ok, seen := alive[e.WebhookID]
		if !seen {
			var err error
			if ok, err = s.has(webhookIDKey(e.WebhookID)); err != nil {
				return fmt.Errorf("pebblestore: webhook check: %w", err)
			}
			alive[e.WebhookID] = ok
		}
		if ok {
			rec := *o.Record
			rec.ID, rec.WebhookID, rec.Event, rec.CreatedAt = e.DeliveryID, e.WebhookID, e.Event, e.CreatedAt
			rec.UpdatedAt = updatedAt
			var log []webhook.Attempt
			switch val, err := s.historyOf(e); {
			case val == nil && err == nil:
			case err == nil:
				prev, err := decodeDelivery(val)
				if err != nil {
					return err
				}
				log = prev.Attempts
			case !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("pebblestore: read delivery record: %w", err)
			}
			at := o.At
			if at.IsZero() {
				at = updatedAt
			}
			rec.Attempts = webhook.AppendAttempt(log, rec.LatestAttempt(at.UTC()))
			if err := setDelivery(b, &rec); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit %d delivery outcomes: %w", len(outs), err)
	}
	for i, o := range outs {
		*o.Entry = next[i]
	}
	return nil
}

// historyOf reads the stored history row of e's delivery, or nil without
// reading when e has had no attempt yet: its row is then the pending one
// enqueue wrote, with no attempt in its log.
func (s *Store) historyOf(e *webhook.OutboxEntry) ([]byte, error) {
	if e.Attempt == 0 {
		return nil, nil
	}
	return s.get(deliveryKey(e.WebhookID, e.CreatedAt, e.DeliveryID))
}

// DropDelivery removes an outbox entry without recording anything, for
// deliveries whose webhook was deleted or deactivated.
func (s *Store) DropDelivery(ctx context.Context, e *webhook.OutboxEntry) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := s.db.Delete(outboxKey(e.Due, e.DeliveryID), pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: drop delivery: %w", err)
	}
	return nil
}

// Deliveries returns up to limit history rows of one of the partner's
// webhooks, newest first, reading only that webhook's key range. Another
// partner's webhook is store.ErrNotFound.
func (s *Store) Deliveries(ctx context.Context, partnerID, webhookID string, limit int) ([]*webhook.DeliveryRecord, error) {
	if _, err := s.Webhook(ctx, partnerID, webhookID); err != nil {
		return nil, err
	}
	prefix := deliveryWebhookPrefix(webhookID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: delivery iterator: %w", err)
	}
	defer it.Close()
	out := []*webhook.DeliveryRecord{}
	for ok := it.Last(); ok && len(out) < limit; ok = it.Prev() {
		rec, err := decodeDelivery(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list deliveries: %w", err)
	}
	return out, nil
}

// CountOutbox counts the deliveries still owed: due, whose next attempt is
// due at now or before, and scheduled, due later (retries waiting out their
// backoff). It decodes no entry and reads at most limit (positive) of them:
// past it the counts stop, so that a metrics scrape of a huge backlog costs
// bounded work; due plus scheduled equal to limit means at least that many.
func (s *Store) CountOutbox(ctx context.Context, now time.Time, limit int) (due, scheduled int, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, 0, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixOutbox), UpperBound: prefixUpperBound(prefixOutbox)})
	if err != nil {
		return 0, 0, fmt.Errorf("pebblestore: outbox iterator: %w", err)
	}
	defer it.Close()
	dueBy := uint64(now.UnixNano())
	for ok := it.First(); ok && due+scheduled < limit; ok = it.Next() {
		k := it.Key()
		if len(k) >= len(prefixOutbox)+8 && binary.BigEndian.Uint64(k[len(prefixOutbox):]) > dueBy {
			scheduled++
		} else {
			due++
		}
	}
	if err := it.Error(); err != nil {
		return 0, 0, fmt.Errorf("pebblestore: count outbox: %w", err)
	}
	return due, scheduled, nil
}
