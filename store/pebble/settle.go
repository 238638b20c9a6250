package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// prefixSettle starts settle/<ecosystem>/<batchID>: the record of one
// settlement run that paid something.
const prefixSettle = "settle/"

// settleRecord is the on-disk form of a settlement batch.
type settleRecord struct {
	V int `json:"v"`
	account.SettlementBatch
}

func settleKey(eco, batchID string) []byte { return []byte(prefixSettle + eco + "/" + batchID) }

// Settlement is split between the store and its caller: the store reads
// (PendingEarnings, FeeWalletsIn) and applies (ApplySettlement), and the
// caller runs account.Settlement over what it read to decide each earning.
// The rules live in the domain; the store keeps only the promise that a
// batch of decisions is applied whole or not at all.

// PendingEarnings calls fn with the record of every earning in ecosystem's
// pending set, in the set's order (about commit order), until fn returns
// an error, which it returns. Each record is a fresh copy the caller may
// change. Only this ecosystem's pending index is read.
func (s *Store) PendingEarnings(ctx context.Context, ecosystem string, fn func(*account.Activity) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("pebblestore: pending earnings: invalid ecosystem %q", ecosystem)
	}
	prefix := LedgerEcosystemPrefix(ecosystem)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return fmt.Errorf("pebblestore: pending earnings iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := s.pendingRecord(ecosystem, it.Key(), it.Value())
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebblestore: pending earnings of %s: scan: %w", ecosystem, err)
	}
	return nil
}

// pendingRecord reads the record an entry of ecosystem's pending index
// names; an entry naming no record, or one without an earning, is a broken
// store, reported rather than skipped.
func (s *Store) pendingRecord(ecosystem string, indexKey, recKey []byte) (*account.Activity, error) {
	val, err := s.get(recKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("pebblestore: pending earnings of %s: index %x names missing record %q", ecosystem, indexKey, recKey)
	}
	if err != nil {
		return nil, fmt.Errorf("pebblestore: pending earnings of %s: read record: %w", ecosystem, err)
	}
	rec, err := store.DecodeActivity(val)
	if err != nil {
		return nil, err
	}
	if rec.Earning == nil {
		return nil, fmt.Errorf("pebblestore: pending earnings of %s: index %x names record %q without an earning", ecosystem, indexKey, recKey)
	}
	return rec, nil
}

// FeeWalletsIn returns every partner's fee wallet address in ecosystem,
// keyed by partner ID, read from the store (not the cache): the wallets a
// settlement run pays to.
func (s *Store) FeeWalletsIn(ctx context.Context, ecosystem string) (map[string]string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	// partnerMu: one consistent set, not one taken across a wallet write.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	w, err := s.walletsIn(ecosystem)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: fee wallets in %s: %w", ecosystem, err)
	}
	return w, nil
}

// ApplySettlement applies a settlement run's decisions on ecosystem in one
// synced batch, so that a crash leaves all of it or none: each paid record
// (its earning marked settled by account.Settlement) is stored and leaves
// the pending set, each forgotten one only leaves the pending set, and a
// batch with an ID is recorded under settle/<ecosystem>/<id> (without its
// Skipped list, which is reported, not stored). Every record named must
// still be in the pending set, or nothing is written and the error is
// account.ErrSettlementConflict: two runs never pay one earning. With
// nothing to apply it writes nothing.
func (s *Store) ApplySettlement(ctx context.Context, ecosystem string, batch *account.SettlementBatch, paid, forgotten []*account.Activity) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("pebblestore: apply settlement: invalid ecosystem %q", ecosystem)
	}
	if len(paid) == 0 && len(forgotten) == 0 {
		return nil
	}
	// partnerMu serialises appliers with one another and with fee-wallet
	// changes. The quote path's ledger appends are not blocked: rows they
	// add wait for the next run.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	// The pending index is keyed by sequence, which a record does not
	// carry: find each named record's entry by scanning the ecosystem's
	// index once.
	named := make(map[string]*account.Activity, len(paid)+len(forgotten))
	for _, a := range paid {
		if a.Earning == nil || a.Earning.State != account.EarningSettled {
			return fmt.Errorf("pebblestore: apply settlement %s: paid record %s is not marked settled", ecosystem, a.ID)
		}
		named[string(ActivityKey(a.PartnerID, a.CreatedAt, a.ID))] = a
	}
	for _, a := range forgotten {
		named[string(ActivityKey(a.PartnerID, a.CreatedAt, a.ID))] = nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	prefix := LedgerEcosystemPrefix(ecosystem)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return fmt.Errorf("pebblestore: apply settlement iterator: %w", err)
	}
	defer it.Close()
	found := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, ok := named[string(it.Value())]
		if !ok {
			continue
		}
		found++
		if a != nil {
			enc, err := store.EncodeActivity(a)
			if err != nil {
				return err
			}
			if err := b.Set(slices.Clone(it.Value()), enc, nil); err != nil {
				return err
			}
		}
		if err := b.Delete(slices.Clone(it.Key()), nil); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebblestore: apply settlement %s: scan pending rows: %w", ecosystem, err)
	}
	if found != len(named) {
		return fmt.Errorf("pebblestore: apply settlement %s: %d of %d records no longer pending: %w",
			ecosystem, len(named)-found, len(named), account.ErrSettlementConflict)
	}
	if batch != nil && batch.ID != "" {
		rec := settleRecord{V: 1, SettlementBatch: *batch}
		rec.Skipped = nil
		enc, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("pebblestore: encode settlement batch: %w", err)
		}
		if err := b.Set(settleKey(ecosystem, batch.ID), enc, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit settlement %s: %w", ecosystem, err)
	}
	return nil
}

// SettlementBatches returns the recorded batches of an ecosystem, oldest
// first.
func (s *Store) SettlementBatches(ctx context.Context, ecosystem string) ([]account.SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	out := []account.SettlementBatch{}
	if !account.ValidID(ecosystem) {
		return out, nil
	}
	prefix := prefixSettle + ecosystem + "/"
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: settlement iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		var rec settleRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("pebblestore: decode settlement batch: %w", err)
		}
		if rec.V != 1 {
			return nil, fmt.Errorf("pebblestore: settlement batch version %d unknown", rec.V)
		}
		out = append(out, rec.SettlementBatch)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list settlements of %s: %w", ecosystem, err)
	}
	return out, nil
}
