package persistence

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// prefixActivity starts swapp/<partnerID>/<ts:8><id>: one record per partner
// quote (and, as they are tracked, the swap or on-ramp order it became), in
// creation order, read newest first by reverse iteration.
const prefixActivity = "swapp/"

// activityRecord is the on-disk form of an activity: the record and its
// encoding version. encodeActivity writes the same bytes without reflection.
// Version 2 adds the earning's priceUsd (the fee token's USD price the fee
// was valued at) and the feeUsdUnknown and volumeUsdUnknown marks of
// figures that could not be valued; a version 1 record has none of them,
// and its figures were all valued.
type activityRecord struct {
	V int `json:"v"`
	account.Activity
}

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

// activityVersion is the version of the activity records this build writes.
const activityVersion = 2

// DecodeActivity decodes an activity record encoded by this package (in
// any encoding version it still reads), for a backend that keeps the same
// encoding.
func DecodeActivity(b []byte) (*account.Activity, error) { return decodeActivity(b) }

func decodeActivity(b []byte) (*account.Activity, error) {
	var rec activityRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("persistence: decode activity: %w", err)
	}
	switch rec.V {
	case 1:
		// Written before prices could be absent: every figure was valued,
		// at a price the record did not keep.
		rec.FeeUSDUnknown, rec.VolumeUSDUnknown = false, false
		if rec.Earning != nil {
			rec.Earning.PriceUSD = ""
		}
	case activityVersion:
	default:
		return nil, fmt.Errorf("persistence: activity record version %d unknown", rec.V)
	}
	return &rec.Activity, nil
}

// PutActivity adds a (the record, or its new status) to the caller's batch,
// so that it is written in the same commit as the state change it belongs
// to. The caller commits the batch. New partner quotes go through
// RecordQuotes instead, which never overwrites a record.
func (s *Store) PutActivity(b *pebble.Batch, a *account.Activity) error {
	val, err := encodeActivity(a)
	if err != nil {
		return err
	}
	if err := b.Set(ActivityKey(a.PartnerID, a.CreatedAt, a.ID), val, nil); err != nil {
		return fmt.Errorf("persistence: batch activity %s: %w", a.ID, err)
	}
	return nil
}

// encodeActivity checks and encodes an activity record.
func encodeActivity(a *account.Activity) ([]byte, error) {
	if err := a.CheckIdentity(); err != nil {
		return nil, fmt.Errorf("persistence: %w", err)
	}
	// Every partner quote writes one: appended field by field, the bytes
	// json.Marshal writes for an activityRecord (the tests hold it to that).
	o := jsonenc.Begin(make([]byte, 0, 384))
	o.Int("v", activityVersion)
	o.String("partnerId", a.PartnerID)
	o.String("id", a.ID)
	o.String("kind", a.Kind)
	o.String("status", a.Status)
	o.String("provider", a.Provider)
	o.String("tool", a.Tool)
	o.Uint("fromChain", a.FromChain)
	o.Uint("toChain", a.ToChain)
	o.String("fromToken", a.FromToken)
	o.String("toToken", a.ToToken)
	o.String("fromAmount", a.FromAmount)
	o.String("toAmount", a.ToAmount)
	o.Int("feeMicroUsd", a.FeeMicroUSD)
	o.Int("volumeMicroUsd", a.VolumeMicroUSD)
	o.Time("createdAt", a.CreatedAt)
	o.TrueOmitFalse("feeUsdUnknown", a.FeeUSDUnknown)
	o.TrueOmitFalse("volumeUsdUnknown", a.VolumeUSDUnknown)
	if e := a.Earning; e != nil {
		o.BeginObject("earning")
		o.String("ecosystem", e.Ecosystem)
		o.String("feeToken", e.FeeToken)
		o.String("feeAmount", e.FeeAmount)
		o.StringOmitEmpty("priceUsd", e.PriceUSD)
		o.String("state", e.State)
		o.StringOmitEmpty("settledBatch", e.SettledBatch)
		o.StringOmitEmpty("settledTo", e.SettledTo)
		o.TimeOmitZero("settledAt", e.SettledAt)
		o.EndObject()
	}
	val, err := o.End()
	if err != nil {
		return nil, fmt.Errorf("persistence: encode activity %s: %w", a.ID, err)
	}
	return val, nil
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
	out := []*account.Activity{}
	if !account.ValidID(partnerID) {
		return out, "", nil
	}
	limit := q.PageSize()
	prefix := activityPrefix(partnerID)
	upper := prefixUpperBound(string(prefix))
	if q.Cursor != "" {
		pos, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || len(pos) <= 8 {
			return nil, "", fmt.Errorf("persistence: %w: %q", account.ErrBadCursor, q.Cursor)
		}
		upper = append(slices.Clone(prefix), pos...)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return nil, "", fmt.Errorf("persistence: activity iterator: %w", err)
	}
	defer it.Close()
	var lastKey []byte
	next := ""
	for ok := it.Last(); ok; ok = it.Prev() {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		a, err := decodeActivity(it.Value())
		if err != nil {
			return nil, "", err
		}
		if !q.Match(a) {
			continue
		}
		if len(out) == limit {
			// One more match exists: the page is full and not the last.
			next = base64.RawURLEncoding.EncodeToString(lastKey[len(prefix):])
			break
		}
		out = append(out, a)
		lastKey = slices.Clone(it.Key())
	}
	if err := it.Error(); err != nil {
		return nil, "", fmt.Errorf("persistence: list activity of %s: %w", partnerID, err)
	}
	return out, next, nil
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
		return fmt.Errorf("persistence: activity iterator: %w", err)
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
		if !fn(a) {
			break
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("persistence: activity of %s: %w", partnerID, err)
	}
	return nil
}

// Stats aggregates a partner's records created in [from, to).
func (s *Store) Stats(ctx context.Context, partnerID string, from, to time.Time) (*account.Stats, error) {
	t := account.NewStatsTally(from, to)
	if from.Before(to) {
		if err := s.EachActivity(ctx, partnerID, from, to, t.Add); err != nil {
			return nil, fmt.Errorf("persistence: stats of %s: %w", partnerID, err)
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
		return nil, fmt.Errorf("persistence: earnings of %s: %w", partnerID, err)
	}
	return t.Earnings(), nil
}
