package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// The transaction manager's intents, nonces and the operator's key
// (migrations/0016_tx_intents.sql). Every write is one committed
// transaction; an update names the version it read and changes nothing
// when the row has moved on.

func txIntentOpen(in *txintent.Intent) bool { return !in.Final() || !in.Handled }

func decodeTxIntent(raw []byte) (*txintent.Intent, error) {
	var in txintent.Intent
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("postgres: decode tx intent: %w", err)
	}
	return &in, nil
}

// PutTxIntent stores a new intent once per key (store.TxIntents).
func (s *Store) PutTxIntent(ctx context.Context, in *txintent.Intent) (*txintent.Intent, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	c := in.Clone()
	c.Version = 1
	val, err := json.Marshal(c)
	if err != nil {
		return nil, false, fmt.Errorf("postgres: encode tx intent %s: %w", c.ID, err)
	}
	var created bool
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO tx_intents (id, key, purpose, chain_id, state, open, version, record)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			c.ID, c.Key, c.Purpose, int64(c.ChainID), string(c.State), txIntentOpen(c), int64(c.Version), val)
		created = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: put tx intent %s: %w", c.ID, err)
	}
	if created {
		return c, true, nil
	}
	old, err := s.TxIntentByKey(ctx, c.Key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, fmt.Errorf("postgres: tx intent %s: %w", c.ID, store.ErrExists)
	}
	return old, false, err
}

func (s *Store) txIntentWhere(ctx context.Context, col, v string) (*txintent.Intent, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM tx_intents WHERE `+col+` = $1`, v).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: tx intent %s %q: %w", col, v, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: tx intent %s %q: %w", col, v, err)
	}
	return decodeTxIntent(raw)
}

// TxIntent returns an intent by ID, or store.ErrNotFound.
func (s *Store) TxIntent(ctx context.Context, id string) (*txintent.Intent, error) {
	return s.txIntentWhere(ctx, "id", id)
}

// TxIntentByKey returns the intent with an idempotency key, or
// store.ErrNotFound.
func (s *Store) TxIntentByKey(ctx context.Context, key string) (*txintent.Intent, error) {
	return s.txIntentWhere(ctx, "key", key)
}

// ListTxIntents returns the intents q selects in ID order.
func (s *Store) ListTxIntents(ctx context.Context, q txintent.Query) ([]*txintent.Intent, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	where = append(where, "true")
	if q.Open || q.Unhandled {
		where = append(where, "open")
	}
	if q.State != "" {
		arg("state = $%d", string(q.State))
	}
	if q.Purpose != "" {
		arg("purpose = $%d", q.Purpose)
	}
	if q.ChainID != 0 {
		arg("chain_id = $%d", int64(q.ChainID))
	}
	if q.After != "" {
		arg("id > $%d", q.After)
	}
	sql := `SELECT record FROM tx_intents WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id`
	if q.Limit > 0 && !(q.Open != q.Unhandled) {
		sql += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tx intents: %w", err)
	}
	defer rows.Close()
	var out []*txintent.Intent
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("postgres: list tx intents: %w", err)
		}
		in, err := decodeTxIntent(raw)
		if err != nil {
			return nil, err
		}
		// Open alone or Unhandled alone narrows the open rows further.
		if !q.Matches(in) {
			continue
		}
		out = append(out, in)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, rows.Err()
}

// UpdateTxIntents stores intents read at their versions, all or nothing,
// with the nonces they hold, in one transaction.
func (s *Store) UpdateTxIntents(ctx context.Context, ins []*txintent.Intent) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, in := range ins {
			var handled, hadNonce bool
			err := tx.QueryRow(ctx, `SELECT coalesce((record->>'handled')::boolean, false), coalesce(record->'nonce', 'null'::jsonb) <> 'null'::jsonb
				FROM tx_intents WHERE id = $1 AND version = $2 FOR UPDATE`,
				in.ID, int64(in.Version)).Scan(&handled, &hadNonce)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("tx intent %s not at version %d: %w", in.ID, in.Version, store.ErrStale)
			}
			if err != nil {
				return err
			}
			if !hadNonce && in.Nonce != nil {
				// The account's row is locked until the commit, so that
				// two writers cannot both find a nonce free.
				var next int64
				err := tx.QueryRow(ctx, `SELECT next FROM tx_nonces WHERE chain_id = $1 AND account = $2 FOR UPDATE`,
					int64(in.ChainID), strings.ToLower(in.From)).Scan(&next)
				if err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
				if int64(*in.Nonce) < next {
					return fmt.Errorf("tx intent %s given nonce %d, the account's next is %d: %w", in.ID, *in.Nonce, next, store.ErrStale)
				}
			}
			c := in.Clone()
			c.Version++
			c.Handled = handled
			val, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE tx_intents SET state = $2, open = $3, version = $4, record = $5 WHERE id = $1`,
				c.ID, string(c.State), txIntentOpen(c), int64(c.Version), val); err != nil {
				return err
			}
			if c.Nonce != nil {
				if _, err := tx.Exec(ctx, `INSERT INTO tx_nonces (chain_id, account, next) VALUES ($1, $2, $3)
					ON CONFLICT (chain_id, account) DO UPDATE SET next = greatest(tx_nonces.next, excluded.next)`,
					int64(c.ChainID), strings.ToLower(c.From), int64(*c.Nonce+1)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: update tx intents: %w", err)
	}
	for _, in := range ins {
		in.Version++
	}
	return nil
}

