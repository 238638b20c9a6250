package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// partnerColumns are the columns scanPartner reads, in its order.
const partnerColumns = `id, name, email, swap_fee_bps, onramp_fee_bps, heavy_per_min, read_per_min,
	enabled_ecosystems, key_digest, disabled, webhooks_enabled, created_ns, updated_ns, allowed_origins`

// scanPartner reads one partners row.
func scanPartner(row pgx.Row) (*account.Partner, error) {
	var (
		p                 account.Partner
		digest            []byte
		created, updated  int64
		enabledEcosystems []string
		allowedOrigins    []string
	)
	if err := row.Scan(&p.ID, &p.Name, &p.Email, &p.SwapFeeBps, &p.OnrampFeeBps, &p.HeavyPerMin, &p.ReadPerMin,
		&enabledEcosystems, &digest, &p.Disabled, &p.WebhooksEnabled, &created, &updated, &allowedOrigins); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, store.ErrNotFound
		}
		return nil, err
	}
	if len(digest) != len(p.KeyDigest) {
		return nil, fmt.Errorf("partner %q has a malformed key digest", p.ID)
	}
	copy(p.KeyDigest[:], digest)
	p.EnabledEcosystems = enabledEcosystems
	if len(allowedOrigins) > 0 {
		p.AllowedOrigins = allowedOrigins
	}
	p.CreatedAt, p.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &p, nil
}

// CreatePartner stores a new partner with its key digest in one committed
// transaction. An empty p.ID is replaced by a generated one; zero
// CreatedAt and UpdatedAt are set to now. p is updated in place with the
// stored values. It fails with store.ErrExists when the ID or the key
// digest is already registered (the table's primary key and unique
// constraint decide, so two nodes cannot both create either). Every
// process sharing the store hears of it (OnPartnerChange).
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
		return fmt.Errorf("postgres: create partner: invalid id %q", p.ID)
	}
	if p.KeyDigest == ([32]byte{}) {
		return fmt.Errorf("postgres: create partner %q: empty key digest", p.ID)
	}
	now := s.now().UTC()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	// Every process sharing the store hears of the new partner (listen.go),
	// from the same statement, hence only if it commits.
	_, err := s.pool.Exec(ctx, `WITH p AS (INSERT INTO partners (`+partnerColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id)
		SELECT pg_notify($15, id) FROM p`,
		p.ID, p.Name, p.Email, p.SwapFeeBps, p.OnrampFeeBps, p.HeavyPerMin, p.ReadPerMin,
		p.EnabledEcosystems, p.KeyDigest[:], p.Disabled, p.WebhooksEnabled, nanos(p.CreatedAt), nanos(p.UpdatedAt),
		origins(p.AllowedOrigins), partnerChannel)
	switch uniqueViolation(err) {
	case "":
	case "partners_key_digest_key":
		return fmt.Errorf("postgres: create partner %q: key digest: %w", p.ID, store.ErrExists)
	default:
		return fmt.Errorf("postgres: create partner %q: %w", p.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: create partner %q: %w", p.ID, err)
	}
	return nil
}

// Partner returns the partner with the given ID, or store.ErrNotFound.
func (s *Store) Partner(ctx context.Context, id string) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(id) {
		return nil, fmt.Errorf("postgres: partner %q: %w", id, store.ErrNotFound)
	}
	p, err := scanPartner(s.pool.QueryRow(ctx, `SELECT `+partnerColumns+` FROM partners WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("postgres: partner %q: %w", id, err)
	}
	return p, nil
}

// PartnerByKeyDigest returns the partner whose current API key has digest
// d, or store.ErrNotFound. Disabled partners are returned too;
// refusing them is the caller's decision.
func (s *Store) PartnerByKeyDigest(ctx context.Context, d [32]byte) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	p, err := scanPartner(s.pool.QueryRow(ctx, `SELECT `+partnerColumns+` FROM partners WHERE key_digest = $1`, d[:]))
	if err != nil {
		return nil, fmt.Errorf("postgres: partner by key digest: %w", err)
	}
	return p, nil
}

// ListPartners returns every partner ordered by ID (byte order, as the
// column's collation is "C").
func (s *Store) ListPartners(ctx context.Context) ([]*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+partnerColumns+` FROM partners ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list partners: %w", err)
	}
	defer rows.Close()
	var out []*account.Partner
	for rows.Next() {
		p, err := scanPartner(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list partners: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list partners: %w", err)
	}
	return out, nil
}

// UpdatePartner applies fn to a copy of the partner and stores the result
// with UpdatedAt set to now, in one committed transaction that holds the
// partner's row locked (SELECT … FOR UPDATE) from the read to the write, so
// concurrent callers, on any node, never lose one another's changes. A new
// KeyDigest replaces the old in the same row, so the old key stops working
// exactly when the new one starts; one already registered to a partner is
// store.ErrExists. fn must not change ID or CreatedAt. An error from
// fn aborts the update and is returned as is. Every process sharing the
// store hears of the change (OnPartnerChange), so that a rotated key or a
// disabled account stops working everywhere.
func (s *Store) UpdatePartner(ctx context.Context, id string, fn func(*account.Partner) error) (*account.Partner, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(id) {
		return nil, fmt.Errorf("postgres: update partner %q: %w", id, store.ErrNotFound)
	}
	var out *account.Partner
	var fnErr error
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		old, err := scanPartner(tx.QueryRow(ctx, `SELECT `+partnerColumns+` FROM partners WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return fmt.Errorf("postgres: update partner %q: %w", id, err)
		}
		p := old.Clone()
		if err := fn(p); err != nil {
			fnErr = err
			return err
		}
		if p.ID != old.ID || !p.CreatedAt.Equal(old.CreatedAt) {
			return fmt.Errorf("postgres: update partner %q: id and createdAt are immutable", id)
		}
		if p.KeyDigest == ([32]byte{}) {
			return fmt.Errorf("postgres: update partner %q: empty key digest", id)
		}
		p.UpdatedAt = s.now().UTC()
		_, err = tx.Exec(ctx, `UPDATE partners SET name = $2, email = $3, swap_fee_bps = $4, onramp_fee_bps = $5,
			heavy_per_min = $6, read_per_min = $7, enabled_ecosystems = $8, key_digest = $9, disabled = $10,
			webhooks_enabled = $11, updated_ns = $12, allowed_origins = $13 WHERE id = $1`,
			id, p.Name, p.Email, p.SwapFeeBps, p.OnrampFeeBps, p.HeavyPerMin, p.ReadPerMin, p.EnabledEcosystems,
			p.KeyDigest[:], p.Disabled, p.WebhooksEnabled, nanos(p.UpdatedAt), origins(p.AllowedOrigins))
		if uniqueViolation(err) != "" {
			return fmt.Errorf("postgres: update partner %q: key digest: %w", id, store.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("postgres: update partner %q: %w", id, err)
		}
		// Every process sharing the store hears of the change at commit.
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, partnerChannel, id); err != nil {
			return fmt.Errorf("postgres: update partner %q: notify: %w", id, err)
		}
		out = p
		return nil
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, err
	}
	return out.Clone(), nil
}

// origins is a partner's allowedOrigins as the NOT NULL column takes them:
// none is the empty array, not NULL.
func origins(o []string) []string {
	if o == nil {
		return []string{}
	}
	return o
}
