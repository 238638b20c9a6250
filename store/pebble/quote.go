package pebblestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/store"
)

// prefixQuoteRef starts quoteref/<ref:32>: the id of a multi-step quote by
// its reference (keccak256 of the id), which is all its step-1 transaction
// carries. Entries are left for the life of the data directory: a deposit
// can be registered after its quote's ticket is gone.
const prefixQuoteRef = "quoteref/"

func quoteRefKey(ref [32]byte) []byte { return append([]byte(prefixQuoteRef), ref[:]...) }

// PutQuoteRefs indexes the multi-step quotes among ts by their reference
// and by their step-1 calldata's (EncodedTicket.CallRef), unsynced like the tickets they go with, and writes nothing for a batch
// with none. The index is kept here rather than with the tickets in the
// ticket log because a registration may come after its ticket is swept.
func (s *Store) PutQuoteRefs(ctx context.Context, ts []store.EncodedTicket) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	var b *pebble.Batch
	for _, t := range ts {
		ref, ok := t.QuoteRef()
		if !ok {
			continue
		}
		if b == nil {
			b = s.db.NewBatch()
			defer b.Close()
		}
		if err := b.Set(quoteRefKey(ref), []byte(t.ID), nil); err != nil {
			return fmt.Errorf("pebblestore: batch reference of quote %s: %w", t.ID, err)
		}
		if call, ok := t.CallRef(); ok {
			if err := b.Set(quoteRefKey(call), []byte(t.ID), nil); err != nil {
				return fmt.Errorf("pebblestore: batch step-1 reference of quote %s: %w", t.ID, err)
			}
		}
	}
	if b == nil {
		return nil
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("pebblestore: commit quote references: %w", err)
	}
	return nil
}

// QuoteByRef returns the id of the multi-step quote with reference ref, or
// store.ErrNotFound.
func (s *Store) QuoteByRef(ctx context.Context, ref [32]byte) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	v, err := s.get(quoteRefKey(ref))
	if err != nil {
		return "", fmt.Errorf("pebblestore: quote ref %x: %w", ref, err)
	}
	return string(v), nil
}
