package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// The transaction manager's families (see the key layout in doc.go).
const (
	prefixTxIntent = "txi/"
	prefixTxKey    = "txkey/"
	prefixTxOpen   = "txopen/"
	prefixTxNonce  = "txnonce/"
)

// txIntentRecord is the on-disk form of an intent.
type txIntentRecord struct {
	V int `json:"v"`
	txintent.Intent
}

func txIntentKey(id string) []byte { return []byte(prefixTxIntent + id) }
func txKeyKey(key string) []byte   { return []byte(prefixTxKey + key) }
func txOpenKey(id string) []byte   { return []byte(prefixTxOpen + id) }

func txNonceKey(chainID uint64, account string) []byte {
	k := binary.BigEndian.AppendUint64([]byte(prefixTxNonce), chainID)
	return append(append(k, '/'), strings.ToLower(account)...)
}

func decodeTxIntent(b []byte) (*txintent.Intent, error) {
	var r txIntentRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pebblestore: decode tx intent: %w", err)
	}
	if r.V != 1 {
		return nil, fmt.Errorf("pebblestore: tx intent record version %d unknown", r.V)
	}
	return &r.Intent, nil
}

// open reports whether an intent is listed under txopen/: not final, or
// final with its completion hooks not yet returned.
func txOpen(in *txintent.Intent) bool { return !in.Final() || !in.Handled }

// setTxIntent writes in and its open mark into b.
func setTxIntent(b *pebble.Batch, in *txintent.Intent) error {
	val, err := json.Marshal(txIntentRecord{V: 1, Intent: *in})
	if err != nil {
		return fmt.Errorf("pebblestore: encode tx intent: %w", err)
	}
	if err := b.Set(txIntentKey(in.ID), val, nil); err != nil {
		return err
	}
	if txOpen(in) {
		return b.Set(txOpenKey(in.ID), nil, nil)
	}
	return b.Delete(txOpenKey(in.ID), nil)
}

// PutTxIntent stores a new intent once per key (store.TxIntents): the
// record, its key index and its open mark in one synced batch.
func (s *Store) PutTxIntent(ctx context.Context, in *txintent.Intent) (*txintent.Intent, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	// The lock covers the check and the batch's apply, not the WAL's sync:
	// puts that arrive together share one fsync (Pebble's commit pipeline
	// groups the syncs of batches waiting at once), where holding the lock
	// through the sync made every submit wait for the previous one's
	// fsync. Each put still returns only once its own batch is synced.
	s.txMu.Lock()
	id, err := s.get(txKeyKey(in.Key))
	switch {
	case err == nil:
		old, err := s.txIntent(string(id))
		s.txMu.Unlock()
		if err != nil {
			return nil, false, err
		}
		// The put that stored old may still be waiting for its sync: the
		// intent returned must be as durable as a new one.
		if err := s.syncWAL(); err != nil {
			return nil, false, fmt.Errorf("pebblestore: tx intent key %q: %w", in.Key, err)
		}
		return old, false, nil
	case !errors.Is(err, store.ErrNotFound):
		s.txMu.Unlock()
		return nil, false, fmt.Errorf("pebblestore: tx intent key %q: %w", in.Key, err)
	}
	if ok, err := s.has(txIntentKey(in.ID)); err != nil || ok {
		s.txMu.Unlock()
		if ok {
			err = fmt.Errorf("pebblestore: tx intent %s: %w", in.ID, store.ErrExists)
		}
		return nil, false, err
	}
	c := in.Clone()
	c.Version = 1
	b := s.db.NewBatch()
	defer b.Close()
	err = setTxIntent(b, c)
	if err == nil {
		err = b.Set(txKeyKey(c.Key), []byte(c.ID), nil)
	}
	if err == nil {
		err = s.db.ApplyNoSyncWait(b, pebble.Sync)
		if err == nil {
			s.txMu.Unlock()
			err = b.SyncWait()
			if err != nil {
				return nil, false, fmt.Errorf("pebblestore: put tx intent %s: %w", c.ID, err)
			}
			return c, true, nil
		}
	}
	s.txMu.Unlock()
	return nil, false, fmt.Errorf("pebblestore: put tx intent %s: %w", c.ID, err)
}

func (s *Store) txIntent(id string) (*txintent.Intent, error) {
	val, err := s.get(txIntentKey(id))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: tx intent %s: %w", id, err)
	}
	return decodeTxIntent(val)
}

// TxIntent returns an intent by ID, or store.ErrNotFound.
func (s *Store) TxIntent(ctx context.Context, id string) (*txintent.Intent, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	return s.txIntent(id)
}

// TxIntentByKey returns the intent with an idempotency key, or
// store.ErrNotFound.
func (s *Store) TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	id, err := s.get(txKeyKey(key))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: tx intent key %q: %w", key, err)
	}
	return s.txIntent(string(id))
}

