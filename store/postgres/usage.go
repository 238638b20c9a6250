package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// AddUsage adds each count to its (partner, bucket, hour) row of
// partner_usage in one transaction: all of them or none. A row is created
// at the count and only ever added to afterwards, so that the flushes of
// every node sharing the database sum. Rows are written in key order, so
// that two nodes' flushes of the same rows never deadlock.
func (s *Store) AddUsage(ctx context.Context, counts []account.UsageCount) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	for _, c := range counts {
		if err := c.Check(); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	}
	if len(counts) == 0 {
		return nil
	}
	sorted := slices.Clone(counts)
	slices.SortFunc(sorted, func(a, b account.UsageCount) int {
		if c := strings.Compare(a.PartnerID, b.PartnerID); c != 0 {
			return c
		}
		if c := a.Hour.Compare(b.Hour); c != 0 {
			return c
		}
		return strings.Compare(a.Bucket, b.Bucket)
	})
	return s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, c := range sorted {
			b.Queue(`INSERT INTO partner_usage (partner_id, hour, bucket, admitted, refused) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (partner_id, hour, bucket) DO UPDATE
				SET admitted = partner_usage.admitted + EXCLUDED.admitted, refused = partner_usage.refused + EXCLUDED.refused`,
				c.PartnerID, c.Hour.Unix(), c.Bucket, int64(c.Admitted), int64(c.Refused))
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("postgres: add usage: %w", err)
		}
		return nil
	})
}

// UsageSince returns partnerID's usage rows of the hours starting at or
// after since, oldest first.
func (s *Store) UsageSince(ctx context.Context, partnerID string, since time.Time) ([]account.UsageCount, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT hour, bucket, admitted, refused FROM partner_usage
		WHERE partner_id = $1 AND hour >= $2 ORDER BY hour, bucket`, partnerID, since.Unix())
	if err != nil {
		return nil, fmt.Errorf("postgres: read usage: %w", err)
	}
	defer rows.Close()
	var out []account.UsageCount
	for rows.Next() {
		var (
			hour              int64
			bucket            string
			admitted, refused int64
		)
		if err := rows.Scan(&hour, &bucket, &admitted, &refused); err != nil {
			return nil, fmt.Errorf("postgres: read usage: %w", err)
		}
		out = append(out, account.UsageCount{PartnerID: partnerID, Bucket: bucket, Hour: time.Unix(hour, 0).UTC(),
			Admitted: uint64(admitted), Refused: uint64(refused)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read usage: %w", err)
	}
	return out, nil
}
