package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Settle runs a settlement of ecosystem (see account.Settlement for the
// rules, which decide each earning): in one transaction it reads the fee
// wallets registered in the ecosystem and the earnings pending there, in
// ledger order, and applies the decisions (paid lines rewritten as settled
// and, paid or found settled already, taken out of the pending order; the
// batch recorded), so a crash leaves all of it or none. Runs of one
// ecosystem are serialised across nodes by a transaction lock, and the
// rows it reads are locked until it commits: a wallet changed meanwhile
// waits for the run (the run pays the wallets it read), and a tracker
// changing a pending line's status waits too rather than be lost. Quotes
// recorded meanwhile wait for the next run. A second run finds nothing
// new. A dry run decides the same and writes nothing.
func (s *Store) Settle(ctx context.Context, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	if !account.ValidID(ecosystem) {
		return nil, fmt.Errorf("postgres: settle: invalid ecosystem %q", ecosystem)
	}
	now = now.UTC()
	id, err := account.NewBatchID(now)
	if err != nil {
		return nil, err
	}
	var batch *account.SettlementBatch
	errDry := fmt.Errorf("dry run")
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('settle/' || $1, 0))`, ecosystem); err != nil {
			return err
		}
		wallets := map[string]string{}
		rows, err := tx.Query(ctx, `SELECT partner_id, address FROM fee_wallets WHERE ecosystem = $1 FOR SHARE`, ecosystem)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p, a string
			if err := rows.Scan(&p, &a); err != nil {
				rows.Close()
				return err
			}
			wallets[p] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("fee wallets: %w", err)
		}
		run := account.NewSettlement(ecosystem, id, now, wallets)

		type line struct {
			partner string
			created int64
			id      string
			rec     *account.Activity
		}
		var lines []line
		rows, err = tx.Query(ctx, `SELECT partner_id, created_ns, id, record FROM activity
			WHERE pending_ecosystem = $1 ORDER BY ledger_seq FOR UPDATE`, ecosystem)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				l   line
				raw []byte
			)
			if err := rows.Scan(&l.partner, &l.created, &l.id, &raw); err != nil {
				rows.Close()
				return err
			}
			if l.rec, err = store.DecodeActivity(raw); err != nil {
				rows.Close()
				return err
			}
			if l.rec.Earning == nil {
				rows.Close()
				return fmt.Errorf("pending line %s of %s has no earning", l.id, l.partner)
			}
			lines = append(lines, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("pending lines: %w", err)
		}
		changed := false
		for _, l := range lines {
			if err := ctx.Err(); err != nil {
				return err
			}
			switch run.Decide(l.rec) {
			case account.Pay:
				earning, err := json.Marshal(l.rec.Earning)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE activity SET record = jsonb_set(record::jsonb, '{earning}', $4::jsonb)::json,
					pending_ecosystem = NULL, ledger_seq = NULL WHERE partner_id = $1 AND created_ns = $2 AND id = $3`,
					l.partner, l.created, l.id, earning); err != nil {
					return err
				}
				changed = true
			case account.Forget:
				if _, err := tx.Exec(ctx, `UPDATE activity SET pending_ecosystem = NULL, ledger_seq = NULL
					WHERE partner_id = $1 AND created_ns = $2 AND id = $3`, l.partner, l.created, l.id); err != nil {
					return err
				}
				changed = true
			}
		}
		batch = run.Batch(dryRun)
		if dryRun {
			return errDry // rolls back what the decisions would have written
		}
		if !changed || batch.ID == "" {
			return nil
		}
		rec := *batch
		rec.Skipped = nil
		val, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode settlement batch: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO settlements (ecosystem, id, record) VALUES ($1, $2, $3)`, ecosystem, batch.ID, val)
		return err
	})
	if err != nil && err != errDry {
		return nil, fmt.Errorf("postgres: settle %s: %w", ecosystem, err)
	}
	return batch, nil
}

// SettlementBatches returns the recorded batches of an ecosystem, oldest
// first (batch IDs start with their run's time).
func (s *Store) SettlementBatches(ctx context.Context, ecosystem string) ([]account.SettlementBatch, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	out := []account.SettlementBatch{}
	if !account.ValidID(ecosystem) {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT record FROM settlements WHERE ecosystem = $1 ORDER BY id`, ecosystem)
	if err != nil {
		return nil, fmt.Errorf("postgres: list settlements of %s: %w", ecosystem, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			raw []byte
			b   account.SettlementBatch
		)
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: list settlements of %s: %w", ecosystem, err)
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("postgres: decode settlement batch: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list settlements of %s: %w", ecosystem, err)
	}
	return out, nil
}
