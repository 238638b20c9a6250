// Package store holds the words every backend of Swapgate's durable state
// and every layer that uses one share: the sentinel errors a caller tells
// outcomes by, the record encodings every backend keeps byte for byte (a
// partner quote's activity, an issued quote's ticket), the outbox's keys,
// and one interface per kind of state (aggregates.go) that each backend
// promises whole.
//
// No backend owns it: the Pebble store (store/pebble) and the PostgreSQL
// store (store/postgres) both import it and neither imports the other;
// the data directory's local files that either backend keeps beside it
// (secrets.key, the ticket log) are store/local's. The actors and the
// edge declare the small interfaces they use; the composition root hands
// each of them a backend's value typed as one of this package's
// interfaces. It imports only the domain (and the domain's encoder), so
// that it sits below every layer that uses it.
package store

import (
	"errors"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

var (
	// ErrNotFound means the requested record does not exist.
	ErrNotFound = account.ErrNotFound
	// ErrExists means a record with the same identity already exists.
	ErrExists = account.ErrExists
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("store: closed")
	// ErrSchemaTooNew means the data was written by a newer release.
	ErrSchemaTooNew = errors.New("store: the stored schema is newer than this build")
	// ErrStale is what a fenced write returns when the record it was to
	// replace is no longer the one its writer read: another writer
	// (another node, during a change of the cluster's topology) moved it
	// first. The write changed nothing, so the transition it carried, its
	// events and its activity line are not recorded twice; the writer
	// reads the record again.
	ErrStale = errors.New("store: the stored record moved since it was read")
	// ErrNotResendable is webhook.ErrNotResendable: a dead delivery
	// recorded before payloads were kept.
	ErrNotResendable = webhook.ErrNotResendable
)

// OutboxKey names an outbox entry: its due time and delivery ID.
type OutboxKey struct {
	Due        time.Time
	DeliveryID string
}
