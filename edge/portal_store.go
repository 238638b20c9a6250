package edge

import (
	"context"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
)

// PortalStore keeps the portal's sign-in state: login codes by address,
// sessions by the digest of their id, and the date of each partner's last
// key rotation; it also finds a partner by contact address and by id. Both
// stores satisfy it (internal/storecontract.RunPortal holds them to it).
// Missing things are account.ErrNotFound. Every acknowledged write is
// durable.
type PortalStore interface {
	// PartnerByEmail is the partner signing in with email: of several with
	// that address, the oldest enabled one.
	PartnerByEmail(ctx context.Context, email string) (*account.Partner, error)
	Partner(ctx context.Context, id string) (*account.Partner, error)
	// PutLoginCode replaces the address's latest code.
	PutLoginCode(ctx context.Context, c *portal.LoginCode) error
	// UpdateLoginCode applies fn to the address's code under a lock and
	// stores it as fn left it, whatever fn returns; it returns fn's error.
	UpdateLoginCode(ctx context.Context, email string, fn func(*portal.LoginCode) error) error
	CreateSession(ctx context.Context, s *portal.Session) error
	Session(ctx context.Context, digest string) (*portal.Session, error)
	// UpdateSession stores fn's changes to the last-seen time and the key
	// fingerprint.
	UpdateSession(ctx context.Context, digest string, fn func(*portal.Session)) error
	DeleteSession(ctx context.Context, digest string) error
	// EndPartnerSessions removes every session of the partner but except's.
	EndPartnerSessions(ctx context.Context, partnerID, except string) (int, error)
	// UpdateSignInCounts applies fn to the sign-in limits' counters of
	// keys (in their order; a zero portal.Counter for a key not counted)
	// under a lock that every node sharing the store respects, and keeps
	// them as fn left them when fn returns nil; it returns fn's error. So
	// the limits are the cluster's, not each node's.
	UpdateSignInCounts(ctx context.Context, now time.Time, keys []string, fn func([]portal.Counter) error) error
	RecordKeyRotation(ctx context.Context, partnerID string, at time.Time) error
	// KeyRotatedAt is the zero time when the key was never rotated.
	KeyRotatedAt(ctx context.Context, partnerID string) (time.Time, error)
}
