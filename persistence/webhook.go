package persistence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Webhook key families (see the package comment):
//
//	webhook/<partnerID>/<webhookID>   the registration, secret included
//	webhookid/<webhookID>             partnerID, to find a webhook by ID alone
//	delivery/<webhookID>/...          its delivery history (outbox.go), removed with it
const (
	prefixWebhook   = "webhook/"
	prefixWebhookID = "webhookid/"
)

// MaxWebhooksPerPartner bounds registrations per partner: each one multiplies
// the partner's event fan-out, so the bound is what keeps one partner's
// events from flooding the delivery pool.
const MaxWebhooksPerPartner = 10

// ErrWebhookLimit means the partner already has MaxWebhooksPerPartner
// webhooks.
var ErrWebhookLimit = errors.New("persistence: webhook limit reached")

// webhookIDPrefix starts generated webhook IDs.
const webhookIDPrefix = "wh_"

// Webhook is a partner's registration. Secret is the signing key; it is kept
// because every delivery is signed with it, and no endpoint ever returns it.
type Webhook struct {
	ID        string    `json:"id"`
	PartnerID string    `json:"partnerId"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Subscribes reports whether w is active and subscribed to event.
func (w *Webhook) Subscribes(event string) bool {
	return w.Active && slices.Contains(w.Events, event)
}

type webhookRecord struct {
	V int `json:"v"`
	Webhook
}

func webhookKey(partnerID, id string) []byte {
	return []byte(prefixWebhook + partnerID + "/" + id)
}

func webhookPartnerPrefix(partnerID string) string { return prefixWebhook + partnerID + "/" }

func webhookIDKey(id string) []byte { return []byte(prefixWebhookID + id) }

func decodeWebhook(b []byte) (*Webhook, error) {
	rec, err := decodeV1[webhookRecord](b, "webhook")
	if err != nil {
		return nil, err
	}
	return &rec.Webhook, nil
}

// NewWebhookID returns a fresh random webhook ID, "wh_" and 24 hex digits.
func NewWebhookID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("persistence: generate webhook id: %w", err)
	}
	return webhookIDPrefix + hex.EncodeToString(b[:]), nil
}

// CreateWebhook stores a new registration and its ID index in one synced
// batch. An empty w.ID is generated; CreatedAt and UpdatedAt are set to now
// and w is updated in place. The caller has validated URL, events and
// secret. It fails with ErrWebhookLimit when the partner already has
// MaxWebhooksPerPartner webhooks.
//
// The count and the insert run under the store's partner lock: webhooks are
// part of the partner account, and two concurrent registrations must not both
// see room for the tenth.
func (s *Store) CreateWebhook(ctx context.Context, w *Webhook) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !ValidID(w.PartnerID) {
		return fmt.Errorf("persistence: webhook partner id %q invalid", w.PartnerID)
	}
	if w.ID == "" {
		id, err := NewWebhookID()
		if err != nil {
			return err
		}
		w.ID = id
	} else if !ValidID(w.ID) {
		return fmt.Errorf("persistence: webhook id %q invalid", w.ID)
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	existing, err := s.listWebhooks(w.PartnerID)
	if err != nil {
		return err
	}
	if len(existing) >= MaxWebhooksPerPartner {
		return fmt.Errorf("%w: partner %s has %d", ErrWebhookLimit, w.PartnerID, len(existing))
	}
	if dup, err := s.has(webhookIDKey(w.ID)); err != nil {
		return fmt.Errorf("persistence: webhook id check: %w", err)
	} else if dup {
		return fmt.Errorf("%w: webhook %s", ErrExists, w.ID)
	}
	now := s.now().UTC()
	w.CreatedAt, w.UpdatedAt = now, now
	val, err := json.Marshal(webhookRecord{V: 1, Webhook: *w})
	if err != nil {
		return fmt.Errorf("persistence: encode webhook: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(webhookKey(w.PartnerID, w.ID), val, nil); err != nil {
		return err
	}
	if err := b.Set(webhookIDKey(w.ID), []byte(w.PartnerID), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("persistence: commit webhook: %w", err)
	}
	return nil
}

// Webhooks returns a partner's webhooks, oldest first. It reads only that
// partner's key range.
func (s *Store) Webhooks(ctx context.Context, partnerID string) ([]*Webhook, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !ValidID(partnerID) {
		return nil, nil
	}
	return s.listWebhooks(partnerID)
}

func (s *Store) listWebhooks(partnerID string) ([]*Webhook, error) {
	prefix := webhookPartnerPrefix(partnerID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, fmt.Errorf("persistence: webhook iterator: %w", err)
	}
	defer it.Close()
	var out []*Webhook
	for ok := it.First(); ok; ok = it.Next() {
		w, err := decodeWebhook(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: list webhooks: %w", err)
	}
	slices.SortFunc(out, func(a, b *Webhook) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Webhook returns one of a partner's webhooks. Another partner's webhook is
// ErrNotFound, exactly like a missing one, so IDs cannot be probed.
func (s *Store) Webhook(ctx context.Context, partnerID, id string) (*Webhook, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !ValidID(partnerID) || !ValidID(id) {
		return nil, ErrNotFound
	}
	val, err := s.get(webhookKey(partnerID, id))
	if err != nil {
		return nil, err
	}
	return decodeWebhook(val)
}

// WebhookByID returns a webhook by ID alone, for the delivery pool.
func (s *Store) WebhookByID(ctx context.Context, id string) (*Webhook, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	pid, err := s.get(webhookIDKey(id))
	if err != nil {
		return nil, err
	}
	return s.Webhook(ctx, string(pid), id)
}

// DeleteWebhook removes a partner's webhook, its ID index and its delivery
// history in one synced batch. Outbox entries still queued for it are
// dropped by the delivery pool when they come due (it finds no webhook), so
// the delete needs no scan of the outbox. Another partner's webhook is
// ErrNotFound.
func (s *Store) DeleteWebhook(ctx context.Context, partnerID, id string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	if _, err := s.Webhook(ctx, partnerID, id); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Delete(webhookKey(partnerID, id), nil); err != nil {
		return err
	}
	if err := b.Delete(webhookIDKey(id), nil); err != nil {
		return err
	}
	hist := deliveryWebhookPrefix(id)
	if err := b.DeleteRange([]byte(hist), prefixUpperBound(hist), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("persistence: commit webhook delete: %w", err)
	}
	return nil
}
