package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/store"
)

// recordQuotesSQL inserts a batch of quote records in one statement,
// numbering each earning from ledger_seq; a row whose key (partner,
// creation time, id) is already stored, or earlier in the batch, is
// skipped (ON CONFLICT DO NOTHING: a concurrent transaction inserting the
// same key makes this one wait for it, then skip). Rows go in in key
// order, whatever the batch's: two nodes' batches sharing quotes then wait
// for each other in one direction only, never in a cycle (a deadlock,
// which PostgreSQL would break by failing one batch). It returns the keys
// it inserted.
const recordQuotesSQL = `INSERT INTO activity (partner_id, created_ns, id, record, pending_ecosystem, ledger_seq)
	SELECT p, c, i, r, e, CASE WHEN e IS NULL THEN NULL ELSE nextval('ledger_seq') END
	FROM unnest($1::text[], $2::bigint[], $3::text[], $4::json[], $5::text[]) WITH ORDINALITY AS b(p, c, i, r, e, n)
	ORDER BY p, c, i, n
	ON CONFLICT DO NOTHING
	RETURNING partner_id, created_ns, id`

// quoteKey is an activity row's identity.
type quoteKey struct {
	partner string
	created int64
	id      string
}

// RecordQuotes writes new quote records in one transaction, committed
// durably or not as d says (store.Unsynced commits with
// synchronous_commit off, on the unsynced pool): the ledger actor's
// group commit is one transaction per batch. A record never overwrites
// one already stored or being committed for the same quote, on this node
// or another (it is reported false in written), so a retried quote is
// never counted twice and a settled earning never turns pending again.
// Earnings are numbered in their ecosystem's pending order here.
func (s *Store) RecordQuotes(ctx context.Context, recs []store.EncodedQuote, d store.Durability) (written []bool, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	// One statement is one transaction: on the main pool committed
	// durably (synchronous_commit on), on the unsynced pool without
	// waiting for the WAL flush.
	pool := s.pool
	if d != store.Synced {
		pool = s.async
	}
	written, err = insertQuotes(ctx, pool, recs)
	if err != nil {
		return nil, fmt.Errorf("postgres: commit quote records: %w", err)
	}
	return written, nil
}

// querier runs a statement on a pool (its own transaction) or inside one.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// insertQuotes runs recordQuotesSQL for recs on q and reports which of
// them it wrote.
func insertQuotes(ctx context.Context, q querier, recs []store.EncodedQuote) (written []bool, err error) {
	n := len(recs)
	partners, created, ids, records, ecos := make([]string, n), make([]int64, n), make([]string, n), make([][]byte, n), make([]*string, n)
	for i, r := range recs {
		a, val := r.Activity(), r.Record()
		if a == nil || val == nil {
			return nil, errors.New("postgres: record quotes: a record was not encoded with store.EncodeQuote")
		}
		partners[i], created[i], ids[i], records[i] = a.PartnerID, nanos(a.CreatedAt), a.ID, val
		if a.Earning != nil {
			ecos[i] = &a.Earning.Ecosystem
		}
	}
	written = make([]bool, n)
	if n == 0 {
		return written, nil
	}
	args := []any{partners, created, ids, records, ecos}
	var inserted []quoteKey
	scan := func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			var k quoteKey
			if err := rows.Scan(&k.partner, &k.created, &k.id); err != nil {
				return err
			}
			inserted = append(inserted, k)
		}
		return rows.Err()
	}
	rows, err := q.Query(ctx, recordQuotesSQL, args...)
	if err == nil {
		err = scan(rows)
	}
	if err != nil {
		return nil, err
	}
	// Each inserted key marks the first record of the batch with that key
	// (among equal keys the statement inserts in the batch's order, so a
	// repeat later in the batch is the one skipped).
	left := make(map[quoteKey]int, len(inserted))
	for _, k := range inserted {
		left[k]++
	}
	for i := range recs {
		k := quoteKey{partners[i], created[i], ids[i]}
		if left[k] > 0 {
			left[k]--
			written[i] = true
		}
	}
	return written, nil
}
