package pebblestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/store"
)

// prefixQuoteRef starts quoteref/<ref:32>: the id of a quote by a
// reference: a multi-step quote's (keccak256 of the id), which is all its
// step-1 transaction carries, and any quote's call reference (keccak256 of
// its transaction's calldata, EncodedTicket.CallRef). Entries are left
// for the life of the data directory: a deposit can be registered, and a
// transaction broadcast without execute reported, after its quote's
// ticket is gone (and is then told so).
const prefixQuoteRef = "quoteref/"

func quoteRefKey(ref [32]byte) []byte { return append([]byte(prefixQuoteRef), ref[:]...) }

// PutQuoteRefs indexes the multi-step quotes among ts by their reference
// and every quote with an EVM transaction by its calldata's
// (EncodedTicket.CallRef), unsynced like the tickets they go with, and
// writes nothing for a batch with none. The index is kept here rather than
// with the tickets in the ticket log because a registration may come after
// its ticket is swept.
func (s *Store) PutQuoteRefs(ctx context.Context, ts []store.EncodedTicket) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	var b *pebble.Batch
	for _, t := range ts {
		ref, multi := t.QuoteRef()
		call, hasCall := t.CallRef()
		if !multi && !hasCall {
			continue
		}
		if b == nil {
			b = s.db.NewBatch()
			defer b.Close()
		}
		if multi {
			if err := b.Set(quoteRefKey(ref), []byte(t.ID), nil); err != nil {
				return fmt.Errorf("pebblestore: batch reference of quote %s: %w", t.ID, err)
			}
		}
		if hasCall {
			if err := b.Set(quoteRefKey(call), []byte(t.ID), nil); err != nil {
				return fmt.Errorf("pebblestore: batch call reference of quote %s: %w", t.ID, err)
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

// QuoteByRef returns the id of the quote with reference (or call
// reference) ref, or store.ErrNotFound.
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
