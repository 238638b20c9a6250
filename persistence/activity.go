package persistence

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/jsonenc"
)

// prefixActivity starts swapp/<partnerID>/<ts:8><id>: one record per partner
// quote (and, as they are tracked, the swap or on-ramp order it became), in
// creation order, read newest first by reverse iteration.
const prefixActivity = "swapp/"

// Activity kinds.
const (
	ActivityQuote  = "quote"
	ActivitySwap   = "swap"
	ActivityOnramp = "onramp"
)

// ActivityQuoted is the status of a quote that has not (yet) become a swap.
const ActivityQuoted = "QUOTED"

// Activity paging limits (DESIGN.md §5.21).
const (
	DefaultActivityLimit = 50
	MaxActivityLimit     = 500
)

// ErrBadCursor means an Activities cursor was not one this store handed out.
var ErrBadCursor = errors.New("persistence: malformed cursor")

// Activity is one line of a partner's transaction history. ID is the quote
// id (or the order id for on-ramp orders); the record is written at quote
// time and rewritten under the same key when its status changes, so
// CreatedAt must stay the original time, and a rewrite must start from the
// stored record so as to keep its Earning. USD figures are integer
// micro-USD so that sums are exact; amounts are decimal strings of base
// units. A quote that carried a partner fee holds its ledger row in
// Earning: one record, not two, is what a partner quote costs the store.
type Activity struct {
	PartnerID      string    `json:"partnerId"`
	ID             string    `json:"id"`
	Kind           string    `json:"kind"`
	Status         string    `json:"status"`
	Provider       string    `json:"provider"`
	Tool           string    `json:"tool"`
	FromChain      uint64    `json:"fromChain"`
	ToChain        uint64    `json:"toChain"`
	FromToken      string    `json:"fromToken"`
	ToToken        string    `json:"toToken"`
	FromAmount     string    `json:"fromAmount"`
	ToAmount       string    `json:"toAmount"`
	FeeMicroUSD    int64     `json:"feeMicroUsd"`
	VolumeMicroUSD int64     `json:"volumeMicroUsd"`
	CreatedAt      time.Time `json:"createdAt"`
	Earning        *Earning  `json:"earning,omitempty"`
}

// Earning is what a ledger row holds beyond its quote's activity record:
// the settlement ecosystem, the fee in base units and the settlement state.
type Earning struct {
	Ecosystem    string    `json:"ecosystem"`
	FeeToken     string    `json:"feeToken"`
	FeeAmount    string    `json:"feeAmount"`
	State        string    `json:"state"`
	SettledBatch string    `json:"settledBatch,omitempty"`
	SettledTo    string    `json:"settledTo,omitempty"`
	SettledAt    time.Time `json:"settledAt,omitzero"`
}

