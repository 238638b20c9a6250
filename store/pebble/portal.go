package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
	"github.com/swapgate/swapgate/store"
)

// The partner portal's key families (see the package comment):
//
//	portalcode/<email>                       the latest login code sent to an address
//	portalsess/<sessionDigest>               a signed-in browser's session
//	portalpsess/<partnerID>/<sessionDigest>  the index of a partner's sessions
//	portalkey/<partnerID>                    when the partner's key was last rotated
//
// Codes and sessions are kept by digest only (package portal says why);
// the rules that judge them are the domain's, the store only keeps them.
const (
	prefixPortalCode      = "portalcode/"
	prefixPortalSession   = "portalsess/"
	prefixPortalPartnerSe = "portalpsess/"
	prefixPortalKey       = "portalkey/"
)

// portalRecordVersion is the version of every portal record this build
// writes.
const portalRecordVersion = 1

type loginCodeRecord struct {
	V         int       `json:"v"`
	Email     string    `json:"email"`
	PartnerID string    `json:"partnerId"`
	Digest    []byte    `json:"digest"`
	IssuedAt  time.Time `json:"issuedAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	Tries     int       `json:"tries"`
	Used      bool      `json:"used"`
}

type sessionRecord struct {
	V              int       `json:"v"`
	IDDigest       string    `json:"idDigest"`
	PartnerID      string    `json:"partnerId"`
	CSRF           string    `json:"csrf"`
	KeyFingerprint string    `json:"keyFingerprint"`
	CreatedAt      time.Time `json:"createdAt"`
	LastSeen       time.Time `json:"lastSeen"`
}

type keyRotationRecord struct {
	V         int       `json:"v"`
	RotatedAt time.Time `json:"rotatedAt"`
}

func portalCodeKey(email string) []byte {
	return []byte(prefixPortalCode + portal.NormalizeEmail(email))
}
func portalSessionKey(digest string) []byte {
	return []byte(prefixPortalSession + digest)
}
func portalPartnerSessionKey(partnerID, digest string) []byte {
	return []byte(prefixPortalPartnerSe + partnerID + "/" + digest)
}

// validDigest is the shape of a session digest: 64 lower-case hex digits.
func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if !(d[i] >= '0' && d[i] <= '9' || d[i] >= 'a' && d[i] <= 'f') {
			return false
		}
	}
	return true
}

func decodeLoginCode(b []byte) (*portal.LoginCode, error) {
	var r loginCodeRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode login code: %w", err)
	}
	if r.V != portalRecordVersion || len(r.Digest) != 32 {
		return nil, fmt.Errorf("pebblestore: login code record version %d (digest %d bytes) unknown", r.V, len(r.Digest))
	}
	c := &portal.LoginCode{Email: r.Email, PartnerID: r.PartnerID, IssuedAt: r.IssuedAt, ExpiresAt: r.ExpiresAt, Tries: r.Tries, Used: r.Used}
	copy(c.Digest[:], r.Digest)
	return c, nil
}

func encodeLoginCode(c *portal.LoginCode) ([]byte, error) {
	b, err := json.Marshal(loginCodeRecord{V: portalRecordVersion, Email: portal.NormalizeEmail(c.Email), PartnerID: c.PartnerID,
		Digest: c.Digest[:], IssuedAt: c.IssuedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC(), Tries: c.Tries, Used: c.Used})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode login code: %w", err)
	}
	return b, nil
}

func decodeSession(b []byte) (*portal.Session, error) {
	var r sessionRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode session: %w", err)
	}
	if r.V != portalRecordVersion {
		return nil, fmt.Errorf("pebblestore: session record version %d unknown", r.V)
	}
	return &portal.Session{IDDigest: r.IDDigest, PartnerID: r.PartnerID, CSRF: r.CSRF, KeyFingerprint: r.KeyFingerprint,
		CreatedAt: r.CreatedAt, LastSeen: r.LastSeen}, nil
}

func encodeSession(s *portal.Session) ([]byte, error) {
	b, err := json.Marshal(sessionRecord{V: portalRecordVersion, IDDigest: s.IDDigest, PartnerID: s.PartnerID, CSRF: s.CSRF,
		KeyFingerprint: s.KeyFingerprint, CreatedAt: s.CreatedAt.UTC(), LastSeen: s.LastSeen.UTC()})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode session: %w", err)
	}
	return b, nil
}

// PartnerByEmail returns the partner whose contact address is email
// (compared as portal.NormalizeEmail writes both): the portal's sign-in.
// Addresses are not unique among partners; of several, the oldest enabled
// one is returned, then the oldest disabled one. None is store.ErrNotFound.
func (s *Store) PartnerByEmail(ctx context.Context, email string) (*account.Partner, error) {
	ps, err := s.ListPartners(ctx)
	if err != nil {
		return nil, err
	}
	return pickByEmail(ps, email)
}

// pickByEmail chooses among partners as PartnerByEmail promises.
func pickByEmail(ps []*account.Partner, email string) (*account.Partner, error) {
	want := portal.NormalizeEmail(email)
	var best *account.Partner
	for _, p := range ps {
		if portal.NormalizeEmail(p.Email) != want || want == "" {
			continue
		}
		switch {
		case best == nil,
			best.Disabled && !p.Disabled,
			best.Disabled == p.Disabled && p.CreatedAt.Before(best.CreatedAt):
			best = p
		}
	}
	if best == nil {
		return nil, store.ErrNotFound
	}
	return best, nil
}

// PutLoginCode stores c as the address's latest code, replacing any
// earlier one (whose tries and use go with it), synced.
func (s *Store) PutLoginCode(ctx context.Context, c *portal.LoginCode) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	val, err := encodeLoginCode(c)
	if err != nil {
		return err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	if err := s.db.Set(portalCodeKey(c.Email), val, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: store login code: %w", err)
	}
	return nil
}

// UpdateLoginCode applies fn to the address's latest code and stores the
// code as fn left it, whatever fn returns (a wrong try counts even though
// the check failed), then returns fn's error. Checks of one address are
// serialised, so a code is used once however many browsers send it at
// once. No code is store.ErrNotFound, and fn is not called.
func (s *Store) UpdateLoginCode(ctx context.Context, email string, fn func(*portal.LoginCode) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	val, err := s.get(portalCodeKey(email))
	if err != nil {
		return err
	}
	c, err := decodeLoginCode(val)
	if err != nil {
		return err
	}
	fnErr := fn(c)
	if val, err = encodeLoginCode(c); err != nil {
		return err
	}
	if err := s.db.Set(portalCodeKey(email), val, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: store login code: %w", err)
	}
	return fnErr
}

// CreateSession stores a new session and its partner index entry in one
// synced batch.
func (s *Store) CreateSession(ctx context.Context, se *portal.Session) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !validDigest(se.IDDigest) || !account.ValidID(se.PartnerID) {
		return fmt.Errorf("pebblestore: create session: malformed digest or partner id %q", se.PartnerID)
	}
	val, err := encodeSession(se)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(portalSessionKey(se.IDDigest), val, nil); err != nil {
		return fmt.Errorf("pebblestore: create session: %w", err)
	}
	if err := b.Set(portalPartnerSessionKey(se.PartnerID, se.IDDigest), nil, nil); err != nil {
		return fmt.Errorf("pebblestore: create session: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: create session: commit: %w", err)
	}
	return nil
}

// Session reads a session by its digest; none is store.ErrNotFound.
func (s *Store) Session(ctx context.Context, digest string) (*portal.Session, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !validDigest(digest) {
		return nil, store.ErrNotFound
	}
	val, err := s.get(portalSessionKey(digest))
	if err != nil {
		return nil, err
	}
	return decodeSession(val)
}

// UpdateSession applies fn to a stored session and writes it back, synced;
// none is store.ErrNotFound. The portal moves its last-seen time and, after the
// session rotated its partner's key, its key fingerprint.
func (s *Store) UpdateSession(ctx context.Context, digest string, fn func(*portal.Session)) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !validDigest(digest) {
		return store.ErrNotFound
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	val, err := s.get(portalSessionKey(digest))
	if err != nil {
		return err
	}
	se, err := decodeSession(val)
	if err != nil {
		return err
	}
	fn(se)
	se.IDDigest = digest
	if val, err = encodeSession(se); err != nil {
		return err
	}
	if err := s.db.Set(portalSessionKey(digest), val, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: update session: %w", err)
	}
	return nil
}

// DeleteSession removes a session (signing out); a missing one is no
// error.
func (s *Store) DeleteSession(ctx context.Context, digest string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !validDigest(digest) {
		return nil
	}
	// Under the lock UpdateSession takes, so that a session signed out
	// while a request touches it is not written back.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	val, err := s.get(portalSessionKey(digest))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	se, err := decodeSession(val)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Delete(portalSessionKey(digest), nil)
	_ = b.Delete(portalPartnerSessionKey(se.PartnerID, digest), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: delete session: %w", err)
	}
	return nil
}

// EndPartnerSessions removes every session of the partner but the one
// whose digest is except ("" keeps none), in one synced batch, and returns
// how many it removed.
func (s *Store) EndPartnerSessions(ctx context.Context, partnerID, except string) (int, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	if !account.ValidID(partnerID) {
		return 0, nil
	}
	prefix := prefixPortalPartnerSe + partnerID + "/"
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return 0, fmt.Errorf("pebblestore: partner sessions: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		d := string(it.Key()[len(prefix):])
		if d == except {
			continue
		}
		_ = b.Delete(portalSessionKey(d), nil)
		_ = b.Delete(it.Key(), nil)
		n++
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("pebblestore: partner sessions: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return 0, fmt.Errorf("pebblestore: end partner sessions: %w", err)
	}
	return n, nil
}

// RecordKeyRotation keeps when the partner's API key was last rotated,
// synced.
func (s *Store) RecordKeyRotation(ctx context.Context, partnerID string, at time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(partnerID) {
		return fmt.Errorf("pebblestore: key rotation: invalid partner id %q", partnerID)
	}
	val, err := json.Marshal(keyRotationRecord{V: portalRecordVersion, RotatedAt: at.UTC()})
	if err != nil {
		return fmt.Errorf("pebblestore: encode key rotation: %w", err)
	}
	if err := s.db.Set([]byte(prefixPortalKey+partnerID), val, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: store key rotation: %w", err)
	}
	return nil
}

// KeyRotatedAt is when the partner's key was last rotated; the zero time
// when it never was (its first key is still in use).
func (s *Store) KeyRotatedAt(ctx context.Context, partnerID string) (time.Time, error) {
	if err := s.checkOpen(ctx); err != nil {
		return time.Time{}, err
	}
	if !account.ValidID(partnerID) {
		return time.Time{}, nil
	}
	val, err := s.get([]byte(prefixPortalKey + partnerID))
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, err
	}
	var r keyRotationRecord
	if err := json.Unmarshal(val, &r); err != nil {
		return time.Time{}, fmt.Errorf("pebblestore: decode key rotation: %w", err)
	}
	return r.RotatedAt, nil
}
