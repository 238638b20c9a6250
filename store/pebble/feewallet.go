package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// prefixFeeWallet starts feewallet/<partnerID>/<ecosystem>: at most one
// payout address per partner and settlement ecosystem.
const prefixFeeWallet = "feewallet/"

// feeWalletRecordVersion is the encoding version of feeWalletRecord.
const feeWalletRecordVersion = 1

// feeWalletRecord is the on-disk JSON form of a FeeWallet. The partner and
// ecosystem are in the key and are not repeated.
type feeWalletRecord struct {
	V         int       `json:"v"`
	Address   string    `json:"address"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func feeWalletPrefix(partnerID string) []byte {
	return []byte(prefixFeeWallet + partnerID + "/")
}

func feeWalletKey(partnerID, ecosystem string) []byte {
	return append(feeWalletPrefix(partnerID), ecosystem...)
}

func decodeFeeWallet(partnerID, ecosystem string, b []byte) (*account.FeeWallet, error) {
	var r feeWalletRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	if r.V != feeWalletRecordVersion {
		return nil, fmt.Errorf("pebblestore: fee wallet %s/%s has record version %d, want %d",
			partnerID, ecosystem, r.V, feeWalletRecordVersion)
	}
	return &account.FeeWallet{PartnerID: partnerID, Ecosystem: ecosystem, Address: r.Address,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// validWalletKey checks that partnerID and ecosystem are safe key
// components; the address itself is validated by the caller, which knows the
// ecosystem's codec.
func validWalletKey(partnerID, ecosystem string) error {
	if !account.ValidID(partnerID) {
		return fmt.Errorf("pebblestore: fee wallet: invalid partner id %q", partnerID)
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("pebblestore: fee wallet: invalid ecosystem %q", ecosystem)
	}
	return nil
}

// FeeWallet returns the partner's current payout address in ecosystem. The
// quote engine calls it to refuse a fee-bearing quote with
// PARTNER_WALLET_NOT_REGISTERED, and settlement calls it to pick the payee,
// so a replaced or deleted wallet affects only what happens after the change.
//
// Answers are cached in memory: every partner quote asks, and wallets change
// rarely. Fills and writes both update the cache under its lock, a write
// only after its commit, so the last update is always the newest
// acknowledged wallet (readCache).
func (s *Store) FeeWallet(ctx context.Context, partnerID, ecosystem string) (addr string, ok bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", false, err
	}
	if validWalletKey(partnerID, ecosystem) != nil {
		return "", false, nil
	}
	addr, err = s.wallets.get(walletKey{partnerID, ecosystem}, func() (string, error) {
		w, err := s.feeWallet(partnerID, ecosystem)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "", nil
		case err != nil:
			return "", err
		}
		return w.Address, nil
	})
	if err != nil {
		return "", false, err
	}
	return addr, addr != "", nil
}

// CacheStats reports the store's caches, by name, with their hits and
// misses so far: the fee-wallet cache in front of Pebble ("fee_wallet"),
// the webhook registrations' ("webhook") and Pebble's block cache
// ("pebble_block", sized by Options.CacheSize). A closed store reports its
// own caches alone.
func (s *Store) CacheStats(visit func(cache string, hits, misses uint64)) {
	visit("fee_wallet", s.wallets.hits.Load(), s.wallets.misses.Load())
	visit("webhook", s.hooks.hits.Load(), s.hooks.misses.Load())
	if s.closed.Load() {
		return
	}
	m := s.db.Metrics()
	visit("pebble_block", uint64(m.BlockCache.Hits), uint64(m.BlockCache.Misses))
}

// setWalletCache records a wallet write in the cache (known false: the
// write's outcome is unknown, so the entry is dropped).
func (s *Store) setWalletCache(partnerID, ecosystem, addr string, known bool) {
	if known {
		s.wallets.set(walletKey{partnerID, ecosystem}, addr)
	} else {
		s.wallets.drop(walletKey{partnerID, ecosystem})
	}
}

// walletKey is the fee-wallet cache's key.
type walletKey struct{ partner, ecosystem string }

func (s *Store) feeWallet(partnerID, ecosystem string) (*account.FeeWallet, error) {
	val, err := s.get(feeWalletKey(partnerID, ecosystem))
	if err != nil {
		return nil, err
	}
	return decodeFeeWallet(partnerID, ecosystem, val)
}

// FeeWallets lists a partner's wallets in the canonical ecosystem order
// (unknown ecosystems, if any were stored, last). It reads only that
// partner's key range.
func (s *Store) FeeWallets(ctx context.Context, partnerID string) ([]account.FeeWallet, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(partnerID) {
		return []account.FeeWallet{}, nil
	}
	prefix := feeWalletPrefix(partnerID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: fee wallet iterator: %w", err)
	}
	defer it.Close()
	out := []account.FeeWallet{}
	for ok := it.First(); ok; ok = it.Next() {
		eco := string(it.Key()[len(prefix):])
		w, err := decodeFeeWallet(partnerID, eco, it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list fee wallets of %s: %w", partnerID, err)
	}
	slices.SortStableFunc(out, func(a, b account.FeeWallet) int {
		return account.EcosystemRank(a.Ecosystem) - account.EcosystemRank(b.Ecosystem)
	})
	return out, nil
}

// PutFeeWallet registers or replaces the partner's wallet in ecosystem. A
// replacement keeps the original CreatedAt and moves UpdatedAt. The write is synced: a wallet acknowledged to the partner
// is the one the next settlement pays.
func (s *Store) PutFeeWallet(ctx context.Context, partnerID, ecosystem, address string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := validWalletKey(partnerID, ecosystem); err != nil {
		return err
	}
	if address == "" {
		return fmt.Errorf("pebblestore: fee wallet %s/%s: empty address", partnerID, ecosystem)
	}
	now := s.now().UTC()
	// partnerMu serialises this read-modify-write with other changes to the
	// partner's records, so two concurrent upserts cannot both believe they
	// created the wallet.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	w := &account.FeeWallet{PartnerID: partnerID, Ecosystem: ecosystem, Address: address, CreatedAt: now, UpdatedAt: now}
	prev, err := s.feeWallet(partnerID, ecosystem)
	switch {
	case err == nil:
		w.CreatedAt = prev.CreatedAt
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("pebblestore: read fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	val, err := json.Marshal(feeWalletRecord{V: feeWalletRecordVersion, Address: w.Address,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt})
	if err != nil {
		return fmt.Errorf("pebblestore: encode fee wallet: %w", err)
	}
	if err := s.db.Set(feeWalletKey(partnerID, ecosystem), val, pebble.Sync); err != nil {
		s.setWalletCache(partnerID, ecosystem, "", false)
		return fmt.Errorf("pebblestore: write fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	s.setWalletCache(partnerID, ecosystem, address, true)
	return nil
}

// DeleteFeeWallet removes the partner's wallet in ecosystem, or returns
// store.ErrNotFound when there is none. Pending earnings stay pending until a new
// wallet is registered; rows already settled keep the address they were paid
// to.
func (s *Store) DeleteFeeWallet(ctx context.Context, partnerID, ecosystem string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if validWalletKey(partnerID, ecosystem) != nil {
		return store.ErrNotFound
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	key := feeWalletKey(partnerID, ecosystem)
	ok, err := s.has(key)
	if err != nil {
		return fmt.Errorf("pebblestore: read fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	if !ok {
		return fmt.Errorf("%w: no %s fee wallet for partner %s", store.ErrNotFound, ecosystem, partnerID)
	}
	if err := s.db.Delete(key, pebble.Sync); err != nil {
		s.setWalletCache(partnerID, ecosystem, "", false)
		return fmt.Errorf("pebblestore: delete fee wallet %s/%s: %w", partnerID, ecosystem, err)
	}
	s.setWalletCache(partnerID, ecosystem, "", true)
	return nil
}

// walletsIn returns every partner's wallet address in ecosystem, keyed by
// partner ID, read from the store (not the cache), for a settlement run.
// The caller holds partnerMu, so no wallet changes while it reads.
func (s *Store) walletsIn(ecosystem string) (map[string]string, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte(prefixFeeWallet), UpperBound: prefixUpperBound(prefixFeeWallet),
	})
	if err != nil {
		return nil, fmt.Errorf("fee wallet iterator: %w", err)
	}
	defer it.Close()
	out := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		partnerID, eco, found := strings.Cut(string(it.Key()[len(prefixFeeWallet):]), "/")
		if !found || eco != ecosystem {
			continue
		}
		w, err := decodeFeeWallet(partnerID, eco, it.Value())
		if err != nil {
			return nil, err
		}
		out[partnerID] = w.Address
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("list fee wallets in %s: %w", ecosystem, err)
	}
	return out, nil
}
