package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Settlement split between the store and its caller, as in the Pebble
// store: the store reads (FeeWalletsIn, PendingEarnings) and applies
// (ApplySettlement), and the caller (admin.Settle) runs
// account.Settlement over what it read to decide each earning. The store
// keeps the promise that one run's decisions are applied whole or not at
// all, durably, and that no earning is paid twice: a record that left the
// pending set between the read and the apply (another node's run took it)
// fails the apply with account.ErrSettlementConflict, which makes the
// caller read and decide again.
//
// Settle (settle.go), which reads, decides and applies in one transaction,
// predates the split; both serialise on the same advisory lock, so runs of
// either kind on one ecosystem never interleave their applies.

// settleLockSQL takes the transaction lock that serialises the applies of
// one ecosystem's settlement runs across every node.
const settleLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('settle/' || $1, 0))`

// FeeWalletsIn returns every partner's fee wallet address in ecosystem,
// keyed by partner ID, read from the database (never the cache): the
// wallets a settlement run pays to, one consistent set (one statement's
// snapshot).
func (s *Store) FeeWalletsIn(ctx context.Context, ecosystem string) (map[string]string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if !account.ValidID(ecosystem) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT partner_id, address FROM fee_wallets WHERE ecosystem = $1`, ecosystem)
	if err != nil {
		return nil, fmt.Errorf("postgres: fee wallets in %s: %w", ecosystem, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, a string
		if err := rows.Scan(&p, &a); err != nil {
			return nil, fmt.Errorf("postgres: fee wallets in %s: %w", ecosystem, err)
		}
		out[p] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: fee wallets in %s: %w", ecosystem, err)
	}
	return out, nil
}

// PendingEarnings calls fn with the record of every earning pending in
// ecosystem, in ledger order (about commit order), until fn returns an
// error, which it returns. Each record is a fresh copy the caller may
// change. The rows are read in one statement's snapshot before fn is
// first called, so fn may take its time without holding a connection's
// cursor open; a pending row without an earning is a broken store,
// reported rather than skipped.
func (s *Store) PendingEarnings(ctx context.Context, ecosystem string, fn func(*account.Activity) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("postgres: pending earnings: invalid ecosystem %q", ecosystem)
	}
	rows, err := s.pool.Query(ctx, `SELECT partner_id, id, record FROM activity
		WHERE pending_ecosystem = $1 ORDER BY ledger_seq`, ecosystem)
	if err != nil {
		return fmt.Errorf("postgres: pending earnings of %s: %w", ecosystem, err)
	}
	var recs []*account.Activity
	for rows.Next() {
		var (
			partner, id string
			raw         []byte
		)
		if err := rows.Scan(&partner, &id, &raw); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: pending earnings of %s: %w", ecosystem, err)
		}
		rec, err := store.DecodeActivity(raw)
		if err != nil {
			rows.Close()
			return fmt.Errorf("postgres: pending earnings of %s: %w", ecosystem, err)
		}
		if rec.Earning == nil {
			rows.Close()
			return fmt.Errorf("postgres: pending earnings of %s: pending row %s of %s has no earning", ecosystem, id, partner)
		}
		recs = append(recs, rec)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: pending earnings of %s: %w", ecosystem, err)
	}
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// ApplySettlement applies a settlement run's decisions on ecosystem in one
// committed transaction, so that a crash leaves all of it or none: each
// paid record (its earning marked settled by account.Settlement) has its
// earning stored and leaves the pending set, each forgotten one only
// leaves the pending set, and a batch with an ID is recorded (without its
// Skipped list, which is reported, not stored). Every record named must
// still be pending in ecosystem, or nothing is written and the error is
// account.ErrSettlementConflict: two runs never pay one earning. With
// nothing to apply it writes nothing.
//
// Of a paid record only the earning is written, not the whole record the
// run read: a tracker may have changed the line's status since (its swap
// completed), and that change is kept rather than overwritten with the
// run's older copy. The earning is the run's to decide; the rest is not.
func (s *Store) ApplySettlement(ctx context.Context, ecosystem string, batch *account.SettlementBatch, paid, forgotten []*account.Activity) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("postgres: apply settlement: invalid ecosystem %q", ecosystem)
	}
	if len(paid) == 0 && len(forgotten) == 0 {
		return nil
	}
	// One entry per record named (a record named twice is applied once,
	// as in the Pebble store); earning "" marks a forgotten one.
	type key struct {
		partner string
		created int64
		id      string
	}
	named := make(map[key]string, len(paid)+len(forgotten))
	for _, a := range paid {
		if a.Earning == nil || a.Earning.State != account.EarningSettled {
			return fmt.Errorf("postgres: apply settlement %s: paid record %s is not marked settled", ecosystem, a.ID)
		}
		enc, err := json.Marshal(a.Earning)
		if err != nil {
			return fmt.Errorf("postgres: apply settlement %s: encode earning of %s: %w", ecosystem, a.ID, err)
		}
		named[key{a.PartnerID, nanos(a.CreatedAt), a.ID}] = string(enc)
	}
	for _, a := range forgotten {
		k := key{a.PartnerID, nanos(a.CreatedAt), a.ID}
		if _, ok := named[k]; !ok {
			named[k] = ""
		}
	}
	partners := make([]string, 0, len(named))
	created := make([]int64, 0, len(named))
	ids := make([]string, 0, len(named))
	earnings := make([]string, 0, len(named))
	for k, e := range named {
		partners, created, ids, earnings = append(partners, k.partner), append(created, k.created), append(ids, k.id), append(earnings, e)
	}
	var batchRec []byte
	if batch != nil && batch.ID != "" {
		rec := *batch
		rec.Skipped = nil
		var err error
		if batchRec, err = json.Marshal(rec); err != nil {
			return fmt.Errorf("postgres: encode settlement batch: %w", err)
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, settleLockSQL, ecosystem); err != nil {
			return err
		}
		// The pending_ecosystem condition is the check: a row another run
		// took is not updated, and the count falls short.
		tag, err := tx.Exec(ctx, `UPDATE activity AS a SET
				record = CASE WHEN v.earning = '' THEN a.record ELSE jsonb_set(a.record::jsonb, '{earning}', v.earning::jsonb)::json END,
				pending_ecosystem = NULL, ledger_seq = NULL
			FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[]) AS v(partner_id, created_ns, id, earning)
			WHERE a.partner_id = v.partner_id AND a.created_ns = v.created_ns AND a.id = v.id
				AND a.pending_ecosystem = $1`,
			ecosystem, partners, created, ids, earnings)
		if err != nil {
			return err
		}
		if n := tag.RowsAffected(); n != int64(len(named)) {
			return fmt.Errorf("%d of %d records no longer pending: %w", int64(len(named))-n, len(named), account.ErrSettlementConflict)
		}
		if batchRec == nil {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO settlements (ecosystem, id, record) VALUES ($1, $2, $3)`, ecosystem, batch.ID, batchRec)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: apply settlement %s: %w", ecosystem, err)
	}
	return nil
}
