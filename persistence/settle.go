package persistence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
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

// Settle runs a settlement of ecosystem (see account.Settlement for the
// rules): it reads the ecosystem's pending index and the fee wallets
// registered at this moment, lets the settlement decide each earning, and
// applies the decisions in one synced batch (paid records rewritten as
// settled and removed from the index, the batch record written), so a crash
// leaves either all of it or none. Only the pending index of this ecosystem
// is read. A second run finds nothing new. A dry run decides the same and
// writes nothing.
func (s *Store) Settle(ctx context.Context, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(ecosystem) {
		return nil, fmt.Errorf("persistence: settle: invalid ecosystem %q", ecosystem)
	}
	now = now.UTC()
	id, err := account.NewBatchID(now)
	if err != nil {
		return nil, err
	}
	// partnerMu serialises runs with one another (two concurrent runs would
	// both pay the same rows) and with fee-wallet changes, so each run sees
	// one consistent set of wallets. The quote path's ledger appends are not
	// blocked: rows they add after the iterator opens wait for the next run.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	wallets, err := s.walletsIn(ecosystem)
	if err != nil {
		return nil, fmt.Errorf("persistence: settle %s: %w", ecosystem, err)
	}
	run := account.NewSettlement(ecosystem, id, now, wallets)

	prefix := LedgerEcosystemPrefix(ecosystem)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return nil, fmt.Errorf("persistence: settle iterator: %w", err)
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		indexKey := slices.Clone(it.Key())
		recKey := it.Value()
		val, err := s.get(recKey)
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("persistence: settle %s: index %x names missing record %q", ecosystem, indexKey, recKey)
		}
		if err != nil {
			return nil, fmt.Errorf("persistence: settle %s: read record: %w", ecosystem, err)
		}
		rec, err := decodeActivity(val)
		if err != nil {
			return nil, err
		}
		if rec.Earning == nil {
			return nil, fmt.Errorf("persistence: settle %s: index %x names record %q without an earning", ecosystem, indexKey, recKey)
		}
		switch run.Decide(rec) {
		case account.Pay:
			enc, err := encodeActivity(rec)
			if err != nil {
				return nil, err
			}
			if err := b.Set(recKey, enc, nil); err != nil {
				return nil, err
			}
			fallthrough
		case account.Forget:
			if err := b.Delete(indexKey, nil); err != nil {
				return nil, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: settle %s: scan pending rows: %w", ecosystem, err)
	}
	batch := run.Batch(dryRun)
	if dryRun || b.Empty() {
		return batch, nil
	}
	if batch.ID != "" {
		rec := settleRecord{V: 1, SettlementBatch: *batch}
		rec.Skipped = nil
		enc, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("persistence: encode settlement batch: %w", err)
		}
		if err := b.Set(settleKey(ecosystem, batch.ID), enc, nil); err != nil {
			return nil, err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("persistence: commit settlement %s: %w", ecosystem, err)
	}
	return batch, nil
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
		return nil, fmt.Errorf("persistence: settlement iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		var rec settleRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("persistence: decode settlement batch: %w", err)
		}
		if rec.V != 1 {
			return nil, fmt.Errorf("persistence: settlement batch version %d unknown", rec.V)
		}
		out = append(out, rec.SettlementBatch)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: list settlements of %s: %w", ecosystem, err)
	}
	return out, nil
}
