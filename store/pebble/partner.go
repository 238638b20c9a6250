package pebblestore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// partnerRecordVersion is the encoding version of partnerRecord.
const partnerRecordVersion = 1

// partnerRecord is the on-disk JSON form of a Partner. It is separate from
// Partner so that the persisted shape is explicit and versioned, and so that
// the digest is written as hex rather than as a JSON array of numbers.
type partnerRecord struct {
	V                 int      `json:"v"`
	ID                string   `json:"id"`
	Name              string   `json:"name"`
	Email             string   `json:"email"`
	SwapFeeBps        int      `json:"swapFeeBps"`
	OnrampFeeBps      int      `json:"onrampFeeBps"`
	HeavyPerMin       int      `json:"heavyPerMin"`
	ReadPerMin        int      `json:"readPerMin"`
	EnabledEcosystems []string `json:"enabledEcosystems"`
	KeyDigest         string   `json:"keyDigest"`
	Disabled          bool     `json:"disabled"`
	WebhooksEnabled   bool     `json:"webhooksEnabled"`
	// AllowedOrigins came after version 1's first records; an older
	// record without it decodes to none.
	AllowedOrigins []string  `json:"allowedOrigins,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

func encodePartner(p *account.Partner) ([]byte, error) {
	b, err := json.Marshal(partnerRecord{
		V:                 partnerRecordVersion,
		ID:                p.ID,
		Name:              p.Name,
		Email:             p.Email,
		SwapFeeBps:        p.SwapFeeBps,
		OnrampFeeBps:      p.OnrampFeeBps,
		HeavyPerMin:       p.HeavyPerMin,
		ReadPerMin:        p.ReadPerMin,
		EnabledEcosystems: p.EnabledEcosystems,
		KeyDigest:         hex.EncodeToString(p.KeyDigest[:]),
		Disabled:          p.Disabled,
		WebhooksEnabled:   p.WebhooksEnabled,
		AllowedOrigins:    p.AllowedOrigins,
		CreatedAt:         p.CreatedAt.UTC(),
		UpdatedAt:         p.UpdatedAt.UTC(),
	})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode partner %q: %w", p.ID, err)
	}
	return b, nil
}

func decodePartner(b []byte) (*account.Partner, error) {
	var r partnerRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode partner: %w", err)
	}
	if r.V != partnerRecordVersion {
		return nil, fmt.Errorf("pebblestore: partner %q has record version %d, want %d", r.ID, r.V, partnerRecordVersion)
	}
	p := &account.Partner{
		ID:                r.ID,
		Name:              r.Name,
		Email:             r.Email,
		FeeTier:           account.FeeTier{SwapFeeBps: r.SwapFeeBps, OnrampFeeBps: r.OnrampFeeBps},
		Limits:            account.Limits{HeavyPerMin: r.HeavyPerMin, ReadPerMin: r.ReadPerMin},
		EnabledEcosystems: r.EnabledEcosystems,
		Disabled:          r.Disabled,
		WebhooksEnabled:   r.WebhooksEnabled,
		AllowedOrigins:    r.AllowedOrigins,
		CreatedAt:         r.CreatedAt,
		UpdatedAt:         r.UpdatedAt,
	}
	d, err := hex.DecodeString(r.KeyDigest)
	if err != nil || len(d) != len(p.KeyDigest) {
		return nil, fmt.Errorf("pebblestore: partner %q has a malformed key digest", r.ID)
	}
	copy(p.KeyDigest[:], d)
	return p, nil
}

// CreatePartner stores a new partner and its key index in one synced batch.
// An empty p.ID is replaced by a generated one; zero CreatedAt and UpdatedAt
// are set to now. p is updated in place with the stored values. It fails with
// store.ErrExists when the ID or the key digest is already registered.
func (s *Store) CreatePartner(ctx context.Context, p *account.Partner) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if p.ID == "" {
		id, err := account.NewPartnerID()
		if err != nil {
			return err
		}
		p.ID = id
	}
	if !account.ValidID(p.ID) {
		return fmt.Errorf("pebblestore: create partner: invalid id %q", p.ID)
	}
	if p.KeyDigest == ([32]byte{}) {
		return fmt.Errorf("pebblestore: create partner %q: empty key digest", p.ID)
	}
	now := s.now().UTC()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}

	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	if ok, err := s.has(partnerKey(p.ID)); err != nil {
		return fmt.Errorf("pebblestore: create partner %q: %w", p.ID, err)
	} else if ok {
		return fmt.Errorf("pebblestore: create partner %q: %w", p.ID, store.ErrExists)
	}
	if ok, err := s.has(partnerDigestKey(p.KeyDigest)); err != nil {
		return fmt.Errorf("pebblestore: create partner %q: %w", p.ID, err)
	} else if ok {
		return fmt.Errorf("pebblestore: create partner %q: key digest: %w", p.ID, store.ErrExists)
	}
	val, err := encodePartner(p)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(partnerKey(p.ID), val, nil); err != nil {
		return fmt.Errorf("pebblestore: create partner %q: %w", p.ID, err)
	}
	if err := b.Set(partnerDigestKey(p.KeyDigest), []byte(p.ID), nil); err != nil {
		return fmt.Errorf("pebblestore: create partner %q: %w", p.ID, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: create partner %q: commit: %w", p.ID, err)
	}
	return nil
}

// Partner returns the partner with the given ID, or store.ErrNotFound.
func (s *Store) Partner(ctx context.Context, id string) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	p, err := s.getPartner(id)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: partner %q: %w", id, err)
	}
	return p, nil
}

// PartnerByKeyDigest returns the partner whose current API key has digest d,
// or store.ErrNotFound. Disabled partners are returned too; refusing them is the
// caller's decision.
func (s *Store) PartnerByKeyDigest(ctx context.Context, d [32]byte) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	idb, err := s.get(partnerDigestKey(d))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: partner by key digest: %w", err)
	}
	p, err := s.getPartner(string(idb))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: partner by key digest: %w", err)
	}
	return p, nil
}

// ListPartners returns every partner ordered by ID.
func (s *Store) ListPartners(ctx context.Context) ([]*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte(prefixPartner),
		UpperBound: prefixUpperBound(prefixPartner),
	})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: list partners: %w", err)
	}
	var out []*account.Partner
	for valid := it.First(); valid; valid = it.Next() {
		if err := ctx.Err(); err != nil {
			_ = it.Close()
			return nil, err
		}
		p, err := decodePartner(it.Value())
		if err != nil {
			_ = it.Close()
			return nil, fmt.Errorf("pebblestore: list partners: key %q: %w", it.Key(), err)
		}
		out = append(out, p)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("pebblestore: list partners: %w", err)
	}
	return out, nil
}

// UpdatePartner applies fn to a copy of the partner and stores the result
// with UpdatedAt set to now, in one synced batch. If fn changes KeyDigest the
// old index entry is deleted and the new one written in the same batch, so the
// old key stops working exactly when the new one starts. fn must not change ID
// or CreatedAt. An error from fn aborts the update and is returned as is.
// Updates are serialised, so concurrent callers never lose changes.
func (s *Store) UpdatePartner(ctx context.Context, id string, fn func(*account.Partner) error) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	old, err := s.getPartner(id)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: update partner %q: %w", id, err)
	}
	p := old.Clone()
	if err := fn(p); err != nil {
		return nil, err
	}
	if p.ID != old.ID || !p.CreatedAt.Equal(old.CreatedAt) {
		return nil, fmt.Errorf("pebblestore: update partner %q: id and createdAt are immutable", id)
	}
	if p.KeyDigest == ([32]byte{}) {
		return nil, fmt.Errorf("pebblestore: update partner %q: empty key digest", id)
	}
	p.UpdatedAt = s.now().UTC()
	val, err := encodePartner(p)
	if err != nil {
		return nil, err
	}

	b := s.db.NewBatch()
	defer b.Close()
	if p.KeyDigest != old.KeyDigest {
		if ok, err := s.has(partnerDigestKey(p.KeyDigest)); err != nil {
			return nil, fmt.Errorf("pebblestore: update partner %q: %w", id, err)
		} else if ok {
			return nil, fmt.Errorf("pebblestore: update partner %q: key digest: %w", id, store.ErrExists)
		}
		if err := b.Delete(partnerDigestKey(old.KeyDigest), nil); err != nil {
			return nil, fmt.Errorf("pebblestore: update partner %q: %w", id, err)
		}
		if err := b.Set(partnerDigestKey(p.KeyDigest), []byte(p.ID), nil); err != nil {
			return nil, fmt.Errorf("pebblestore: update partner %q: %w", id, err)
		}
	}
	if err := b.Set(partnerKey(id), val, nil); err != nil {
		return nil, fmt.Errorf("pebblestore: update partner %q: %w", id, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("pebblestore: update partner %q: commit: %w", id, err)
	}
	return p.Clone(), nil
}

// getPartner reads and decodes one partner record.
func (s *Store) getPartner(id string) (*account.Partner, error) {
	if !account.ValidID(id) {
		return nil, store.ErrNotFound
	}
	val, err := s.get(partnerKey(id))
	if err != nil {
		return nil, err
	}
	return decodePartner(val)
}

// get returns a copy of the value at key, or store.ErrNotFound. Pebble's value is
// only valid until its closer is closed, hence the copy.
func (s *Store) get(key []byte) ([]byte, error) {
	val, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := slices.Clone(val)
	if err := closer.Close(); err != nil {
		return nil, err
	}
	return out, nil
}

// has reports whether key exists.
func (s *Store) has(key []byte) (bool, error) {
	_, err := s.get(key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