// ListTxIntents returns the intents q selects in ID order. A query for
// open or unhandled intents reads the txopen/ index only.
func (s *Store) ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	prefix := prefixTxIntent
	if q.Open || q.Unhandled {
		prefix = prefixTxOpen
	}
	lower := []byte(prefix)
	if q.After != "" {
		lower = append([]byte(prefix+q.After), 0)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixUpperBound(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []*txintent.Intent
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var in *txintent.Intent
		if prefix == prefixTxOpen {
			if in, err = s.txIntent(string(bytes.TrimPrefix(it.Key(), []byte(prefixTxOpen)))); err != nil {
				return nil, err
			}
		} else if in, err = decodeTxIntent(it.Value()); err != nil {
			return nil, err
		}
		if !q.Matches(in) {
			continue
		}
		out = append(out, in)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, it.Error()
}

// UpdateTxIntents stores intents read at their versions, all or nothing,
// with the nonces they hold, in one synced batch.
func (s *Store) UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	nonces := map[string]uint64{}
	for _, in := range ins {
		old, err := s.txIntent(in.ID)
		if err != nil {
			return err
		}
		if old.Version != in.Version {
			return fmt.Errorf("pebblestore: tx intent %s at version %d, written at %d: %w", in.ID, old.Version, in.Version, store.ErrStale)
		}
		if old.Nonce == nil && in.Nonce != nil {
			next, err := s.nonce(txNonceKey(in.ChainID, in.From))
			if err != nil {
				return err
			}
			if *in.Nonce < next {
				return fmt.Errorf("pebblestore: tx intent %s given nonce %d, the account's next is %d: %w", in.ID, *in.Nonce, next, store.ErrStale)
			}
		}
		c := in.Clone()
		c.Version++
		c.Handled = old.Handled
		if err := setTxIntent(b, c); err != nil {
			return err
		}
		if c.Nonce != nil {
			k := string(txNonceKey(c.ChainID, c.From))
			if n, ok := nonces[k]; !ok || *c.Nonce+1 > n {
				nonces[k] = *c.Nonce + 1
			}
		}
	}
	for k, n := range nonces {
		cur, err := s.nonce([]byte(k))
		if err != nil {
			return err
		}
		if n > cur {
			if err := b.Set([]byte(k), binary.BigEndian.AppendUint64(nil, n), nil); err != nil {
				return err
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: update tx intents: %w", err)
	}
	for _, in := range ins {
		in.Version++
	}
	return nil
}

func (s *Store) nonce(key []byte) (uint64, error) {
	val, err := s.get(key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(val) != 8 {
		return 0, fmt.Errorf("pebblestore: nonce record of %d bytes", len(val))
	}
	return binary.BigEndian.Uint64(val), nil
}

// NextNonce is the account's next nonce as stored.
func (s *Store) NextNonce(ctx context.Context, chainID uint64, account string) (uint64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	return s.nonce(txNonceKey(chainID, account))
}

// RaiseNonce raises the account's next nonce to n, synced.
func (s *Store) RaiseNonce(ctx context.Context, chainID uint64, account string, n uint64) (uint64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	k := txNonceKey(chainID, account)
	cur, err := s.nonce(k)
	if err != nil || n <= cur {
		return cur, err
	}
	if err := s.db.Set(k, binary.BigEndian.AppendUint64(nil, n), pebble.Sync); err != nil {
		return 0, fmt.Errorf("pebblestore: raise nonce: %w", err)
	}
	return n, nil
}

// MarkTxIntentHandled marks a final intent handled and drops its open
// mark, synced.
func (s *Store) MarkTxIntentHandled(ctx context.Context, id string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	in, err := s.txIntent(id)
	if err != nil {
		return err
	}
	if !in.Final() {
		return fmt.Errorf("pebblestore: tx intent %s is %s, not final", id, in.State)
	}
	if in.Handled {
		return nil
	}
	in.Handled = true
	in.Version++
	b := s.db.NewBatch()
	defer b.Close()
	if err := setTxIntent(b, in); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// prefixOperatorKey starts operatorkey/<name>: the operator's signing key,
// sealed (local.SecretSealer.SealOperatorKey).
const prefixOperatorKey = "operatorkey/"

// OperatorKey opens the operator key stored under name.
func (s *Store) OperatorKey(ctx context.Context, name string) ([]byte, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	sealed, err := s.get([]byte(prefixOperatorKey + name))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: operator key %q: %w", name, err)
	}
	return s.seal.OpenOperatorKey(name, sealed)
}

// CreateOperatorKey seals and stores key under name unless one is there.
func (s *Store) CreateOperatorKey(ctx context.Context, name string, key []byte) ([]byte, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if old, err := s.OperatorKey(ctx, name); err == nil || !errors.Is(err, store.ErrNotFound) {
		return old, false, err
	}
	sealed, err := s.seal.SealOperatorKey(name, key)
	if err != nil {
		return nil, false, err
	}
	if err := s.db.Set([]byte(prefixOperatorKey+name), sealed, pebble.Sync); err != nil {
		return nil, false, fmt.Errorf("pebblestore: store operator key: %w", err)
	}
	return bytes.Clone(key), true, nil
}
