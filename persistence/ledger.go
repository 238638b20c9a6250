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

	"github.com/swapgate/swapgate/routing/jsonenc"
)

// Ledger key families (see the package comment):
//
//	ledger/p/<partnerID>/<ts:8><quoteID>   the row, in time order per partner
//	ledger/q/<quoteID>                      partnerID: one row per quote, ever
//	ledger/e/<ecosystem>/<seq:8><quoteID>   ledger/p key of a row still pending
//	                                        in that settlement ecosystem, in
//	                                        (about) commit order; deleted when
//	                                        the row settles
//	seq/ledger                              last ledger sequence number
const (
	prefixLedgerPartner = "ledger/p/"
	prefixLedgerQuote   = "ledger/q/"
	prefixLedgerEco     = "ledger/e/"
	keySeqLedger        = "seq/ledger"
)

// Ledger row states.
const (
	LedgerPending = "pending"
	LedgerSettled = "settled"
)

// LedgerRow is one partner fee earned on one quote. USD figures are integer
// micro-USD so that sums are exact; amounts are decimal strings of base units.
type LedgerRow struct {
	PartnerID      string    `json:"partnerId"`
	QuoteID        string    `json:"quoteId"`
	Ecosystem      string    `json:"ecosystem"`
	Provider       string    `json:"provider"`
	Tool           string    `json:"tool"`
	FromChain      uint64    `json:"fromChain"`
	ToChain        uint64    `json:"toChain"`
	FromToken      string    `json:"fromToken"`
	ToToken        string    `json:"toToken"`
	FromAmount     string    `json:"fromAmount"`
	ToAmount       string    `json:"toAmount"`
	FeeToken       string    `json:"feeToken"`
	FeeAmount      string    `json:"feeAmount"`
	FeeMicroUSD    int64     `json:"feeMicroUsd"`
	VolumeMicroUSD int64     `json:"volumeMicroUsd"`
	CreatedAt      time.Time `json:"createdAt"`
	State          string    `json:"state"`
	// Seq orders pending rows in the ecosystem index; it lives in the index
	// key, not in the row, so rows can be encoded before they are numbered.
	Seq uint64 `json:"-"`
	// Settlement fields, set when the row settles.
	SettledBatch string    `json:"settledBatch,omitempty"`
	SettledTo    string    `json:"settledTo,omitempty"`
	SettledAt    time.Time `json:"settledAt,omitzero"`
}

type ledgerRecord struct {
	V int `json:"v"`
	LedgerRow
}

// LedgerKey returns the ledger/p key of a row.
func LedgerKey(partnerID string, at time.Time, quoteID string) []byte {
	k := make([]byte, 0, len(prefixLedgerPartner)+len(partnerID)+1+8+len(quoteID))
	k = append(k, prefixLedgerPartner...)
	k = append(k, partnerID...)
	k = append(k, '/')
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	return append(k, quoteID...)
}

// LedgerPartnerPrefix is the prefix of one partner's rows.
func LedgerPartnerPrefix(partnerID string) []byte {
	return []byte(prefixLedgerPartner + partnerID + "/")
}

// LedgerEcosystemPrefix is the prefix of the pending index of an ecosystem.
func LedgerEcosystemPrefix(eco string) []byte { return []byte(prefixLedgerEco + eco + "/") }

func ledgerQuoteKey(quoteID string) []byte { return []byte(prefixLedgerQuote + quoteID) }

// EncodeLedgerRow and DecodeLedgerRow are the row's value encoding. Every
// partner quote with a fee encodes a row, so it is appended field by field
// rather than marshalled by reflection; the bytes are those json.Marshal
// writes for a ledgerRecord (the tests hold it to that).
func EncodeLedgerRow(r *LedgerRow) ([]byte, error) {
	o := jsonenc.Begin(make([]byte, 0, 512))
	o.Int("v", 1)
	o.String("partnerId", r.PartnerID)
	o.String("quoteId", r.QuoteID)
	o.String("ecosystem", r.Ecosystem)
	o.String("provider", r.Provider)
	o.String("tool", r.Tool)
	o.Uint("fromChain", r.FromChain)
	o.Uint("toChain", r.ToChain)
	o.String("fromToken", r.FromToken)
	o.String("toToken", r.ToToken)
	o.String("fromAmount", r.FromAmount)
	o.String("toAmount", r.ToAmount)
	o.String("feeToken", r.FeeToken)
	o.String("feeAmount", r.FeeAmount)
	o.Int("feeMicroUsd", r.FeeMicroUSD)
	o.Int("volumeMicroUsd", r.VolumeMicroUSD)
	o.Time("createdAt", r.CreatedAt)
	o.String("state", r.State)
	o.StringOmitEmpty("settledBatch", r.SettledBatch)
	o.StringOmitEmpty("settledTo", r.SettledTo)
	o.TimeOmitZero("settledAt", r.SettledAt)
	b, err := o.End()
	if err != nil {
		return nil, fmt.Errorf("persistence: encode ledger row %s: %w", r.QuoteID, err)
	}
	return b, nil
}

// DecodeLedgerRow decodes a ledger/p value.
func DecodeLedgerRow(b []byte) (*LedgerRow, error) {
	rec, err := decodeV1[ledgerRecord](b, "ledger row")
	if err != nil {
		return nil, err
	}
	return &rec.LedgerRow, nil
}

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
// record (every partner quote) and, when it carried a fee, its ledger row.
type QuoteRecord struct {
	Activity *Activity
	Ledger   *LedgerRow

	activityVal, ledgerVal []byte
}

