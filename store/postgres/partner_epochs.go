package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/partnerquota"
	"github.com/swapgate/swapgate/store"
)

// A partner's grain, in a cluster, fences what it writes with an epoch kept
// here (partner_epochs): each activation bumps it, and every fenced write
// compares the epoch its writer holds with the row's, in the write's own
// transaction and under a share lock of the row. The bump's update waits
// for the writes holding that lock, and a write that comes after it sees
// the new epoch: so once an activation has bumped the epoch, no write of
// an earlier one commits, and what the new activation reads after its
// bump is every grant the earlier ones made. The store compares; the grain
// decides what to do about a stale answer.

// BumpPartnerEpoch starts a new activation of partnerID's grain: it
// increments the partner's epoch (the first is 1) and returns it.
func (s *Store) BumpPartnerEpoch(ctx context.Context, partnerID string) (int64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	var epoch int64
	if err := s.pool.QueryRow(ctx, `INSERT INTO partner_epochs (partner_id, epoch) VALUES ($1, 1)
		ON CONFLICT (partner_id) DO UPDATE SET epoch = partner_epochs.epoch + 1 RETURNING epoch`, partnerID).Scan(&epoch); err != nil {
		return 0, fmt.Errorf("postgres: bump partner epoch: %w", err)
	}
	return epoch, nil
}

// PartnerEpoch is partnerID's epoch now (0 when no grain of it was ever
// activated).
func (s *Store) PartnerEpoch(ctx context.Context, partnerID string) (int64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	var epoch int64
	err := s.pool.QueryRow(ctx, `SELECT epoch FROM partner_epochs WHERE partner_id = $1`, partnerID).Scan(&epoch)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("postgres: read partner epoch: %w", err)
	}
	return epoch, nil
}

