package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/store"
)

// Idempotency key families (see the package comment):
//
//	idem/<scope>/<key>                   the answer remembered for a key
//	idemx/<expiresAt:8><scope>/<key>     expiry index of idem/, empty values
//
// The scope contains no '/', so the first '/' after it ends it and the
// client's key, which may contain '/', is the rest. Each record has exactly
// one index entry, at its own expiry: overwriting a record removes the old
// entry in the same batch.
//
// Expired records are as good as absent to the caller, which overwrites
// them; the rest are swept: RememberAnswer, after its own commit, removes
// up to idemSweepLimit expired records at most once per idemSweepEvery (at
// once again when a sweep hit its limit, so a backlog drains faster than
// new records arrive). The records of a server that stops taking idempotent
// requests stay on disk until the next one: at most a day of them.
const (
	prefixIdem       = "idem/"
	prefixIdemExpiry = "idemx/"
)

const (
	idemSweepLimit = 1024
	idemSweepEvery = time.Minute
)

// idemRecord is the stored encoding of a remembered answer: the request's
// fingerprint in hex, the answer's status and body (base64, as
// encoding/json writes bytes), the id of the request that acted, and the
// record's lifetime.
type idemRecord struct {
	V           int       `json:"v"`
	Fingerprint string    `json:"fingerprint"`
	Status      int       `json:"status"`
	Body        []byte    `json:"body"`
	RequestID   string    `json:"requestId"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

func encodeIdem(rec *idempotency.Record) ([]byte, error) {
	val, err := json.Marshal(idemRecord{V: 1, Fingerprint: hex.EncodeToString(rec.Fingerprint[:]), Status: rec.Status,
		Body: rec.Body, RequestID: rec.RequestID, CreatedAt: rec.CreatedAt.UTC(), ExpiresAt: rec.ExpiresAt.UTC()})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: encode idempotency record: %w", err)
	}
	return val, nil
}

func decodeIdem(b []byte) (*idempotency.Record, error) {
	rec, err := decodeV1[idemRecord](b, "idempotency")
	if err != nil {
		return nil, err
	}
	out := &idempotency.Record{Status: rec.Status, Body: rec.Body, RequestID: rec.RequestID, CreatedAt: rec.CreatedAt, ExpiresAt: rec.ExpiresAt}
	if n, err := hex.Decode(out.Fingerprint[:], []byte(rec.Fingerprint)); err != nil || n != len(out.Fingerprint) || len(rec.Fingerprint) != 2*n {
		return nil, fmt.Errorf("pebblestore: decode idempotency record: fingerprint %q is not a hex SHA-256", rec.Fingerprint)
	}
	return out, nil
}

// validIdemKey guards the layout: a scope that is not empty and holds no
// '/', and a key that is not empty. The key's own rules are the domain's.
func validIdemKey(k idempotency.Key) error {
	if k.Scope == "" || strings.IndexByte(k.Scope, '/') >= 0 || k.Value == "" {
		return fmt.Errorf("pebblestore: idempotency key %q/%q invalid", k.Scope, k.Value)
	}
	return nil
}

func idemKey(k idempotency.Key) []byte {
	b := make([]byte, 0, len(prefixIdem)+len(k.Scope)+1+len(k.Value))
	b = append(b, prefixIdem...)
	b = append(b, k.Scope...)
	b = append(b, '/')
	return append(b, k.Value...)
}

func idemExpiryKey(expiresAt time.Time, k idempotency.Key) []byte {
	b := make([]byte, 0, len(prefixIdemExpiry)+8+len(k.Scope)+1+len(k.Value))
	b = append(b, prefixIdemExpiry...)
	b = binary.BigEndian.AppendUint64(b, uint64(expiresAt.UnixNano()))
	b = append(b, k.Scope...)
	b = append(b, '/')
	return append(b, k.Value...)
}

// IdempotentAnswer returns the answer remembered under k, expired or not
// (whether it still counts is the caller's rule), or store.ErrNotFound.
func (s *Store) IdempotentAnswer(ctx context.Context, k idempotency.Key) (*idempotency.Record, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if err := validIdemKey(k); err != nil {
		return nil, err
	}
	val, err := s.get(idemKey(k))
	if err != nil {
		return nil, err
	}
	return decodeIdem(val)
}

// RememberAnswer stores rec under k, replacing whatever was there, with its
// expiry index entry, in one batch committed with pebble.Sync: when it
// returns, the answer survives a crash. Callers serialise writes of one key
// (the edge lets one request per key act at a time); writes of different
// keys run concurrently and share WAL syncs.
func (s *Store) RememberAnswer(ctx context.Context, k idempotency.Key, rec *idempotency.Record) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := validIdemKey(k); err != nil {
		return err
	}
	val, err := encodeIdem(rec)
	if err != nil {
		return err
	}
	s.idemMu.RLock()
	err = s.rememberAnswer(k, rec, val)
	s.idemMu.RUnlock()
	if err != nil {
		return err
	}
	s.maybeSweepAnswers()
	return nil
}

func (s *Store) rememberAnswer(k idempotency.Key, rec *idempotency.Record, val []byte) error {
	key := idemKey(k)
	b := s.db.NewBatch()
	defer b.Close()
	switch old, err := s.get(key); {
	case err == nil:
		prev, err := decodeIdem(old)
		if err != nil {
			return err
		}
		if err := b.Delete(idemExpiryKey(prev.ExpiresAt, k), nil); err != nil {
			return fmt.Errorf("pebblestore: remove idempotency expiry entry: %w", err)
		}
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("pebblestore: read idempotency record: %w", err)
	}
	if err := b.Set(key, val, nil); err != nil {
		return fmt.Errorf("pebblestore: write idempotency record: %w", err)
	}
	if err := b.Set(idemExpiryKey(rec.ExpiresAt, k), nil, nil); err != nil {
		return fmt.Errorf("pebblestore: write idempotency expiry entry: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit idempotency record: %w", err)
	}
	return nil
}

// maybeSweepAnswers runs a sweep when one is due and no write is under way.
// Its errors are dropped: the records stay expired, hence harmless, and the
// next sweep tries again.
func (s *Store) maybeSweepAnswers() {
	now := s.now()
	if now.UnixNano() < s.idemNextSweep.Load() || !s.idemMu.TryLock() {
		return
	}
	defer s.idemMu.Unlock()
	n, err := s.sweepAnswers(now, idemSweepLimit)
	next := now.Add(idemSweepEvery)
	if err == nil && n == idemSweepLimit {
		next = now
	}
	s.idemNextSweep.Store(next.UnixNano())
}

// SweepAnswers removes up to limit records expired at the store's current
// time, oldest expiry first, and returns how many it removed. Losing the
// removal to a crash is harmless (an expired record is as good as absent),
// so it is not synced.
func (s *Store) SweepAnswers(ctx context.Context, limit int) (int, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	return s.sweepAnswers(s.now(), limit)
}

// sweepAnswers is SweepAnswers under idemMu held exclusively, so no record
// changes between reading it and deleting it. An index entry whose record
// has another expiry (which the one-entry-per-record rule should prevent)
// is removed without touching the record. It starts where the previous
// sweep of this process stopped, so the tombstones it left are not walked
// again: every later record expires later than anything already expired.
func (s *Store) sweepAnswers(now time.Time, limit int) (int, error) {
	lower := s.idemSweptTo
	if lower == nil {
		lower = []byte(prefixIdemExpiry)
	}
	upper := binary.BigEndian.AppendUint64([]byte(prefixIdemExpiry), uint64(now.UnixNano())+1)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, fmt.Errorf("pebblestore: idempotency expiry iterator: %w", err)
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	n := 0
	var last []byte
	for ok := it.First(); ok && n < limit; ok = it.Next() {
		ik := it.Key()
		if len(ik) <= len(prefixIdemExpiry)+8 {
			return 0, fmt.Errorf("pebblestore: idempotency expiry key %q malformed", ik)
		}
		expires := int64(binary.BigEndian.Uint64(ik[len(prefixIdemExpiry):]))
		rk := append([]byte(prefixIdem), ik[len(prefixIdemExpiry)+8:]...)
		if err := b.Delete(ik, nil); err != nil {
			return 0, err
		}
		switch val, err := s.get(rk); {
		case err == nil:
			rec, err := decodeIdem(val)
			if err != nil {
				return 0, err
			}
			if rec.ExpiresAt.UnixNano() == expires {
				if err := b.Delete(rk, nil); err != nil {
					return 0, err
				}
			}
		case !errors.Is(err, store.ErrNotFound):
			return 0, fmt.Errorf("pebblestore: read idempotency record: %w", err)
		}
		last = append(last[:0], ik...)
		n++
	}
	if err := it.Error(); err != nil {
		return 0, fmt.Errorf("pebblestore: sweep idempotency records: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return 0, fmt.Errorf("pebblestore: commit idempotency sweep: %w", err)
	}
	s.idemSweptTo = last
	return n, nil
}
