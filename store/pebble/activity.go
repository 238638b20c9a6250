package pebblestore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// prefixActivity starts swapp/<partnerID>/<ts:8><id>: one record per partner
// quote (and, as they are tracked, the swap or on-ramp order it became), in
// creation order, read newest first by reverse iteration.
const prefixActivity = "swapp/"

// activityPrefix is the key prefix of one partner's activity.
func activityPrefix(partnerID string) []byte {
	return []byte(prefixActivity + partnerID + "/")
}

// ActivityKey returns the swapp/ key of a record.
func ActivityKey(partnerID string, at time.Time, id string) []byte {
	k := activityPrefix(partnerID)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	return append(k, id...)
}

// activityTimeKey is the first key of partnerID's range at or after t.
func activityTimeKey(partnerID string, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(activityPrefix(partnerID), uint64(t.UnixNano()))
}

// PutActivity adds a (the record, or its new status) to the caller's batch,
// so that it is written in the same commit as the state change it belongs
// to. The caller commits the batch. New partner quotes go through
// RecordQuotes instead, which never overwrites a record.
func (s *Store) PutActivity(b *pebble.Batch, a *account.Activity) error {
	val, err := store.EncodeActivity(a)
	if err != nil {
		return err
	}
	if err := b.Set(ActivityKey(a.PartnerID, a.CreatedAt, a.ID), val, nil); err != nil {
		return fmt.Errorf("pebblestore: batch activity %s: %w", a.ID, err)
	}
	return nil
}

// Activities returns one page of a partner's activity, newest first, and the
// cursor of the next page ("" on the last page). It iterates backwards over
// that partner's key range only. The cursor encodes the position inside the
// partner's range, not a whole key, so it can never reach another partner's
// records.
func (s *Store) Activities(ctx context.Context, partnerID string, q account.ActivityQuery) ([]*account.Activity, string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, "", err
	}
	if !account.ValidID(partnerID) {
		return []*account.Activity{}, "", nil
	}
	if q.Wallet != "" {
		return s.walletActivities(ctx, partnerID, q)
	}
	prefix := activityPrefix(partnerID)
	upper, err := pageUpper(prefix, q.Cursor)
	if err != nil {
		return nil, "", err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return nil, "", fmt.Errorf("pebblestore: activity iterator: %w", err)
	}
	defer it.Close()
	out, next, err := pageMatches(ctx, it, len(prefix), q, func(_, val []byte) (*account.Activity, error) {
		return store.DecodeActivity(val)
	})
	if err != nil {
		return nil, "", fmt.Errorf("pebblestore: list activity of %s: %w", partnerID, err)
	}
	return out, next, nil
}

// pageMatches reads one newest-first page of q's matches from it, whose
// keys are a prefix of prefixLen bytes then a line's position in the
// partner's history: line reads the line a key names (nil: gone), from
// the position or the key's value. The cursor of the next page is the
// last line's position ("" on the last page).
func pageMatches(ctx context.Context, it *pebble.Iterator, prefixLen int, q account.ActivityQuery,
	line func(pos, val []byte) (*account.Activity, error)) ([]*account.Activity, string, error) {
	out := []*account.Activity{}
	limit := q.PageSize()
	var lastPos []byte
	for ok := it.Last(); ok; ok = it.Prev() {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		pos := it.Key()[prefixLen:]
		a, err := line(pos, it.Value())
		if err != nil {
			return nil, "", err
		}
		if a == nil || !q.Match(a) {
			continue
		}
		if len(out) == limit {
			// One more match exists: the page is full and not the last.
			return out, base64.RawURLEncoding.EncodeToString(lastPos), it.Error()
		}
		out = append(out, a)
		lastPos = slices.Clone(pos)
	}
	return out, "", it.Error()
}

// EachActivity calls fn for each of a partner's records created in [from,
// until), oldest first; a zero bound is open. It reads only that partner's
// keys in that range. fn returning false stops the scan.
func (s *Store) EachActivity(ctx context.Context, partnerID string, from, until time.Time, fn func(*account.Activity) bool) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(partnerID) {
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
		return fmt.Errorf("pebblestore: activity iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := store.DecodeActivity(it.Value())
		if err != nil {
			return err
		}
		if !fn(a) {
			break
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebblestore: activity of %s: %w", partnerID, err)
	}
	return nil
}

// Stats aggregates a partner's records created in [from, to).
func (s *Store) Stats(ctx context.Context, partnerID string, from, to time.Time) (*account.Stats, error) {
	t := account.NewStatsTally(from, to)
	if from.Before(to) {
		if err := s.EachActivity(ctx, partnerID, from, to, t.Add); err != nil {
			return nil, fmt.Errorf("pebblestore: stats of %s: %w", partnerID, err)
		}
	} else if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	return t.Stats(), nil
}

// Earnings sums the partner's earnings over its whole history.
func (s *Store) Earnings(ctx context.Context, partnerID string) (*account.Earnings, error) {
	t := account.NewEarningsTally()
	if err := s.EachActivity(ctx, partnerID, time.Time{}, time.Time{}, t.Add); err != nil {
		return nil, fmt.Errorf("pebblestore: earnings of %s: %w", partnerID, err)
	}
	return t.Earnings(), nil
}

// pageUpper is the exclusive upper bound of a newest-first page under
// prefix: the prefix's end for the first page, else the position a cursor
// (a key's tail past prefix, base64url) names.
func pageUpper(prefix []byte, cursor string) ([]byte, error) {
	if cursor == "" {
		return prefixUpperBound(string(prefix)), nil
	}
	pos, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(pos) <= 8 {
		return nil, fmt.Errorf("pebblestore: %w: %q", account.ErrBadCursor, cursor)
	}
	return append(slices.Clone(prefix), pos...), nil
}
