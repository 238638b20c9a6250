package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// validWalletKey checks partnerID and ecosystem as the Pebble store does
// (there they are key components; here the same rule keeps both backends
// accepting the same input). The address is validated by the caller,
// which knows the ecosystem's codec.
func validWalletKey(partnerID, ecosystem string) error {
	if !account.ValidID(partnerID) {
		return fmt.Errorf("postgres: fee wallet: invalid partner id %q", partnerID)
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("postgres: fee wallet: invalid ecosystem %q", ecosystem)
	}
	return nil
}

// FeeWallet returns the partner's current payout address in ecosystem. The
// quote engine calls it to refuse a fee-bearing quote with
// PARTNER_WALLET_NOT_REGISTERED, and settlement calls it to pick the payee,
// so a replaced or deleted wallet affects only what happens after the
// change.
//
// Answers are cached in memory while the store hears every node's wallet
// changes (walletcache.go): a change made through this store is seen by
// every call after it returns; one made by another node, once its
// notification arrives, milliseconds after its commit. Settlement reads
// the wallets from the database, never from the cache.
func (s *Store) FeeWallet(ctx context.Context, partnerID, ecosystem string) (addr string, ok bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", false, err
	}
	if validWalletKey(partnerID, ecosystem) != nil {
		return "", false, nil
	}
	k := walletKey{partnerID, ecosystem}
	addr, cached, gen := s.wallets.lookup(k)
	if cached {
		return addr, addr != "", nil
	}
	err = s.pool.QueryRow(ctx, `SELECT address FROM fee_wallets WHERE partner_id = $1 AND ecosystem = $2`,
		partnerID, ecosystem).Scan(&addr)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		addr = ""
	case err != nil:
		return "", false, fmt.Errorf("postgres: fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	s.wallets.fill(k, addr, gen)
	return addr, addr != "", nil
}

// FeeWallets lists a partner's wallets in the canonical ecosystem order
// (unknown ecosystems, if any were stored, last, in byte order).
func (s *Store) FeeWallets(ctx context.Context, partnerID string) ([]account.FeeWallet, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	out := []account.FeeWallet{}
	if !account.ValidID(partnerID) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT ecosystem, address, created_ns, updated_ns FROM fee_wallets
		WHERE partner_id = $1 ORDER BY ecosystem`, partnerID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list fee wallets of %s: %w", partnerID, err)
	}
	defer rows.Close()
	for rows.Next() {
		w := account.FeeWallet{PartnerID: partnerID}
		var created, updated int64
		if err := rows.Scan(&w.Ecosystem, &w.Address, &created, &updated); err != nil {
			return nil, fmt.Errorf("postgres: list fee wallets of %s: %w", partnerID, err)
		}
		w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list fee wallets of %s: %w", partnerID, err)
	}
	slices.SortStableFunc(out, func(a, b account.FeeWallet) int {
		return account.EcosystemRank(a.Ecosystem) - account.EcosystemRank(b.Ecosystem)
	})
	return out, nil
}

// PutFeeWallet registers or replaces the partner's wallet in ecosystem, in
// one committed statement (an upsert, so that two concurrent registrations
// cannot both create it). A replacement keeps the original CreatedAt and
// moves UpdatedAt: a wallet acknowledged to the partner is the one the next
// settlement pays.
func (s *Store) PutFeeWallet(ctx context.Context, partnerID, ecosystem, address string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := validWalletKey(partnerID, ecosystem); err != nil {
		return err
	}
	if address == "" {
		return fmt.Errorf("postgres: fee wallet %s/%s: empty address", partnerID, ecosystem)
	}
	now := nanos(s.now())
	// The change is notified to every node's cache in the same statement,
	// hence the same transaction: sent at its commit, never without it.
	_, err := s.pool.Exec(ctx, `WITH w AS (
			INSERT INTO fee_wallets (partner_id, ecosystem, address, created_ns, updated_ns)
			VALUES ($1, $2, $3, $4, $4)
			ON CONFLICT (partner_id, ecosystem) DO UPDATE SET address = excluded.address, updated_ns = excluded.updated_ns
			RETURNING 1)
		SELECT pg_notify($5, $6) FROM w`,
		partnerID, ecosystem, address, now, walletChannel, s.owner+"/"+partnerID+"/"+ecosystem)
	// Dropped whatever the outcome: after a failure the next read fills it
	// again from what is stored.
	s.wallets.invalidate(walletKey{partnerID, ecosystem})
	if err != nil {
		return fmt.Errorf("postgres: write fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	return nil
}

// DeleteFeeWallet removes the partner's wallet in ecosystem, or returns
// store.ErrNotFound when there is none. Pending earnings stay pending
// until a new wallet is registered; rows already settled keep the address
// they were paid to.
func (s *Store) DeleteFeeWallet(ctx context.Context, partnerID, ecosystem string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if validWalletKey(partnerID, ecosystem) != nil {
		return store.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `WITH d AS (DELETE FROM fee_wallets WHERE partner_id = $1 AND ecosystem = $2 RETURNING 1)
		SELECT pg_notify($3, $4) FROM d`, partnerID, ecosystem, walletChannel, s.owner+"/"+partnerID+"/"+ecosystem)
	s.wallets.invalidate(walletKey{partnerID, ecosystem})
	if err != nil {
		return fmt.Errorf("postgres: delete fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: no %s fee wallet for partner %s", store.ErrNotFound, ecosystem, partnerID)
	}
	return nil
}

// CacheStats reports the store's cache, the fee wallets' ("fee_wallet"),
// with its hits and misses so far, as the Pebble store reports its own.
func (s *Store) CacheStats(visit func(cache string, hits, misses uint64)) {
	visit("fee_wallet", s.wallets.hits.Load(), s.wallets.misses.Load())
}
