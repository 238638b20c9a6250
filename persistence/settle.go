package persistence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// prefixSettle starts settle/<ecosystem>/<batchID>: the record of one
// settlement run that paid something.
const prefixSettle = "settle/"

// batchIDPrefix starts settlement batch IDs.
const batchIDPrefix = "stl_"

// Payout is what one partner is paid in a settlement batch.
type Payout struct {
	PartnerID     string `json:"partnerId"`
	Wallet        string `json:"wallet"`
	RowCount      int    `json:"rowCount"`
	TotalMicroUSD int64  `json:"totalMicroUsd"`
}

// Unpaid is a partner whose pending rows a settlement run left pending
// because no fee wallet was registered in the ecosystem.
type Unpaid struct {
	PartnerID     string `json:"partnerId"`
	RowCount      int    `json:"rowCount"`
	TotalMicroUSD int64  `json:"totalMicroUsd"`
}

// SettlementBatch is the result of one settlement run. ID is empty when
// nothing was recorded: a dry run, or a run with nothing to pay.
type SettlementBatch struct {
	ID        string    `json:"id,omitempty"`
	Ecosystem string    `json:"ecosystem"`
	CreatedAt time.Time `json:"createdAt"`
	DryRun    bool      `json:"dryRun"`
	Payouts   []Payout  `json:"payouts"`
	// Skipped lists partners left pending for want of a wallet. It is
	// reported, not stored.
	Skipped []Unpaid `json:"skipped,omitempty"`
}

type settleRecord struct {
	V int `json:"v"`
	SettlementBatch
}

func settleKey(eco, batchID string) []byte { return []byte(prefixSettle + eco + "/" + batchID) }

// newBatchID returns "stl_", the run time in hex nanoseconds (so batch keys
// sort by time) and 8 random hex digits.
func newBatchID(now time.Time) (string, error) {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("persistence: generate batch id: %w", err)
	}
	return fmt.Sprintf("%s%016x%s", batchIDPrefix, uint64(now.UnixNano()), hex.EncodeToString(r[:])), nil
}

