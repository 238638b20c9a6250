package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Payouts (store.Payouts): the transfers of on-chain settlement runs in
// table payouts (migration 17). Plans and finishes take the ecosystem's
// settlement lock (settleLockSQL), so that they never interleave with one
// another or with a settlement apply.

// payoutRecord is the stored JSON of a transfer.
type payoutRecord struct {
	V int `json:"v"`
	account.Transfer
}

func encodePayout(t *account.Transfer) ([]byte, error) {
	b, err := json.Marshal(payoutRecord{V: 1, Transfer: *t})
	if err != nil {
		return nil, fmt.Errorf("postgres: encode payout %s: %w", t.ID, err)
	}
	return b, nil
}

func decodePayout(b []byte) (*account.Transfer, error) {
	var rec payoutRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("postgres: decode payout: %w", err)
	}
	if rec.V != 1 {
		return nil, fmt.Errorf("postgres: payout record version %d unknown", rec.V)
	}
	return &rec.Transfer, nil
}

// PlanPayouts stores the transfers and takes their earnings (and the
// forgotten records) out of the pending set in one committed transaction.
func (s *Store) PlanPayouts(ctx context.Context, ecosystem string, batch *account.SettlementBatch, transfers []*account.Transfer, forgotten []*account.Activity) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !account.ValidID(ecosystem) {
		return fmt.Errorf("postgres: plan payouts: invalid ecosystem %q", ecosystem)
	}
	if len(transfers) == 0 && len(forgotten) == 0 {
		return nil
	}
	type key struct {
		partner string
		created int64
		id      string
	}
	named := map[key]bool{}
	recs := make([][]byte, len(transfers))
	for i, t := range transfers {
		if t.Final() || t.Ecosystem != ecosystem || !account.ValidTransferID(t.ID) {
			return fmt.Errorf("postgres: plan payouts %s: transfer %s (%s, %s) cannot be planned", ecosystem, t.ID, t.Ecosystem, t.State)
		}
		var err error
		if recs[i], err = encodePayout(t); err != nil {
			return err
		}
		for _, e := range t.Earnings {
			named[key{e.PartnerID, nanos(e.CreatedAt), e.ID}] = true
		}
	}
	for _, a := range forgotten {
		named[key{a.PartnerID, nanos(a.CreatedAt), a.ID}] = true
	}
	var partners, ids []string
	var created []int64
	for k := range named {
		partners, created, ids = append(partners, k.partner), append(created, k.created), append(ids, k.id)
	}
	var batchRec []byte
	if batch != nil && batch.ID != "" {
		rec := *batch
		rec.Skipped, rec.Failed = nil, nil
		var err error
		if batchRec, err = json.Marshal(rec); err != nil {
			return fmt.Errorf("postgres: encode settlement batch: %w", err)
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, settleLockSQL, ecosystem); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE activity AS a SET pending_ecosystem = NULL, ledger_seq = NULL
			FROM unnest($2::text[], $3::bigint[], $4::text[]) AS v(partner_id, created_ns, id)
			WHERE a.partner_id = v.partner_id AND a.created_ns = v.created_ns AND a.id = v.id
				AND a.pending_ecosystem = $1`, ecosystem, partners, created, ids)
		if err != nil {
			return err
		}
		if n := tag.RowsAffected(); n != int64(len(named)) {
			return fmt.Errorf("%d of %d records no longer pending: %w", int64(len(named))-n, len(named), account.ErrSettlementConflict)
		}
		for i, t := range transfers {
			tag, err := tx.Exec(ctx, `INSERT INTO payouts (id, ecosystem, state, created_ns, record) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (id) DO NOTHING`, t.ID, ecosystem, t.State, nanos(t.CreatedAt), recs[i])
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("transfer %s exists: %w", t.ID, account.ErrSettlementConflict)
			}
		}
		if batchRec == nil {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO settlements (ecosystem, id, record) VALUES ($1, $2, $3)`, ecosystem, batch.ID, batchRec)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: plan payouts %s: %w", ecosystem, err)
	}
	return nil
}

// Payout reads the transfer id.
func (s *Store) Payout(ctx context.Context, id string) (*account.Transfer, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM payouts WHERE id = $1`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: payout %s: %w", id, err)
	}
	return decodePayout(raw)
}

// Payouts lists ecosystem's transfers in state ("" for all), oldest first.
func (s *Store) Payouts(ctx context.Context, ecosystem, state string) ([]*account.Transfer, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT record FROM payouts WHERE ecosystem = $1 AND ($2 = '' OR state = $2)
		ORDER BY created_ns, id`, ecosystem, state)
	if err != nil {
		return nil, fmt.Errorf("postgres: payouts of %s: %w", ecosystem, err)
	}
	defer rows.Close()
	out := []*account.Transfer{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: payouts of %s: %w", ecosystem, err)
		}
		t, err := decodePayout(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: payouts of %s: %w", ecosystem, err)
	}
	return out, nil
}

// FinishPayout stores t final, while the stored row is still open (its
// row locked), with its earnings settled or pending again, in one
// committed transaction. Of a settled earning's record only the earning is
// rewritten, as ApplySettlement does: a tracker's change of the line's
// status is kept.
func (s *Store) FinishPayout(ctx context.Context, t *account.Transfer) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if !t.Final() {
		return fmt.Errorf("postgres: finish payout %s: state %s is not final", t.ID, t.State)
	}
	rec, err := encodePayout(t)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var eco string
		if err := tx.QueryRow(ctx, `SELECT ecosystem FROM payouts WHERE id = $1`, t.ID).Scan(&eco); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		if _, err := tx.Exec(ctx, settleLockSQL, eco); err != nil {
			return err
		}
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT record FROM payouts WHERE id = $1 FOR UPDATE`, t.ID).Scan(&raw); err != nil {
			return err
		}
		stored, err := decodePayout(raw)
		if err != nil {
			return err
		}
		if stored.Final() {
			return fmt.Errorf("already %s: %w", stored.State, store.ErrStale)
		}
		if _, err := tx.Exec(ctx, `UPDATE payouts SET state = $2, record = $3 WHERE id = $1`, t.ID, t.State, rec); err != nil {
			return err
		}
		for _, e := range stored.Earnings {
			if t.State == account.TransferFailed {
				if _, err := tx.Exec(ctx, `UPDATE activity SET pending_ecosystem = $4, ledger_seq = nextval('ledger_seq')
					WHERE partner_id = $1 AND created_ns = $2 AND id = $3`, e.PartnerID, nanos(e.CreatedAt), e.ID, stored.Ecosystem); err != nil {
					return err
				}
				continue
			}
			var recRaw []byte
			if err := tx.QueryRow(ctx, `SELECT record FROM activity WHERE partner_id = $1 AND created_ns = $2 AND id = $3 FOR UPDATE`,
				e.PartnerID, nanos(e.CreatedAt), e.ID).Scan(&recRaw); err != nil {
				return fmt.Errorf("earning %s: %w", e.ID, err)
			}
			a, err := store.DecodeActivity(recRaw)
			if err != nil {
				return err
			}
			if a.Earning == nil {
				return fmt.Errorf("record %s carries no earning", e.ID)
			}
			account.SettleEarning(a.Earning, t)
			enc, err := json.Marshal(a.Earning)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE activity SET record = jsonb_set(record::jsonb, '{earning}', $4::jsonb)::json
				WHERE partner_id = $1 AND created_ns = $2 AND id = $3`, e.PartnerID, nanos(e.CreatedAt), e.ID, string(enc)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: finish payout %s: %w", t.ID, err)
	}
	return nil
}
