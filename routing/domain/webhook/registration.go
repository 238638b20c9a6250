package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// MaxPerPartner bounds registrations per partner: each one multiplies the
// partner's event fan-out, so the bound is what keeps one partner's events
// from flooding the delivery pool.
const MaxPerPartner = 10

// ErrLimit means the partner already has MaxPerPartner webhooks.
var ErrLimit = errors.New("webhook: registration limit reached")

// idPrefix starts generated webhook IDs, so that a webhook ID is told apart
// from a delivery ID (or any other ID) at a glance in logs and support
// requests.
const idPrefix = "wh_"

// Registration is a partner's webhook: where its events go and which ones.
// Secret is the signing key; it is kept because every delivery is signed
// with it, and no endpoint ever returns it.
//
// The JSON field names are the stored encoding (the store wraps the value
// with a record version), so renaming one needs a new record version.
type Registration struct {
	ID        string    `json:"id"`
	PartnerID string    `json:"partnerId"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret"`
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Subscribes reports whether r is active and subscribed to event: only then
// does an event of that name enter the outbox for r.
func (r *Registration) Subscribes(event string) bool {
	return r.Active && slices.Contains(r.Events, event)
}

// NewID returns a fresh random webhook ID, "wh_" and 24 hex digits. The 96
// random bits make IDs unguessable, so one partner cannot probe for
// another's webhooks.
func NewID() (string, error) {
	return newID(idPrefix, "webhook")
}

// newID returns prefix followed by 12 random bytes in hex.
func newID(prefix, kind string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("webhook: generate %s id: %w", kind, err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}
