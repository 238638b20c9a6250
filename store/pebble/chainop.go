package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/store"
)

// prefixChainOp starts simop/<chainID:8><seq:8>: the operations applied to
// a sandbox chain, in the order they were applied, which is everything
// needed to rebuild the chain by applying them again. Each value is the
// operation's record as the sandbox network encodes it (a JSON object with
// its own version field); the store keeps the bytes and reads nothing in
// them.
const prefixChainOp = "simop/"

// chainOpKey is the key of chain chainID's seq-th operation.
func chainOpKey(chainID, seq uint64) []byte {
	k := make([]byte, 0, len(prefixChainOp)+16)
	k = append(k, prefixChainOp...)
	k = binary.BigEndian.AppendUint64(k, chainID)
	return binary.BigEndian.AppendUint64(k, seq)
}

// AppendChainOp stores rec, an encoded operation, as the seq-th operation applied to sandbox chain
// chainID, synced before it returns: the chain's owner answers for an
// operation only once it is on disk, so that every acknowledged
// transaction survives a restart. A seq already stored is refused with
// store.ErrExists and nothing is written.
func (s *Store) AppendChainOp(ctx context.Context, chainID, seq uint64, rec []byte) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(rec) == 0 {
		return fmt.Errorf("pebblestore: operation %d of chain %d: empty record", seq, chainID)
	}
	key := chainOpKey(chainID, seq)
	switch _, err := s.get(key); {
	case err == nil:
		return fmt.Errorf("%w: operation %d of chain %d", store.ErrExists, seq, chainID)
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("pebblestore: read operation %d of chain %d: %w", seq, chainID, err)
	}
	if err := s.db.Set(key, rec, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: append operation %d of chain %d: %w", seq, chainID, err)
	}
	return nil
}

// ChainOps calls fn with every encoded operation stored for sandbox chain chainID,
// in sequence order, stopping at the first error fn returns.
func (s *Store) ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, rec []byte) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	lower := chainOpKey(chainID, 0)
	upper := chainOpKey(chainID+1, 0)
	if chainID == ^uint64(0) {
		upper = prefixUpperBound(prefixChainOp)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("pebblestore: scan operations of chain %d: %w", chainID, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		seq := binary.BigEndian.Uint64(it.Key()[len(prefixChainOp)+8:])
		// The value is only valid until the iterator moves: fn gets a copy.
		if err := fn(seq, append([]byte(nil), it.Value()...)); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebblestore: scan operations of chain %d: %w", chainID, err)
	}
	return nil
}
