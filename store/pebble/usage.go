package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Partners' hourly usage (the edge's rate-limit counts, flushed every few
// seconds by each node):
//
//	usage/<partnerID>/<hour:8><bucket>   {"v":1,"admitted":n,"refused":m}
//
// hour is the hour's start in Unix nanoseconds, big-endian, so that one
// partner's rows scan in time order; bucket is "heavy" or "read". A write
// adds to the row's counts (read, add and write under usageMu, in one
// synced batch): it never overwrites them.
const prefixUsage = "usage/"

type usageRecord struct {
	V        int    `json:"v"`
	Admitted uint64 `json:"admitted"`
	Refused  uint64 `json:"refused"`
}

func (r usageRecord) version() int { return r.V }

func usagePartnerPrefix(partnerID string) []byte {
	return append(append([]byte(prefixUsage), partnerID...), '/')
}

func usageKey(c account.UsageCount) []byte {
	b := usagePartnerPrefix(c.PartnerID)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Hour.UnixNano()))
	return append(b, c.Bucket...)
}

// AddUsage adds each count to its (partner, bucket, hour) row in one synced
// batch: all of them or none.
func (s *Store) AddUsage(ctx context.Context, counts []account.UsageCount) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	for _, c := range counts {
		if err := c.Check(); err != nil {
			return fmt.Errorf("pebblestore: %w", err)
		}
		if strings.IndexByte(c.PartnerID, '/') >= 0 {
			return fmt.Errorf("pebblestore: partner id %q holds a '/'", c.PartnerID)
		}
	}
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	sums := map[string]usageRecord{}
	for _, c := range counts {
		k := usageKey(c)
		rec, ok := sums[string(k)]
		if !ok {
			val, err := s.get(k)
			switch {
			case errors.Is(err, store.ErrNotFound):
				rec = usageRecord{V: 1}
			case err != nil:
				return fmt.Errorf("pebblestore: read usage row: %w", err)
			default:
				if rec, err = decodeV1[usageRecord](val, "usage"); err != nil {
					return err
				}
			}
		}
		rec.Admitted += c.Admitted
		rec.Refused += c.Refused
		sums[string(k)] = rec
	}
	for k, rec := range sums {
		val, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("pebblestore: encode usage row: %w", err)
		}
		if err := b.Set([]byte(k), val, nil); err != nil {
			return fmt.Errorf("pebblestore: usage batch: %w", err)
		}
	}
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: commit usage: %w", err)
	}
	return nil
}

// UsageSince returns partnerID's usage rows of the hours starting at or
// after since, oldest first.
func (s *Store) UsageSince(ctx context.Context, partnerID string, since time.Time) ([]account.UsageCount, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	prefix := usagePartnerPrefix(partnerID)
	lower := binary.BigEndian.AppendUint64(prefix, uint64(max(since.UnixNano(), 0)))
	upper := append([]byte(nil), prefix...)
	upper[len(upper)-1]++
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: usage iterator: %w", err)
	}
	defer it.Close()
	var out []account.UsageCount
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(prefix):]
		if len(k) < 8 {
			return nil, fmt.Errorf("pebblestore: usage key %q too short", it.Key())
		}
		rec, err := decodeV1[usageRecord](it.Value(), "usage")
		if err != nil {
			return nil, err
		}
		out = append(out, account.UsageCount{PartnerID: partnerID, Bucket: string(k[8:]),
			Hour: time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC(), Admitted: rec.Admitted, Refused: rec.Refused})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: scan usage: %w", err)
	}
	return out, nil
}