// Settle pays out the pending ledger rows of every partner in ecosystem:
// each row is marked settled to the partner's fee wallet registered at this
// moment and leaves the ecosystem's pending index, and the batch record is
// written, all in one synced batch, so a crash leaves either all of it or
// none. Partners without a wallet are skipped and stay pending (spec rules
// 1–3). Only the pending index of this ecosystem is read. A second run finds
// nothing new. A dry run reads the same rows and reports what would be paid,
// writing nothing.
func (s *Store) Settle(ctx context.Context, ecosystem string, dryRun bool, now time.Time) (*SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !ValidID(ecosystem) {
		return nil, fmt.Errorf("persistence: settle: invalid ecosystem %q", ecosystem)
	}
	now = now.UTC()
	batch := &SettlementBatch{Ecosystem: ecosystem, CreatedAt: now, DryRun: dryRun, Payouts: []Payout{}}
	id, err := newBatchID(now)
	if err != nil {
		return nil, err
	}
	// partnerMu serialises runs with one another (two concurrent runs would
	// both pay the same rows) and with fee-wallet changes, so each run sees
	// one consistent set of wallets. The quote path's ledger appends are not
	// blocked: rows they add after the iterator opens wait for the next run.
	s.partnerMu.Lock()
	defer s.partnerMu.Unlock()

	prefix := LedgerEcosystemPrefix(ecosystem)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixUpperBound(string(prefix))})
	if err != nil {
		return nil, fmt.Errorf("persistence: settle iterator: %w", err)
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()

	type walletLookup struct {
		addr string
		ok   bool
	}
	wallets := map[string]walletLookup{}
	payouts := map[string]*Payout{}
	skipped := map[string]*Unpaid{}
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		indexKey := slices.Clone(it.Key())
		rowKey := it.Value()
		val, err := s.get(rowKey)
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("persistence: settle %s: index %x names missing row %q", ecosystem, indexKey, rowKey)
		}
		if err != nil {
			return nil, fmt.Errorf("persistence: settle %s: read row: %w", ecosystem, err)
		}
		rec, err := decodeActivity(val)
		if err != nil {
			return nil, err
		}
		if rec.Earning == nil {
			return nil, fmt.Errorf("persistence: settle %s: index %x names record %q without an earning", ecosystem, indexKey, rowKey)
		}
		row := ledgerRow(rec)
		if row.State == LedgerSettled {
			// Cannot happen with atomic batches; drop the stale index entry
			// rather than paying twice.
			if err := b.Delete(indexKey, nil); err != nil {
				return nil, err
			}
			continue
		}
		w, seen := wallets[row.PartnerID]
		if !seen {
			addr, found, err := s.FeeWallet(ctx, row.PartnerID, ecosystem)
			if err != nil {
				return nil, fmt.Errorf("persistence: settle %s: fee wallet of %s: %w", ecosystem, row.PartnerID, err)
			}
			w = walletLookup{addr, found}
			wallets[row.PartnerID] = w
		}
		if !w.ok {
			u := skipped[row.PartnerID]
			if u == nil {
				u = &Unpaid{PartnerID: row.PartnerID}
				skipped[row.PartnerID] = u
			}
			u.RowCount++
			u.TotalMicroUSD += row.FeeMicroUSD
			continue
		}
		p := payouts[row.PartnerID]
		if p == nil {
			p = &Payout{PartnerID: row.PartnerID, Wallet: w.addr}
			payouts[row.PartnerID] = p
		}
		p.RowCount++
		p.TotalMicroUSD += row.FeeMicroUSD
		e := rec.Earning
		e.State, e.SettledBatch, e.SettledTo, e.SettledAt = LedgerSettled, id, w.addr, now
		enc, err := encodeActivity(rec)
		if err != nil {
			return nil, err
		}
		if err := b.Set(rowKey, enc, nil); err != nil {
			return nil, err
		}
		if err := b.Delete(indexKey, nil); err != nil {
			return nil, err
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: settle %s: scan pending rows: %w", ecosystem, err)
	}
	for _, p := range payouts {
		batch.Payouts = append(batch.Payouts, *p)
	}
	slices.SortFunc(batch.Payouts, func(a, b Payout) int { return strings.Compare(a.PartnerID, b.PartnerID) })
	for _, u := range skipped {
		batch.Skipped = append(batch.Skipped, *u)
	}
	slices.SortFunc(batch.Skipped, func(a, b Unpaid) int { return strings.Compare(a.PartnerID, b.PartnerID) })
	if dryRun || b.Empty() {
		return batch, nil
	}
	if len(batch.Payouts) > 0 {
		batch.ID = id
		rec := settleRecord{V: 1, SettlementBatch: *batch}
		rec.Skipped = nil
		enc, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("persistence: encode settlement batch: %w", err)
		}
		if err := b.Set(settleKey(ecosystem, id), enc, nil); err != nil {
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
func (s *Store) SettlementBatches(ctx context.Context, ecosystem string) ([]SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	out := []SettlementBatch{}
	if !ValidID(ecosystem) {
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

// EarningsGroup sums a partner's ledger rows of one ecosystem and state.
type EarningsGroup struct {
	Ecosystem     string
	RowCount      int
	TotalMicroUSD int64
}

// Earnings are a partner's ledger totals, pending and settled, by ecosystem
// in the canonical order; ecosystems whose total is zero are left out.
type Earnings struct {
	Pending []EarningsGroup
	Settled []EarningsGroup
}

// Earnings sums the partner's ledger rows, reading only that partner's key
// range.
func (s *Store) Earnings(ctx context.Context, partnerID string) (*Earnings, error) {
	type key struct{ eco, state string }
	sums := map[key]*EarningsGroup{}
	err := s.LedgerRows(ctx, partnerID, time.Time{}, time.Time{}, func(r *LedgerRow) bool {
		k := key{r.Ecosystem, r.State}
		g := sums[k]
		if g == nil {
			g = &EarningsGroup{Ecosystem: r.Ecosystem}
			sums[k] = g
		}
		g.RowCount++
		g.TotalMicroUSD += r.FeeMicroUSD
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: earnings of %s: %w", partnerID, err)
	}
	order := AllEcosystems()
	rank := func(eco string) int {
		if i := slices.Index(order, eco); i >= 0 {
			return i
		}
		return len(order)
	}
	e := &Earnings{Pending: []EarningsGroup{}, Settled: []EarningsGroup{}}
	for k, g := range sums {
		if g.TotalMicroUSD == 0 {
			continue
		}
		if k.state == LedgerSettled {
			e.Settled = append(e.Settled, *g)
		} else {
			e.Pending = append(e.Pending, *g)
		}
	}
	byEco := func(a, b EarningsGroup) int {
		if d := rank(a.Ecosystem) - rank(b.Ecosystem); d != 0 {
			return d
		}
		return strings.Compare(a.Ecosystem, b.Ecosystem)
	}
	slices.SortFunc(e.Pending, byEco)
	slices.SortFunc(e.Settled, byEco)
	return e, nil
}
