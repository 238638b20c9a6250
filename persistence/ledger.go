package persistence

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Ledger key families (see the package comment):
//
//	swapp/<partnerID>/<ts:8><quoteID>       the quote's activity record; a
//	                                        quote with a fee carries its ledger
//	                                        row's own fields in "earning"
//	ledger/e/<ecosystem>/<seq:8><quoteID>   swapp key of an earning still
//	                                        pending in that settlement
//	                                        ecosystem, in (about) commit order;
//	                                        deleted when it settles
//	seq/ledger                              last ledger sequence number
//
// A row is not a record of its own: a partner quote costs one record and,
// with a fee, one index entry, which keeps the quote path's share of every
// commit, flush and compaction small.
const (
	prefixLedgerEco = "ledger/e/"
	keySeqLedger    = "seq/ledger"
)

// Ledger row states.
const (
	LedgerPending = "pending"
	LedgerSettled = "settled"
)

// LedgerRow is one partner fee earned on one quote: the view of a quote
// record that carries an Earning. USD figures are integer micro-USD so that
// sums are exact; amounts are decimal strings of base units.
type LedgerRow struct {
	PartnerID      string
	QuoteID        string
	Ecosystem      string
	Provider       string
	Tool           string
	FromChain      uint64
	ToChain        uint64
	FromToken      string
	ToToken        string
	FromAmount     string
	ToAmount       string
	FeeToken       string
	FeeAmount      string
	FeeMicroUSD    int64
	VolumeMicroUSD int64
	CreatedAt      time.Time
	State          string
	// Settlement fields, set when the row settles.
	SettledBatch string
	SettledTo    string
	SettledAt    time.Time
}

// ledgerRow is the row view of a, which must carry an Earning.
func ledgerRow(a *Activity) *LedgerRow {
	e := a.Earning
	return &LedgerRow{
		PartnerID: a.PartnerID, QuoteID: a.ID, Ecosystem: e.Ecosystem, Provider: a.Provider, Tool: a.Tool,
		FromChain: a.FromChain, ToChain: a.ToChain, FromToken: a.FromToken, ToToken: a.ToToken,
		FromAmount: a.FromAmount, ToAmount: a.ToAmount, FeeToken: e.FeeToken, FeeAmount: e.FeeAmount,
		FeeMicroUSD: a.FeeMicroUSD, VolumeMicroUSD: a.VolumeMicroUSD, CreatedAt: a.CreatedAt, State: e.State,
		SettledBatch: e.SettledBatch, SettledTo: e.SettledTo, SettledAt: e.SettledAt,
	}
}

// activityOf is the activity record made for a quote known only by its
// ledger row; it carries no Earning yet.
func activityOf(l *LedgerRow) *Activity {
	return &Activity{PartnerID: l.PartnerID, ID: l.QuoteID, Kind: ActivityQuote, Status: ActivityQuoted,
		Provider: l.Provider, Tool: l.Tool, FromChain: l.FromChain, ToChain: l.ToChain,
		FromToken: l.FromToken, ToToken: l.ToToken, FromAmount: l.FromAmount, ToAmount: l.ToAmount,
		VolumeMicroUSD: l.VolumeMicroUSD, CreatedAt: l.CreatedAt}
}

// LedgerEcosystemPrefix is the prefix of the pending index of an ecosystem.
func LedgerEcosystemPrefix(eco string) []byte { return []byte(prefixLedgerEco + eco + "/") }

// ledgerSeq hands out ledger sequence numbers; it is loaded lazily from
// seq/ledger. Several RecordQuotes calls may commit at once, so a number is
// an ordering hint, not an identity: index keys also carry the quote id.
// inflight holds the quote ids of batches being committed, so that two
// concurrent calls cannot both record the same quote.
type ledgerSeq struct {
	mu       sync.Mutex
	loaded   bool
	next     uint64
	inflight map[string]bool
}

// QuoteRecord is what one partner quote leaves on disk: its activity
// record, whose Earning (state pending) holds the ledger row's own fields
// when the quote carried a fee. Ledger, when set, is that row given apart:
// it becomes the record's Earning and its fee the record's fee, and a
// record with Ledger alone gets an activity record made from the row.
type QuoteRecord struct {
	Activity *Activity
	Ledger   *LedgerRow

	rec      *Activity // the merged record, set by Encode
	key, val []byte
}

// Encode merges and encodes the record ahead of RecordQuotes, so that
// callers on many goroutines do the encoding rather than the one that
// commits. RecordQuotes encodes whatever was not encoded this way.
func (r *QuoteRecord) Encode() error {
	if r.val != nil {
		return nil
	}
	a, l := r.Activity, r.Ledger
	switch {
	case l == nil && a == nil:
		return errors.New("persistence: empty quote record")
	case l != nil && a == nil:
		a = activityOf(l)
	case l != nil:
		if a.PartnerID != l.PartnerID || a.ID != l.QuoteID || !a.CreatedAt.Equal(l.CreatedAt) {
			return fmt.Errorf("persistence: quote record %s: activity and ledger row disagree on partner, id or time", a.ID)
		}
		merged := *a
		a = &merged
	}
	if l != nil {
		a.FeeMicroUSD = l.FeeMicroUSD
		a.Earning = &Earning{Ecosystem: l.Ecosystem, FeeToken: l.FeeToken, FeeAmount: l.FeeAmount, State: LedgerPending}
	}
	if e := a.Earning; e != nil && (!ValidID(e.Ecosystem) || e.State != LedgerPending) {
		return fmt.Errorf("persistence: quote record %s: earning must be pending in a valid ecosystem, not %q in %q", a.ID, e.State, e.Ecosystem)
	}
	val, err := encodeActivity(a)
	if err != nil {
		return err
	}
	r.rec, r.key, r.val = a, ActivityKey(a.PartnerID, a.CreatedAt, a.ID), val
	return nil
}

