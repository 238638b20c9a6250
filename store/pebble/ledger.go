package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/store"
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

// RecordQuotes writes new quote records in one batch, synced or not as d
// says: one Pebble commit for all of them, which is what the ledger actor's
// group commit relies on. It is safe to call concurrently, and concurrent calls overlap:
// records are encoded before any lock is taken, the lock covers only
// numbering and the duplicate check, and the commits run side by side
// (Pebble shares WAL syncs between concurrent commits). A record never
// overwrites one already stored or being committed for the same quote id
// (it is reported false in written), so a retried quote is never counted
// twice and a settled earning never turns pending again. Earnings are given
// their sequence number in the ecosystem's pending index here.
func (s *Store) RecordQuotes(ctx context.Context, recs []store.EncodedQuote, d store.Durability) (written []bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Record() == nil {
			return nil, errors.New("pebblestore: record quotes: a record was not encoded with store.EncodeQuote")
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
	opts := pebble.NoSync
	if d == store.Synced {
		opts = pebble.Sync
	}
	if err := b.Commit(opts); err != nil {
		clear(written)
		return nil, fmt.Errorf("pebblestore: commit quote records: %w", err)
	}
	return written, nil
}

// claimQuotes adds the records that are new to b, with an index entry for
// each earning, and marks their quote ids in flight; it returns the ids
// claimed.
func (s *Store) claimQuotes(b *pebble.Batch, recs []store.EncodedQuote, written []bool) ([]string, error) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if err := s.loadLedgerSeq(); err != nil {
		return nil, err
	}
	// One iterator serves the whole batch: opening it costs more than the
	// bloom-filtered seek of each absent key.
	stored, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte(prefixActivity), UpperBound: prefixUpperBound(prefixActivity),
	})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: quote record iterator: %w", err)
	}
	defer stored.Close()
	var claimed []string
	numbered := false
	for i := range recs {
		a, val := recs[i].Activity(), recs[i].Record()
		id := a.ID
		key := ActivityKey(a.PartnerID, a.CreatedAt, id)
		if s.ledger.inflight[id] {
			continue
		}
		if stored.SeekPrefixGE(key) && bytes.Equal(stored.Key(), key) {
			continue
		}
		if err := stored.Error(); err != nil {
			return claimed, fmt.Errorf("pebblestore: quote record check: %w", err)
		}
		if err := b.Set(key, val, nil); err != nil {
			return claimed, fmt.Errorf("pebblestore: batch quote record %s: %w", id, err)
		}
		if e := a.Earning; e != nil {
			s.ledger.next++
			numbered = true
			ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(e.Ecosystem), s.ledger.next)
			if err := b.Set(append(ek, id...), key, nil); err != nil {
				return claimed, fmt.Errorf("pebblestore: batch ledger index %s: %w", id, err)
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

// loadLedgerSeq reads seq/ledger the first time a sequence number is
// needed. The caller holds s.ledger.mu.
func (s *Store) loadLedgerSeq() error {
	if s.ledger.loaded {
		return nil
	}
	v, err := s.get([]byte(keySeqLedger))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return fmt.Errorf("pebblestore: read ledger sequence: %w", err)
	case len(v) == 8:
		s.ledger.next = binary.BigEndian.Uint64(v)
	}
	s.ledger.inflight = make(map[string]bool)
	s.ledger.loaded = true
	return nil
}

// nextLedgerSeq hands out the next ledger sequence number, for an earning
// that does not come through RecordQuotes, and records it in b.
func (s *Store) nextLedgerSeq(b *pebble.Batch) (uint64, error) {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if err := s.loadLedgerSeq(); err != nil {
		return 0, err
	}
	s.ledger.next++
	if err := b.Set([]byte(keySeqLedger), binary.BigEndian.AppendUint64(nil, s.ledger.next), nil); err != nil {
		return 0, err
	}
	return s.ledger.next, nil
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