type activityRecord struct {
	V int `json:"v"`
	Activity
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

func decodeActivity(b []byte) (*Activity, error) {
	rec, err := decodeV1[activityRecord](b, "activity")
	if err != nil {
		return nil, err
	}
	return &rec.Activity, nil
}

// PutActivity adds a (the record, or its new status) to the caller's batch,
// so that it is written in the same commit as the state change it belongs
// to. The caller commits the batch. New partner quotes go through
// RecordQuotes instead, which never overwrites a record.
func (s *Store) PutActivity(b *pebble.Batch, a *Activity) error {
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
func encodeActivity(a *Activity) ([]byte, error) {
	if !ValidID(a.PartnerID) || !ValidID(a.ID) {
		return nil, fmt.Errorf("persistence: activity: invalid partner %q or id %q", a.PartnerID, a.ID)
	}
	if a.CreatedAt.IsZero() {
		return nil, fmt.Errorf("persistence: activity %s: zero CreatedAt", a.ID)
	}
	// Every partner quote writes one: appended field by field, the bytes
	// json.Marshal writes for an activityRecord (the tests hold it to that).
	o := jsonenc.Begin(make([]byte, 0, 384))
	o.Int("v", 1)
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
	if e := a.Earning; e != nil {
		o.BeginObject("earning")
		o.String("ecosystem", e.Ecosystem)
		o.String("feeToken", e.FeeToken)
		o.String("feeAmount", e.FeeAmount)
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

// ActivityQuery selects and pages a partner's activity. Zero values select
// everything.
type ActivityQuery struct {
	// Limit is the page size: 0 means DefaultActivityLimit; larger than
	// MaxActivityLimit is capped.
	Limit int
	// Cursor continues after the last record of a previous page.
	Cursor string
	// Status keeps records with exactly this status.
	Status string
	// Chain keeps records whose source or destination chain is this id.
	Chain uint64
	// MinFeeMicroUSD, when not nil, keeps fee-bearing records (fee > 0)
	// whose fee is at least this much: the spec's "feeUsd > 0" breakdown is
	// MinFeeMicroUSD = 0.
	MinFeeMicroUSD *int64
}

func (q *ActivityQuery) match(a *Activity) bool {
	if q.Status != "" && a.Status != q.Status {
		return false
	}
	if q.Chain != 0 && a.FromChain != q.Chain && a.ToChain != q.Chain {
		return false
	}
	if q.MinFeeMicroUSD != nil && (a.FeeMicroUSD <= 0 || a.FeeMicroUSD < *q.MinFeeMicroUSD) {
		return false
	}
	return true
}

// Activities returns one page of a partner's activity, newest first, and the
// cursor of the next page ("" on the last page). It iterates backwards over
// that partner's key range only. The cursor encodes the position inside the
// partner's range, not a whole key, so it can never reach another partner's
// records.
func (s *Store) Activities(ctx context.Context, partnerID string, q ActivityQuery) ([]*Activity, string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, "", err
	}
	out := []*Activity{}
	if !ValidID(partnerID) {
		return out, "", nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultActivityLimit
	}
	limit = min(limit, MaxActivityLimit)
	prefix := activityPrefix(partnerID)
	upper := prefixUpperBound(string(prefix))
	if q.Cursor != "" {
		pos, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || len(pos) <= 8 {
			return nil, "", fmt.Errorf("%w: %q", ErrBadCursor, q.Cursor)
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
		if !q.match(a) {
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

// StatFigures are the aggregates of a set of activity records. Quotes counts
// every record (each began as a quote); volume and fees are micro-USD.
type StatFigures struct {
	Quotes         int64
	VolumeMicroUSD int64
	FeeMicroUSD    int64
}

func (f *StatFigures) add(a *Activity) {
	f.Quotes++
	f.VolumeMicroUSD += a.VolumeMicroUSD
	f.FeeMicroUSD += a.FeeMicroUSD
}

// DayStats are the figures of one UTC day, named YYYY-MM-DD.
type DayStats struct {
	Day string
	StatFigures
}

// ProviderStats are the figures of one provider.
type ProviderStats struct {
	Provider string
	StatFigures
}

// Stats are a partner's aggregates over [From, To).
type Stats struct {
	From, To   time.Time
	Totals     StatFigures
	ByDay      []DayStats      // ascending, only days with records
	ByProvider []ProviderStats // by provider name
}

// Stats aggregates a partner's activity created in [from, to), reading only
// that partner's keys in that time range.
func (s *Store) Stats(ctx context.Context, partnerID string, from, to time.Time) (*Stats, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	st := &Stats{From: from, To: to, ByDay: []DayStats{}, ByProvider: []ProviderStats{}}
	if !ValidID(partnerID) || !from.Before(to) {
		return st, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: activityTimeKey(partnerID, from),
		UpperBound: activityTimeKey(partnerID, to),
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: stats iterator: %w", err)
	}
	defer it.Close()
	days := map[string]*StatFigures{}
	providers := map[string]*StatFigures{}
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, err := decodeActivity(it.Value())
		if err != nil {
			return nil, err
		}
		st.Totals.add(a)
		day := a.CreatedAt.UTC().Format(time.DateOnly)
		if days[day] == nil {
			days[day] = &StatFigures{}
		}
		days[day].add(a)
		if providers[a.Provider] == nil {
			providers[a.Provider] = &StatFigures{}
		}
		providers[a.Provider].add(a)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: stats of %s: %w", partnerID, err)
	}
	for d, f := range days {
		st.ByDay = append(st.ByDay, DayStats{Day: d, StatFigures: *f})
	}
	slices.SortFunc(st.ByDay, func(a, b DayStats) int { return cmp.Compare(a.Day, b.Day) })
	for p, f := range providers {
		st.ByProvider = append(st.ByProvider, ProviderStats{Provider: p, StatFigures: *f})
	}
	slices.SortFunc(st.ByProvider, func(a, b ProviderStats) int { return cmp.Compare(a.Provider, b.Provider) })
	return st, nil
}