// AppendLedger writes ledger rows alone; see RecordQuotes.
func (s *Store) AppendLedger(ctx context.Context, rows []*LedgerRow) ([]bool, error) {
	recs := make([]QuoteRecord, len(rows))
	for i, r := range rows {
		recs[i].Ledger = r
	}
	return s.RecordQuotes(ctx, recs)
}

// RecordQuotes writes new quote records in one synced batch: one Pebble
// commit for all of them, which is what the ledger actor's group commit
// relies on. It is safe to call concurrently, and concurrent calls overlap:
// records are encoded before any lock is taken, the lock covers only
// numbering and the duplicate check, and the commits run side by side
// (Pebble shares WAL syncs between concurrent commits). A record never
// overwrites one already stored or being committed for the same quote id
// (it is reported false in written), so a retried quote is never counted
// twice and a settled earning never turns pending again. Earnings are given
// their sequence number in the ecosystem's pending index here.
func (s *Store) RecordQuotes(ctx context.Context, recs []QuoteRecord) (written []bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	for i := range recs {
		if err := recs[i].Encode(); err != nil {
			return nil, err
		}
	}
	b := s.db.NewBatch()
	defer b.Close()
	written = make([]bool, len(recs))
	claimed, err := s.claimQuotes(b, recs, written)
	defer s.releaseQuotes(claimed)
	if err != nil {
		return nil, err
	}
	if b.Empty() {
		return written, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		clear(written)
		return nil, fmt.Errorf("persistence: commit quote records: %w", err)
	}
	return written, nil
}

// claimQuotes adds the records that are new to b, with an index entry for
// each earning, and marks their quote ids in flight; it returns the ids
// claimed.
func (s *Store) claimQuotes(b *pebble.Batch, recs []QuoteRecord, written []bool) ([]string, error) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if !s.ledger.loaded {
		v, err := s.get([]byte(keySeqLedger))
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("persistence: read ledger sequence: %w", err)
		case len(v) == 8:
			s.ledger.next = binary.BigEndian.Uint64(v)
		}
		s.ledger.inflight = make(map[string]bool)
		s.ledger.loaded = true
	}
	// One iterator serves the whole batch: opening it costs more than the
	// bloom-filtered seek of each absent key.
	stored, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte(prefixActivity), UpperBound: prefixUpperBound(prefixActivity),
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: quote record iterator: %w", err)
	}
	defer stored.Close()
	var claimed []string
	numbered := false
	for i := range recs {
		rec := &recs[i]
		id := rec.rec.ID
		if s.ledger.inflight[id] {
			continue
		}
		if stored.SeekPrefixGE(rec.key) && bytes.Equal(stored.Key(), rec.key) {
			continue
		}
		if err := stored.Error(); err != nil {
			return claimed, fmt.Errorf("persistence: quote record check: %w", err)
		}
		if err := b.Set(rec.key, rec.val, nil); err != nil {
			return claimed, fmt.Errorf("persistence: batch quote record %s: %w", id, err)
		}
		if e := rec.rec.Earning; e != nil {
			s.ledger.next++
			numbered = true
			ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(e.Ecosystem), s.ledger.next)
			if err := b.Set(append(ek, id...), rec.key, nil); err != nil {
				return claimed, fmt.Errorf("persistence: batch ledger index %s: %w", id, err)
			}
		}
		s.ledger.inflight[id] = true
		claimed = append(claimed, id)
		written[i] = true
	}
	if numbered {
		if err := b.Set([]byte(keySeqLedger), binary.BigEndian.AppendUint64(nil, s.ledger.next), nil); err != nil {
			return claimed, err
		}
	}
	return claimed, nil
}

func (s *Store) releaseQuotes(ids []string) {
	if len(ids) == 0 {
		return
	}
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	for _, id := range ids {
		delete(s.ledger.inflight, id)
	}
}

// LedgerRows calls fn for each of a partner's rows in time order, from
// (inclusive) to until (exclusive); a zero bound is open. It reads only that
// partner's records in that range. fn returning false stops the scan.
func (s *Store) LedgerRows(ctx context.Context, partnerID string, from, until time.Time, fn func(*LedgerRow) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !ValidID(partnerID) {
		return nil
	}
	prefix := activityPrefix(partnerID)
	lower, upper := prefix, prefixUpperBound(string(prefix))
	if !from.IsZero() {
		lower = activityTimeKey(partnerID, from)
	}
	if !until.IsZero() {
		upper = activityTimeKey(partnerID, until)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("persistence: ledger iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := decodeActivity(it.Value())
		if err != nil {
			return err
		}
		if a.Earning != nil && !fn(ledgerRow(a)) {
			break
		}
	}
	return it.Error()
}