// NextNonce is the account's next nonce as stored.
func (s *Store) NextNonce(ctx context.Context, chainID uint64, account string) (uint64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT next FROM tx_nonces WHERE chain_id = $1 AND account = $2`,
		int64(chainID), strings.ToLower(account)).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: next nonce: %w", err)
	}
	return uint64(n), nil
}

// RaiseNonce raises the account's next nonce to n.
func (s *Store) RaiseNonce(ctx context.Context, chainID uint64, account string, n uint64) (uint64, error) {
	if err := s.checkOpen(ctx); err != nil {
		return 0, err
	}
	var got int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO tx_nonces (chain_id, account, next) VALUES ($1, $2, $3)
			ON CONFLICT (chain_id, account) DO UPDATE SET next = greatest(tx_nonces.next, excluded.next) RETURNING next`,
			int64(chainID), strings.ToLower(account), int64(n)).Scan(&got)
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: raise nonce: %w", err)
	}
	return uint64(got), nil
}

// MarkTxIntentHandled marks a final intent handled.
func (s *Store) MarkTxIntentHandled(ctx context.Context, id string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT record FROM tx_intents WHERE id = $1 FOR UPDATE`, id).Scan(&raw); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		in, err := decodeTxIntent(raw)
		if err != nil {
			return err
		}
		if !in.Final() {
			return fmt.Errorf("tx intent %s is %s, not final", id, in.State)
		}
		if in.Handled {
			return nil
		}
		in.Handled = true
		in.Version++
		val, err := json.Marshal(in)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE tx_intents SET open = false, version = $2, record = $3 WHERE id = $1`, id, int64(in.Version), val)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: mark tx intent %s handled: %w", id, err)
	}
	return nil
}

// OperatorKey opens the operator key stored under name.
func (s *Store) OperatorKey(ctx context.Context, name string) ([]byte, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, err
	}
	var sealed []byte
	err := s.pool.QueryRow(ctx, `SELECT sealed FROM operator_keys WHERE name = $1`, name).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: operator key %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: operator key %q: %w", name, err)
	}
	return s.seal.OpenOperatorKey(name, sealed)
}

// CreateOperatorKey seals and stores key under name unless one is there.
func (s *Store) CreateOperatorKey(ctx context.Context, name string, key []byte) ([]byte, bool, error) {
	if err := s.checkOpen(ctx); err != nil {
		return nil, false, err
	}
	sealed, err := s.seal.SealOperatorKey(name, key)
	if err != nil {
		return nil, false, err
	}
	var created bool
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO operator_keys (name, sealed) VALUES ($1, $2) ON CONFLICT DO NOTHING`, name, sealed)
		created = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: store operator key: %w", err)
	}
	if created {
		return bytes.Clone(key), true, nil
	}
	old, err := s.OperatorKey(ctx, name)
	return old, false, err
}
