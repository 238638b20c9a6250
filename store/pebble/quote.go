package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// prefixQuoteRef starts quoteref/<ref:32>: the id of a multi-step quote by
// its reference (keccak256 of the id), which is all its step-1 transaction
// carries, and by its step-1 calldata's (EncodedTicket.CallRef). Entries
// are left for the life of the data directory: a deposit can be
// registered after its quote's ticket is gone.
const prefixQuoteRef = "quoteref/"

func quoteRefKey(ref [32]byte) []byte { return append([]byte(prefixQuoteRef), ref[:]...) }

// prefixQuoteCall starts quotecall/<hour:8>/<ref:32>: the id of a quote
// with an EVM transaction (other than a multi-step one) by its calldata's
// keccak256, under the hour of its issue (Unix seconds / 3600, big-endian)
// so that SweepQuoteRefs drops whole hours with one range deletion as
// their tickets go: a transaction broadcast without execute is matched to
// its quote only while the quote is retained. Some 75 bytes a quote.
const prefixQuoteCall = "quotecall/"

func quoteCallKey(hour uint64, ref [32]byte) []byte {
	k := binary.BigEndian.AppendUint64([]byte(prefixQuoteCall), hour)
	return append(k, ref[:]...)
}

// PutQuoteRefs indexes the multi-step quotes among ts by their reference
// and by their step-1 calldata's, and every other quote with an EVM
// transaction by its calldata's (EncodedTicket.CallRef) under its issue
// hour, unsynced like the tickets they go with, and writes nothing for a
// batch with none. The index is kept here rather than with the tickets in
// the ticket log because a registration may come after its ticket is
// swept.
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
		var key []byte
		switch {
		case multi:
			if err := b.Set(quoteRefKey(ref), []byte(t.ID), nil); err != nil {
				return fmt.Errorf("pebblestore: batch reference of quote %s: %w", t.ID, err)
			}
			if !hasCall {
				continue
			}
			key = quoteRefKey(call)
		default:
			at, ok := quote.IssuedAt(t.ID)
			if !ok {
				return fmt.Errorf("pebblestore: call reference of quote %q: malformed id", t.ID)
			}
			key = quoteCallKey(uint64(at.Unix())/3600, call)
		}
		if err := b.Set(key, []byte(t.ID), nil); err != nil {
			return fmt.Errorf("pebblestore: batch call reference of quote %s: %w", t.ID, err)
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

// SweepQuoteRefs drops the call references of quotes issued in hours that
// ended before before (multi-step quotes' references stay).
func (s *Store) SweepQuoteRefs(ctx context.Context, before time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	end := quoteCallKey(uint64(max(before.Unix(), 0))/3600, [32]byte{})[:len(prefixQuoteCall)+8]
	if err := s.db.DeleteRange([]byte(prefixQuoteCall), end, pebble.NoSync); err != nil {
		return fmt.Errorf("pebblestore: sweep call references: %w", err)
	}
	return nil
}

// quoteByCall finds a call reference in the hours still indexed, newest
// first: each hour is one seek.
func (s *Store) quoteByCall(ref [32]byte) (string, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixQuoteCall), UpperBound: prefixUpperBound(prefixQuoteCall)})
	if err != nil {
		return "", fmt.Errorf("pebblestore: call reference iterator: %w", err)
	}
	defer it.Close()
	for ok := it.Last(); ok; {
		hour := slices.Clone(it.Key()[:len(prefixQuoteCall)+8])
		want := append(slices.Clone(hour), ref[:]...)
		if it.SeekGE(want) && bytes.Equal(it.Key(), want) {
			return string(it.Value()), nil
		}
		ok = it.SeekLT(hour)
	}
	if err := it.Error(); err != nil {
		return "", fmt.Errorf("pebblestore: call reference %x: %w", ref, err)
	}
	return "", fmt.Errorf("pebblestore: quote ref %x: %w", ref, store.ErrNotFound)
}

// QuoteByRef returns the id of the quote with reference (or call
// reference) ref, or store.ErrNotFound.
func (s *Store) QuoteByRef(ctx context.Context, ref [32]byte) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	v, err := s.get(quoteRefKey(ref))
	if errors.Is(err, store.ErrNotFound) {
		return s.quoteByCall(ref)
	}
	if err != nil {
		return "", fmt.Errorf("pebblestore: quote ref %x: %w", ref, err)
	}
	return string(v), nil
}
