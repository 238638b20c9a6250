package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/portal"
	"github.com/swapgate/swapgate/store"
)

// The partner portal's codes, sessions and key rotation dates
// (migrations/0012_portal.sql), with the Pebble store's signatures and
// promises (store/pebble/portal.go): every acknowledged write is a committed
// transaction; a code's check is a read-modify-write under the row's lock,
// so that a code is used once across every process sharing the database.

// PartnerByEmail returns the partner whose contact address is email, the
// oldest enabled one of several, then the oldest disabled one; none is
// store.ErrNotFound.
func (s *Store) PartnerByEmail(ctx context.Context, email string) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	want := portal.NormalizeEmail(email)
	if want == "" {
		return nil, store.ErrNotFound
	}
	p, err := scanPartner(s.pool.QueryRow(ctx, `SELECT `+partnerColumns+` FROM partners
		WHERE lower(btrim(email)) = $1 ORDER BY disabled, created_ns, id LIMIT 1`, want))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("postgres: partner by email: %w", err)
	}
	return p, nil
}

// PutLoginCode stores c as the address's latest code, replacing any
// earlier one.
func (s *Store) PutLoginCode(ctx context.Context, c *portal.LoginCode) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO portal_codes (email, partner_id, digest, issued_ns, expires_ns, tries, used)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (email) DO UPDATE SET partner_id = $2, digest = $3, issued_ns = $4, expires_ns = $5, tries = $6, used = $7`,
		portal.NormalizeEmail(c.Email), c.PartnerID, c.Digest[:], nanos(c.IssuedAt), nanos(c.ExpiresAt), c.Tries, c.Used)
	if err != nil {
		return fmt.Errorf("postgres: store login code: %w", err)
	}
	return nil
}

// UpdateLoginCode applies fn to the address's latest code, its row locked,
// and stores the code as fn left it whatever fn returns, then returns fn's
// error; no code is store.ErrNotFound and fn is not called.
func (s *Store) UpdateLoginCode(ctx context.Context, email string, fn func(*portal.LoginCode) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	var fnErr error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			c               portal.LoginCode
			digest          []byte
			issued, expires int64
		)
		err := tx.QueryRow(ctx, `SELECT email, partner_id, digest, issued_ns, expires_ns, tries, used FROM portal_codes
			WHERE email = $1 FOR UPDATE`, portal.NormalizeEmail(email)).
			Scan(&c.Email, &c.PartnerID, &digest, &issued, &expires, &c.Tries, &c.Used)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("postgres: read login code: %w", err)
		}
		copy(c.Digest[:], digest)
		c.IssuedAt, c.ExpiresAt = fromNanos(issued), fromNanos(expires)
		fnErr = fn(&c)
		if _, err := tx.Exec(ctx, `UPDATE portal_codes SET tries = $2, used = $3 WHERE email = $1`,
			c.Email, c.Tries, c.Used); err != nil {
			return fmt.Errorf("postgres: store login code: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fnErr
}

// sessionColumns are the columns scanSession reads, in its order.
const sessionColumns = `id_digest, partner_id, csrf, key_fingerprint, created_ns, last_seen_ns`

func scanSession(row pgx.Row) (*portal.Session, error) {
	var se portal.Session
	var created, seen int64
	if err := row.Scan(&se.IDDigest, &se.PartnerID, &se.CSRF, &se.KeyFingerprint, &created, &seen); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, store.ErrNotFound
		}
		return nil, fmt.Errorf("postgres: read session: %w", err)
	}
	se.CreatedAt, se.LastSeen = fromNanos(created), fromNanos(seen)
	return &se, nil
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, se *portal.Session) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(se.IDDigest) != 64 || !account.ValidID(se.PartnerID) {
		return fmt.Errorf("postgres: create session: malformed digest or partner id %q", se.PartnerID)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO portal_sessions (`+sessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		se.IDDigest, se.PartnerID, se.CSRF, se.KeyFingerprint, nanos(se.CreatedAt), nanos(se.LastSeen))
	if err != nil {
		return fmt.Errorf("postgres: create session: %w", err)
	}
	return nil
}

// Session reads a session by its digest; none is store.ErrNotFound.
func (s *Store) Session(ctx context.Context, digest string) (*portal.Session, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	return scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM portal_sessions WHERE id_digest = $1`, digest))
}

// UpdateSession applies fn to a stored session, its row locked, and writes
// back its last-seen time and key fingerprint; none is
// store.ErrNotFound.
func (s *Store) UpdateSession(ctx context.Context, digest string, fn func(*portal.Session)) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		se, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM portal_sessions WHERE id_digest = $1 FOR UPDATE`, digest))
		if err != nil {
			return err
		}
		fn(se)
		if _, err := tx.Exec(ctx, `UPDATE portal_sessions SET key_fingerprint = $2, last_seen_ns = $3 WHERE id_digest = $1`,
			digest, se.KeyFingerprint, nanos(se.LastSeen)); err != nil {
			return fmt.Errorf("postgres: update session: %w", err)
		}
		return nil
	})
}

