package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/store"
)

// Expired answers are as good as absent to the caller, which overwrites
// them; the rest are swept: RememberAnswer, after its own commit, removes up
// to idemSweepLimit expired records at most once per idemSweepEvery on this
// node (at once again when a sweep hit its limit), as the Pebble store
// does. Nodes sweeping together skip each other's rows (SKIP LOCKED).
const (
	idemSweepLimit = 1024
	idemSweepEvery = time.Minute
)

// validIdemKey is the Pebble store's rule, kept so that both backends
// accept the same keys: a scope that is not empty and holds no '/', and a
// key that is not empty. The key's own rules are the domain's.
func validIdemKey(k idempotency.Key) error {
	if k.Scope == "" || strings.IndexByte(k.Scope, '/') >= 0 || k.Value == "" {
		return fmt.Errorf("postgres: idempotency key %q/%q invalid", k.Scope, k.Value)
	}
	return nil
}

// IdempotentAnswer returns the answer remembered under k, expired or not
// (whether it still counts is the caller's rule), or store.ErrNotFound.
func (s *Store) IdempotentAnswer(ctx context.Context, k idempotency.Key) (*idempotency.Record, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if err := validIdemKey(k); err != nil {
		return nil, err
	}
	var (
		rec              idempotency.Record
		fp               []byte
		created, expires int64
	)
	err := s.pool.QueryRow(ctx, `SELECT fingerprint, status, body, request_id, created_ns, expires_ns
		FROM idempotency WHERE scope = $1 AND key = $2`, k.Scope, k.Value).
		Scan(&fp, &rec.Status, &rec.Body, &rec.RequestID, &created, &expires)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("postgres: read idempotency record: %w", err)
	}
	if len(fp) != len(rec.Fingerprint) {
		return nil, fmt.Errorf("postgres: idempotency record %q/%q: fingerprint of %d bytes", k.Scope, k.Value, len(fp))
	}
	copy(rec.Fingerprint[:], fp)
	rec.CreatedAt, rec.ExpiresAt = fromNanos(created), fromNanos(expires)
	return &rec, nil
}

// RememberAnswer stores rec under k, replacing whatever was there, in one
// committed statement: when it returns, the answer survives a crash of
// this process and of the server. Callers serialise writes of one key;
// writes of different keys run concurrently.
func (s *Store) RememberAnswer(ctx context.Context, k idempotency.Key, rec *idempotency.Record) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := validIdemKey(k); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO idempotency
		(scope, key, fingerprint, status, body, request_id, created_ns, expires_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
			body = excluded.body, request_id = excluded.request_id, created_ns = excluded.created_ns,
			expires_ns = excluded.expires_ns`,
		k.Scope, k.Value, rec.Fingerprint[:], rec.Status, rec.Body, rec.RequestID,
		nanos(rec.CreatedAt), nanos(rec.ExpiresAt)); err != nil {
		return fmt.Errorf("postgres: write idempotency record: %w", err)
	}
	s.maybeSweepAnswers(ctx)
	return nil
}

// maybeSweepAnswers runs a sweep when one is due on this node. Its errors
// are dropped: the records stay expired, hence harmless, and the next sweep
// tries again.
func (s *Store) maybeSweepAnswers(ctx context.Context) {
	now := s.now()
	next := s.idemNextSweep.Load()
	if now.UnixNano() < next || !s.idemNextSweep.CompareAndSwap(next, now.Add(idemSweepEvery).UnixNano()) {
		return
	}
	n, err := s.sweepAnswers(context.WithoutCancel(ctx), now, idemSweepLimit)
	if err == nil && n == idemSweepLimit {
		s.idemNextSweep.Store(now.UnixNano())
	}
}

// SweepAnswers removes up to limit records expired at the store's current
// time, oldest expiry first, and returns how many it removed. Losing the
// removal to a crash is harmless (an expired record is as good as absent),
// so its commit does not wait for the WAL flush.
func (s *Store) SweepAnswers(ctx context.Context, limit int) (int, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	return s.sweepAnswers(ctx, s.now(), limit)
}

func (s *Store) sweepAnswers(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	tag, err := s.async.Exec(ctx, `DELETE FROM idempotency WHERE (scope, key) IN (
		SELECT scope, key FROM idempotency WHERE expires_ns <= $1
		ORDER BY expires_ns LIMIT $2 FOR UPDATE SKIP LOCKED)`, nanos(now), limit)
	if err != nil {
		return 0, fmt.Errorf("postgres: sweep idempotency records: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// ClaimIdempotencyKey claims k for a request of this store's node to act
// on, for at most ttl, and reports whether the claim is this node's: false
// while another node holds a live claim of k. It is what makes one request
// per key act at a time across processes sharing the store, where the
// edge's own bookkeeping covers one process: a request that finds the key
// claimed elsewhere waits (reading IdempotentAnswer) as it waits for one
// in its own process. A claim ends with ReleaseIdempotencyKey, once the
// answer is remembered or the request failed, or when ttl lapses (its node
// died acting). Claiming again a key this node holds renews it.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k idempotency.Key, ttl time.Duration) (bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return false, err
	}
	if err := validIdemKey(k); err != nil {
		return false, err
	}
	if ttl <= 0 {
		return false, fmt.Errorf("postgres: claim idempotency key: ttl %v", ttl)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO idempotency_claims (scope, key, owner, until)
		VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 microsecond')
		ON CONFLICT (scope, key) DO UPDATE SET owner = excluded.owner, until = excluded.until
			WHERE idempotency_claims.until <= clock_timestamp() OR idempotency_claims.owner = excluded.owner`,
		k.Scope, k.Value, s.owner, ttl.Microseconds())
	if err != nil {
		return false, fmt.Errorf("postgres: claim idempotency key: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseIdempotencyKey ends this node's claim of k (none is not an
// error).
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, k idempotency.Key) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := validIdemKey(k); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM idempotency_claims WHERE scope = $1 AND key = $2 AND owner = $3`,
		k.Scope, k.Value, s.owner); err != nil {
		return fmt.Errorf("postgres: release idempotency key: %w", err)
	}
	return nil
}