// Encode encodes the record's values ahead of RecordQuotes, so that callers
// on many goroutines do the encoding rather than the one that commits.
// RecordQuotes encodes whatever was not encoded this way.
func (r *QuoteRecord) Encode() error {
	var err error
	if r.Activity != nil && r.activityVal == nil {
		if r.activityVal, err = encodeActivity(r.Activity); err != nil {
			return err
		}
	}
	if r.Ledger != nil && r.ledgerVal == nil {
		r.Ledger.State = LedgerPending
		if r.ledgerVal, err = EncodeLedgerRow(r.Ledger); err != nil {
			return err
		}
	}
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

// RecordQuotes writes quote records in one synced batch: one Pebble commit
// for all of them, which is what the ledger actor's group commit relies on.
// It is safe to call concurrently, and concurrent calls overlap: records
// are encoded before any lock is taken, the lock covers only numbering and
// the duplicate check, and the commits run side by side (Pebble shares WAL
// syncs between concurrent commits). A ledger row whose quote id already
// has a row, on disk or in a batch being committed, is skipped (reported
// false in written), so a quote is never counted twice; its activity
// record is rewritten in place, which is harmless. Ledger rows are given
// their sequence number and pending state here.
func (s *Store) RecordQuotes(ctx context.Context, recs []QuoteRecord) (written []bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for i := range recs {
		rec := &recs[i]
		if err := rec.Encode(); err != nil {
			return nil, err
		}
		if rec.Activity != nil {
			a := rec.Activity
			if err := b.Set(ActivityKey(a.PartnerID, a.CreatedAt, a.ID), rec.activityVal, nil); err != nil {
				return nil, fmt.Errorf("persistence: batch activity %s: %w", a.ID, err)
			}
		}
	}
	written = make([]bool, len(recs))
	claimed, err := s.claimLedgerRows(b, recs, written)
	defer s.releaseLedgerRows(claimed)
	if err != nil {
		return nil, err
	}
	if b.Empty() {
		return written, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		for i := range written {
			written[i] = false
		}
		return nil, fmt.Errorf("persistence: commit quote records: %w", err)
	}
	return written, nil
}

// claimLedgerRows numbers the new ledger rows, adds them and their indexes
// to b, and marks their quote ids in flight; it returns the ids claimed.
func (s *Store) claimLedgerRows(b *pebble.Batch, recs []QuoteRecord, written []bool) ([]string, error) {
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
	var claimed []string
	var seen *pebble.Iterator
	defer func() {
		if seen != nil {
			_ = seen.Close()
		}
	}()
	for i, rec := range recs {
		r := rec.Ledger
		if r == nil || s.ledger.inflight[r.QuoteID] {
			continue
		}
		// One iterator serves the whole batch: opening it costs more than
		// the bloom-filtered seek of each absent quote id.
		if seen == nil {
			var err error
			if seen, err = s.db.NewIter(&pebble.IterOptions{
				LowerBound: []byte(prefixLedgerQuote), UpperBound: prefixUpperBound(prefixLedgerQuote),
			}); err != nil {
				return claimed, fmt.Errorf("persistence: ledger idempotency iterator: %w", err)
			}
		}
		qk := ledgerQuoteKey(r.QuoteID)
		if seen.SeekPrefixGE(qk) && bytes.Equal(seen.Key(), qk) {
			continue
		}
		if err := seen.Error(); err != nil {
			return claimed, fmt.Errorf("persistence: ledger idempotency check: %w", err)
		}
		s.ledger.next++
		r.Seq = s.ledger.next
		val := rec.ledgerVal
		pk := LedgerKey(r.PartnerID, r.CreatedAt, r.QuoteID)
		ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(r.Ecosystem), r.Seq)
		ek = append(ek, r.QuoteID...)
		for _, kv := range [][2][]byte{{pk, val}, {qk, []byte(r.PartnerID)}, {ek, pk}} {
			if err := b.Set(kv[0], kv[1], nil); err != nil {
				return claimed, err
			}
		}
		s.ledger.inflight[r.QuoteID] = true
		claimed = append(claimed, r.QuoteID)
		written[i] = true
	}
	if len(claimed) > 0 {
		if err := b.Set([]byte(keySeqLedger), binary.BigEndian.AppendUint64(nil, s.ledger.next), nil); err != nil {
			return claimed, err
		}
	}
	return claimed, nil
}

func (s *Store) releaseLedgerRows(ids []string) {
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
// partner's key range. fn returning false stops the scan.
func (s *Store) LedgerRows(ctx context.Context, partnerID string, from, until time.Time, fn func(*LedgerRow) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	prefix := LedgerPartnerPrefix(partnerID)
	lower, upper := prefix, prefixUpperBound(string(prefix))
	if !from.IsZero() {
		lower = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(from.UnixNano()))
	}
	if !until.IsZero() {
		upper = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(until.UnixNano()))
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("persistence: ledger iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		row, err := DecodeLedgerRow(it.Value())
		if err != nil {
			return err
		}
		if !fn(row) {
			break
		}
	}
	return it.Error()
}
