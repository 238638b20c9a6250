package pebblestore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Webhook key families (see the package comment):
//
//	webhook/<partnerID>/<webhookID>   the registration, its secret sealed (secrets.go)
//	webhookid/<webhookID>             partnerID, to find a webhook by ID alone
//	delivery/<webhookID>/...          its delivery history (outbox.go), removed with it
const (
	prefixWebhook   = "webhook/"
	prefixWebhookID = "webhookid/"
)

// webhookVersion is the record version written: 2, the secret sealed.
// Version 1 kept it in clear under "secret"; the migration to schema 4
// seals every version 1 record (sealWebhookSecrets), and a version 1
// record found later is refused rather than read.
const webhookVersion = 2

// webhookRecord is the stored encoding of a registration: the registration's
// own JSON fields, the record version, and the secret sealed with the data
// directory's key.
type webhookRecord struct {
	V int `json:"v"`
	webhook.Registration
	// Secret shadows Registration.Secret in the JSON: version 1's clear
	// secret, read by the migration alone, and never written.
	Secret string `json:"secret,omitempty"`
	// SealedSecret is the nonce and AES-256-GCM ciphertext of the secret,
	// bound to the record's partner and webhook IDs (version 2).
	SealedSecret []byte `json:"sealedSecret,omitempty"`
}

func webhookKey(partnerID, id string) []byte {
	return []byte(prefixWebhook + partnerID + "/" + id)
}

func webhookPartnerPrefix(partnerID string) string { return prefixWebhook + partnerID + "/" }

func webhookIDKey(id string) []byte { return []byte(prefixWebhookID + id) }

// encodeWebhook is w's stored record: its secret sealed, never in clear.
func (s *Store) encodeWebhook(w *webhook.Registration) ([]byte, error) {
	sealed, err := s.seal.Seal(w.PartnerID, w.ID, w.Secret)
	if err != nil {
		return nil, err
	}
	rec := webhookRecord{V: webhookVersion, Registration: *w, SealedSecret: sealed}
	rec.Registration.Secret = ""
	val, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode webhook: %w", err)
	}
	return val, nil
}

// decodeWebhook reads a stored registration, its secret opened.
func (s *Store) decodeWebhook(b []byte) (*webhook.Registration, error) {
	rec, err := decodeVersion[webhookRecord](b, "webhook", webhookVersion)
	if err != nil {
		return nil, err
	}
	secret, err := s.seal.Open(rec.PartnerID, rec.ID, rec.SealedSecret)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: webhook %s: %w", rec.ID, err)
	}
	rec.Registration.Secret = secret
	return &rec.Registration, nil
}

// CreateWebhook stores a new registration and its ID index in one synced
// batch. An empty w.ID is generated; CreatedAt and UpdatedAt are set to now
// and w is updated in place. The caller has validated URL, events and
// secret. It fails with webhook.ErrLimit when the partner already has
// webhook.MaxPerPartner webhooks.
//
// The count and the insert run under the store's partner lock: webhooks are
// part of the partner account, and two concurrent registrations must not both
// see room for the tenth.
func (s *Store) CreateWebhook(ctx context.Context, w *webhook.Registration) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(w.PartnerID) {
		return fmt.Errorf("pebblestore: webhook partner id %q invalid", w.PartnerID)
	}
	if w.ID == "" {
		id, err := webhook.NewID()
		if err != nil {
			return err
		}
		w.ID = id
	} else if !account.ValidID(w.ID) {
		return fmt.Errorf("pebblestore: webhook id %q invalid", w.ID)
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	existing, err := s.listWebhooks(w.PartnerID)
	if err != nil {
		return err
	}
	if len(existing) >= webhook.MaxPerPartner {
		return fmt.Errorf("%w: partner %s has %d", webhook.ErrLimit, w.PartnerID, len(existing))
	}
	if dup, err := s.has(webhookIDKey(w.ID)); err != nil {
		return fmt.Errorf("pebblestore: webhook id check: %w", err)
	} else if dup {
		return fmt.Errorf("%w: webhook %s", store.ErrExists, w.ID)
	}
	now := s.now().UTC()
	w.CreatedAt, w.UpdatedAt = now, now
	val, err := s.encodeWebhook(w)
	if err != nil {
		return err
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
		return fmt.Errorf("pebblestore: commit webhook: %w", err)
	}
	return nil
}

// Webhooks returns a partner's webhooks, oldest first. It reads only that
// partner's key range.
func (s *Store) Webhooks(ctx context.Context, partnerID string) ([]*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(partnerID) {
		return nil, nil
	}
	return s.listWebhooks(partnerID)
}

func (s *Store) listWebhooks(partnerID string) ([]*webhook.Registration, error) {
	prefix := webhookPartnerPrefix(partnerID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: webhook iterator: %w", err)
	}
	defer it.Close()
	var out []*webhook.Registration
	for ok := it.First(); ok; ok = it.Next() {
		w, err := s.decodeWebhook(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list webhooks: %w", err)
	}
	slices.SortFunc(out, func(a, b *webhook.Registration) int {
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
// store.ErrNotFound, exactly like a missing one, so IDs cannot be probed.
func (s *Store) Webhook(ctx context.Context, partnerID, id string) (*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(partnerID) || !account.ValidID(id) {
		return nil, store.ErrNotFound
	}
	w, err := s.cachedWebhook(id, func() ([]byte, error) { return s.get(webhookKey(partnerID, id)) })
	if err != nil {
		return nil, err
	}
	if w.PartnerID != partnerID {
		return nil, store.ErrNotFound
	}
	return w, nil
}

// WebhookByID returns a webhook by ID alone, for the delivery pool.
func (s *Store) WebhookByID(ctx context.Context, id string) (*webhook.Registration, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(id) {
		return nil, store.ErrNotFound
	}
	return s.cachedWebhook(id, func() ([]byte, error) {
		pid, err := s.get(webhookIDKey(id))
		if err != nil {
			return nil, err
		}
		return s.get(webhookKey(string(pid), id))
	})
}

// maxCachedWebhooks bounds the registrations kept in memory: ten per
// partner for thousands of partners. Past it, reads go to Pebble.
const maxCachedWebhooks = 1 << 16

// cachedWebhook returns a copy of registration id from the cache, or
// decodes what read returns and caches it. A delete drops the entry after
// its commit (readCache), so the cache never holds a deleted webhook.
func (s *Store) cachedWebhook(id string, read func() ([]byte, error)) (*webhook.Registration, error) {
	c, err := s.hooks.get(id, func() (*webhook.Registration, error) {
		val, err := read()
		if err != nil {
			return nil, err
		}
		return s.decodeWebhook(val)
	})
	if err != nil {
		return nil, err
	}
	w := *c
	return &w, nil
}

// DeleteWebhook removes a partner's webhook, its ID index and its delivery
// history in one synced batch. Outbox entries still queued for it are
// dropped by the delivery pool when they come due (it finds no webhook), so
// the delete needs no scan of the outbox. Another partner's webhook is
// store.ErrNotFound.
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
	err := b.Commit(pebble.Sync)
	// Dropped whatever the outcome: after a failed commit the next read
	// fills it again from what is on disk.
	s.hooks.drop(id)
	if err != nil {
		return fmt.Errorf("pebblestore: commit webhook delete: %w", err)
	}
	return nil
}
