package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// prefixPayout starts payout/<id>: a transfer an on-chain settlement run
// planned (account.Transfer), kept for good. A transfer's earnings are out
// of the pending index (ledger/e/) from its plan until it fails; their
// records keep their pending earning until it settles, when they are
// rewritten settled in the same batch.
const prefixPayout = "payout/"

// payoutRecord is the on-disk form of a transfer.
type payoutRecord struct {
	V int `json:"v"`
	account.Transfer
}

func payoutKey(id string) []byte { return []byte(prefixPayout + id) }

func encodePayout(t *account.Transfer) ([]byte, error) {
	b, err := json.Marshal(payoutRecord{V: 1, Transfer: *t})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode payout %s: %w", t.ID, err)
	}
	return b, nil
}

func decodePayout(b []byte) (*account.Transfer, error) {
	var rec payoutRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("pebblestore: decode payout: %w", err)
	}
	if rec.V != 1 {
		return nil, fmt.Errorf("pebblestore: payout record version %d unknown", rec.V)
	}
	return &rec.Transfer, nil
}

// PlanPayouts stores a run's transfers and takes their earnings out of
// ecosystem's pending index in one synced batch, under the partner lock
// that serialises settlement applies (see store.Payouts).
func (s *Store) PlanPayouts(ctx context.Context, ecosystem string, batch *account.SettlementBatch, transfers []*account.Transfer, forgotten []*account.Activity) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("pebblestore: plan payouts: invalid ecosystem %q", ecosystem)
	}
	if len(transfers) == 0 && len(forgotten) == 0 {
		return nil
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	named := map[string]bool{}
	for _, t := range transfers {
		if t.Final() || t.Ecosystem != ecosystem || !account.ValidTransferID(t.ID) {
			return fmt.Errorf("pebblestore: plan payouts %s: transfer %s (%s, %s) cannot be planned", ecosystem, t.ID, t.Ecosystem, t.State)
		}
		if _, err := s.get(payoutKey(t.ID)); err == nil {
			return fmt.Errorf("pebblestore: plan payouts %s: transfer %s exists: %w", ecosystem, t.ID, account.ErrSettlementConflict)
		} else if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("pebblestore: plan payouts %s: %w", ecosystem, err)
		}
		enc, err := encodePayout(t)
		if err != nil {
			return err
		}
		if err := b.Set(payoutKey(t.ID), enc, nil); err != nil {
			return err
		}
		for _, e := range t.Earnings {
			named[string(ActivityKey(e.PartnerID, e.CreatedAt, e.ID))] = true
		}
	}
	for _, a := range forgotten {
		named[string(ActivityKey(a.PartnerID, a.CreatedAt, a.ID))] = true
	}
	prefix := LedgerEcosystemPrefix(ecosystem)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return fmt.Errorf("pebblestore: plan payouts iterator: %w", err)
	}
	defer it.Close()
	found := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !named[string(it.Value())] {
			continue
		}
		found++
		if err := b.Delete(slices.Clone(it.Key()), nil); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebblestore: plan payouts %s: scan pending rows: %w", ecosystem, err)
	}
	if found != len(named) {
		return fmt.Errorf("pebblestore: plan payouts %s: %d of %d records no longer pending: %w",
			ecosystem, len(named)-found, len(named), account.ErrSettlementConflict)
	}
	if batch != nil && batch.ID != "" {
		rec := settleRecord{V: 1, SettlementBatch: *batch}
		rec.Skipped, rec.Failed = nil, nil
		enc, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("pebblestore: encode settlement batch: %w", err)
		}
		if err := b.Set(settleKey(ecosystem, batch.ID), enc, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit payouts %s: %w", ecosystem, err)
	}
	return nil
}

// Payout reads the transfer id.
func (s *Store) Payout(ctx context.Context, id string) (*account.Transfer, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	val, err := s.get(payoutKey(id))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("pebblestore: payout %s: %w", id, err)
	}
	return decodePayout(val)
}

// Payouts lists ecosystem's transfers in state ("" for all), oldest
// first. It reads every transfer: they are a few per partner and run.
func (s *Store) Payouts(ctx context.Context, ecosystem, state string) ([]*account.Transfer, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixPayout), UpperBound: prefixUpperBound(prefixPayout)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: payouts iterator: %w", err)
	}
	defer it.Close()
	out := []*account.Transfer{}
	for ok := it.First(); ok; ok = it.Next() {
		t, err := decodePayout(it.Value())
		if err != nil {
			return nil, err
		}
		if t.Ecosystem == ecosystem && (state == "" || t.State == state) {
			out = append(out, t)
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list payouts: %w", err)
	}
	slices.SortStableFunc(out, func(x, y *account.Transfer) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// FinishPayout stores t final and settles its earnings or returns them to
// the pending index, in one synced batch under the partner lock (see
// store.Payouts).
func (s *Store) FinishPayout(ctx context.Context, t *account.Transfer) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !t.Final() {
		return fmt.Errorf("pebblestore: finish payout %s: state %s is not final", t.ID, t.State)
	}
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()
	stored, err := s.Payout(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("pebblestore: finish payout %s: %w", t.ID, err)
	}
	if stored.Final() {
		return fmt.Errorf("pebblestore: finish payout %s: already %s: %w", t.ID, stored.State, store.ErrStale)
	}
	b := s.db.NewBatch()
	defer b.Close()
	enc, err := encodePayout(t)
	if err != nil {
		return err
	}
	if err := b.Set(payoutKey(t.ID), enc, nil); err != nil {
		return err
	}
	for _, e := range stored.Earnings {
		key := ActivityKey(e.PartnerID, e.CreatedAt, e.ID)
		if t.State == account.TransferFailed {
			seq, err := s.nextLedgerSeq(b)
			if err != nil {
				return err
			}
			ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(stored.Ecosystem), seq)
			if err := b.Set(append(ek, e.ID...), key, nil); err != nil {
				return err
			}
			continue
		}
		val, err := s.get(key)
		if err != nil {
			return fmt.Errorf("pebblestore: finish payout %s: earning %s: %w", t.ID, e.ID, err)
		}
		a, err := store.DecodeActivity(val)
		if err != nil {
			return err
		}
		if a.Earning == nil {
			return fmt.Errorf("pebblestore: finish payout %s: record %s carries no earning", t.ID, e.ID)
		}
		account.SettleEarning(a.Earning, t)
		if enc, err = store.EncodeActivity(a); err != nil {
			return err
		}
		if err := b.Set(key, enc, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit payout %s: %w", t.ID, err)
	}
	return nil
}