// PartnerGrants returns the grants of partnerID's windows that started
// after since, in no particular order.
func (s *Store) PartnerGrants(ctx context.Context, partnerID string, since time.Time) ([]partnerquota.Grant, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT bucket, request_id, requester, window_start_ns, granted, returned
		FROM partner_grants WHERE partner_id = $1 AND window_start_ns > $2`, partnerID, nanos(since))
	if err != nil {
		return nil, fmt.Errorf("postgres: read partner grants: %w", err)
	}
	defer rows.Close()
	var out []partnerquota.Grant
	for rows.Next() {
		var g partnerquota.Grant
		var start int64
		if err := rows.Scan(&g.Bucket, &g.RequestID, &g.Requester, &start, &g.Granted, &g.Returned); err != nil {
			return nil, fmt.Errorf("postgres: read partner grants: %w", err)
		}
		g.WindowStart = fromNanos(start)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read partner grants: %w", err)
	}
	return out, nil
}

// SweepPartnerGrants deletes partnerID's grants of windows that started
// at or before before (ended windows), without waiting for the WAL flush:
// a swept row that a crash brings back is one of an ended window, which no
// reader counts.
func (s *Store) SweepPartnerGrants(ctx context.Context, partnerID string, before time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.async.Exec(ctx, `DELETE FROM partner_grants WHERE partner_id = $1 AND window_start_ns <= $2`,
		partnerID, nanos(before)); err != nil {
		return fmt.Errorf("postgres: sweep partner grants: %w", err)
	}
	return nil
}

// recordGrantSQL writes a grant only while $2 is the partner's epoch, in
// one statement: the CTE locks the epoch row (FOR SHARE; a bump under way
// is waited for and its epoch read), the insert takes the grant only when
// the epoch matches, and a grant already written under its request id is
// kept as it is. It answers the partner's epoch (NULL when it has none)
// and whether the grant was inserted.
const recordGrantSQL = `WITH e AS (SELECT epoch FROM partner_epochs WHERE partner_id = $1 FOR SHARE),
	ins AS (INSERT INTO partner_grants (partner_id, request_id, bucket, requester, window_start_ns, granted, returned)
		SELECT $1, $3, $4, $5, $6, $7, $8 FROM e WHERE e.epoch = $2
		ON CONFLICT (partner_id, request_id) DO NOTHING RETURNING 1)
	SELECT (SELECT epoch FROM e), (SELECT count(*) FROM ins)`

// RecordPartnerGrant writes g for partnerID, committed durably, if epoch
// is still the partner's; otherwise it writes nothing and returns
// partnerquota.ErrStaleEpoch. It returns the grant as the store keeps it:
// g when it was written, or, when a grant is already stored under g's
// request id (a retried acquire, perhaps in a later window or on a later
// activation), that first grant, unchanged, which is the one to answer:
// the retry was counted where the first was.
func (s *Store) RecordPartnerGrant(ctx context.Context, partnerID string, epoch int64, g partnerquota.Grant) (partnerquota.Grant, error) {
	if err := s.checkOpen(ctx); err != nil {
		return partnerquota.Grant{}, err
	}
	if g.Granted < 0 || g.Returned < 0 || g.Granted+g.Returned == 0 || g.RequestID == "" || g.Bucket == "" {
		return partnerquota.Grant{}, fmt.Errorf("postgres: record partner grant: want a grant or a give-back, neither negative, a request id and a bucket, got %+v", g)
	}
	var current *int64
	var inserted int64
	if err := s.pool.QueryRow(ctx, recordGrantSQL, partnerID, epoch, g.RequestID, g.Bucket, g.Requester,
		nanos(g.WindowStart), g.Granted, g.Returned).Scan(&current, &inserted); err != nil {
		return partnerquota.Grant{}, fmt.Errorf("postgres: record partner grant: %w", err)
	}
	if current == nil || *current != epoch {
		return partnerquota.Grant{}, fmt.Errorf("postgres: record partner grant of %s under epoch %d: %w", partnerID, epoch, partnerquota.ErrStaleEpoch)
	}
	if inserted == 1 {
		return g, nil
	}
	// The request id was taken: read the first grant back (after the
	// statement, so that one committed concurrently is seen too).
	first := partnerquota.Grant{RequestID: g.RequestID}
	var start int64
	if err := s.pool.QueryRow(ctx, `SELECT bucket, requester, window_start_ns, granted, returned FROM partner_grants
		WHERE partner_id = $1 AND request_id = $2`, partnerID, g.RequestID).Scan(&first.Bucket, &first.Requester, &start, &first.Granted, &first.Returned); err != nil {
		return partnerquota.Grant{}, fmt.Errorf("postgres: record partner grant: read the grant of request %s back: %w", g.RequestID, err)
	}
	first.WindowStart = fromNanos(start)
	return first, nil
}

// recordQuotesFencedSQL is recordQuotesSQL behind the epoch check, in one
// statement (one round trip, one transaction, as the unfenced batch):
// the epoch rows of the batch's partners ($6, expected epochs $7) are
// share-locked in partner order (a bump under way is waited for and its
// epoch read), the partners whose epoch is the one expected are fresh, and
// only their records are inserted. It answers the keys inserted (true)
// and the fresh partners (false).
const recordQuotesFencedSQL = `WITH want AS (SELECT * FROM unnest($6::text[], $7::bigint[]) AS w(p, ep)),
	e AS (SELECT pe.partner_id, pe.epoch FROM partner_epochs pe JOIN want ON pe.partner_id = want.p
		ORDER BY pe.partner_id FOR SHARE OF pe),
	fresh AS (SELECT want.p FROM want JOIN e ON e.partner_id = want.p AND e.epoch = want.ep),
	ins AS (INSERT INTO activity (partner_id, created_ns, id, record, pending_ecosystem, ledger_seq)
		SELECT p, c, i, r, eco, CASE WHEN eco IS NULL THEN NULL ELSE nextval('ledger_seq') END
		FROM unnest($1::text[], $2::bigint[], $3::text[], $4::json[], $5::text[]) WITH ORDINALITY AS b(p, c, i, r, eco, n)
		WHERE p IN (SELECT p FROM fresh)
		ORDER BY p, c, i, n
		ON CONFLICT DO NOTHING
		RETURNING partner_id, created_ns, id)
	SELECT true, partner_id, created_ns, id FROM ins
	UNION ALL SELECT false, p, 0, '' FROM fresh`

// RecordQuotesFenced is RecordQuotes for a cluster: each record's partner
// must still have the epoch epochs gives it (the one its node's lease of
// the partner's grain carries). The check and the inserts are one
// statement, the epoch rows share-locked first, in partner order: the
// records of partners whose epoch moved (or who have none) are not written
// and the partners are returned in stale, sorted; the others are written
// as RecordQuotes writes them. The node refreshes its lease of a stale
// partner and sends its records again; a quote's key keeps it from being
// written twice.
func (s *Store) RecordQuotesFenced(ctx context.Context, recs []store.EncodedQuote, epochs map[string]int64, d store.Durability) (written []bool, stale []string, err error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, nil, err
	}
	n := len(recs)
	written = make([]bool, n)
	if n == 0 {
		return written, nil, nil
	}
	partners, created, ids, records, ecos := make([]string, n), make([]int64, n), make([]string, n), make([][]byte, n), make([]*string, n)
	var wantP []string
	for i, r := range recs {
		a, val := r.Activity(), r.Record()
		if a == nil || val == nil {
			return nil, nil, errors.New("postgres: record quotes: a record was not encoded with store.EncodeQuote")
		}
		if _, ok := epochs[a.PartnerID]; !ok {
			return nil, nil, fmt.Errorf("postgres: record quotes: record %d's partner %s has no epoch", i, a.PartnerID)
		}
		partners[i], created[i], ids[i], records[i] = a.PartnerID, nanos(a.CreatedAt), a.ID, val
		if a.Earning != nil {
			ecos[i] = &a.Earning.Ecosystem
		}
		if !slices.Contains(wantP, a.PartnerID) {
			wantP = append(wantP, a.PartnerID)
		}
	}
	slices.Sort(wantP)
	wantE := make([]int64, len(wantP))
	for i, p := range wantP {
		wantE[i] = epochs[p]
	}
	// One statement is one transaction: on the main pool committed
	// durably, on the unsynced pool without waiting for the WAL flush.
	pool := s.pool
	if d != store.Synced {
		pool = s.async
	}
	rows, err := pool.Query(ctx, recordQuotesFencedSQL, partners, created, ids, records, ecos, wantP, wantE)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: commit fenced quote records: %w", err)
	}
	var inserted []quoteKey
	fresh := map[string]bool{}
	for rows.Next() {
		var isRow bool
		var k quoteKey
		if err := rows.Scan(&isRow, &k.partner, &k.created, &k.id); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("postgres: commit fenced quote records: %w", err)
		}
		if isRow {
			inserted = append(inserted, k)
		} else {
			fresh[k.partner] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("postgres: commit fenced quote records: %w", err)
	}
	for _, p := range wantP {
		if !fresh[p] {
			stale = append(stale, p)
		}
	}
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
	return written, stale, nil
}