// DeleteSession removes a session; a missing one is no error.
func (s *Store) DeleteSession(ctx context.Context, digest string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM portal_sessions WHERE id_digest = $1`, digest); err != nil {
		return fmt.Errorf("postgres: delete session: %w", err)
	}
	return nil
}

// EndPartnerSessions removes every session of the partner but except's
// and returns how many it removed.
func (s *Store) EndPartnerSessions(ctx context.Context, partnerID, except string) (int, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM portal_sessions WHERE partner_id = $1 AND id_digest <> $2`, partnerID, except)
	if err != nil {
		return 0, fmt.Errorf("postgres: end partner sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// RecordKeyRotation keeps when the partner's API key was last rotated.
func (s *Store) RecordKeyRotation(ctx context.Context, partnerID string, at time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(partnerID) {
		return fmt.Errorf("postgres: key rotation: invalid partner id %q", partnerID)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO portal_key_rotations (partner_id, rotated_ns) VALUES ($1, $2)
		ON CONFLICT (partner_id) DO UPDATE SET rotated_ns = $2`, partnerID, nanos(at))
	if err != nil {
		return fmt.Errorf("postgres: store key rotation: %w", err)
	}
	return nil
}

// KeyRotatedAt is when the partner's key was last rotated; the zero time
// when it never was.
func (s *Store) KeyRotatedAt(ctx context.Context, partnerID string) (time.Time, error) {
	if err := s.checkOpen(ctx); err != nil {
		return time.Time{}, err
	}
	var ns int64
	err := s.pool.QueryRow(ctx, `SELECT rotated_ns FROM portal_key_rotations WHERE partner_id = $1`, partnerID).Scan(&ns)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: key rotation: %w", err)
	}
	return fromNanos(ns), nil
}

// UpdateSignInCounts applies fn to the portal's sign-in counters of keys
// (in their order; a zero portal.Counter for a key not counted) with their
// rows locked, so that every node sharing the database counts in the same
// rows, and stores them as fn left them when it returns nil; it returns
// fn's error, and then stores nothing. Rows are created (and locked) in
// key order, so that two requests sharing keys wait for one another
// rather than deadlock; a few rows whose window started more than
// portal.LimitRetention before now are swept in the same transaction,
// skipping any another transaction holds.
func (s *Store) UpdateSignInCounts(ctx context.Context, now time.Time, keys []string, fn func([]portal.Counter) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var fnErr error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO portal_limits (key, start_ns, n)
			SELECT k, 0, 0 FROM unnest($1::text[]) AS k ORDER BY k ON CONFLICT (key) DO NOTHING`, sorted); err != nil {
			return fmt.Errorf("postgres: create sign-in counters: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT key, start_ns, n FROM portal_limits WHERE key = ANY($1) ORDER BY key FOR UPDATE`, sorted)
		if err != nil {
			return fmt.Errorf("postgres: read sign-in counters: %w", err)
		}
		got := map[string]portal.Counter{}
		for rows.Next() {
			var (
				k     string
				start int64
				n     int
			)
			if err := rows.Scan(&k, &start, &n); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: read sign-in counters: %w", err)
			}
			if n > 0 {
				got[k] = portal.Counter{Start: fromNanos(start), N: n}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: read sign-in counters: %w", err)
		}
		cs := make([]portal.Counter, len(keys))
		for i, k := range keys {
			cs[i] = got[k]
		}
		if fnErr = fn(cs); fnErr != nil {
			return fnErr
		}
		starts, ns := make([]int64, len(keys)), make([]int32, len(keys))
		for i, c := range cs {
			starts[i], ns[i] = nanos(c.Start), int32(c.N)
		}
		if _, err := tx.Exec(ctx, `UPDATE portal_limits SET start_ns = u.s, n = u.n
			FROM unnest($1::text[], $2::bigint[], $3::integer[]) AS u(k, s, n) WHERE key = u.k`, keys, starts, ns); err != nil {
			return fmt.Errorf("postgres: store sign-in counters: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM portal_limits WHERE key IN (
			SELECT key FROM portal_limits WHERE start_ns < $1 AND key <> ALL($2) LIMIT 100 FOR UPDATE SKIP LOCKED)`,
			nanos(now.Add(-portal.LimitRetention)), sorted); err != nil {
			return fmt.Errorf("postgres: sweep sign-in counters: %w", err)
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// PortalCodeKey is the key login code digests are keyed with
// (local.SecretSealer.PortalCodeKey says which): every node opened
// with the database's secrets.key derives the same.
func (s *Store) PortalCodeKey() []byte { return s.seal.PortalCodeKey() }
