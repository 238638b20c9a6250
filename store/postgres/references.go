package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// PutQuoteRefs indexes the multi-step quotes among ts by their reference
// and by their step-1 calldata's (quote_refs, kept), and every other
// quote with an EVM transaction by its calldata's (EncodedTicket.CallRef;
// quote_calls, swept with the tickets), and writes nothing for a batch
// with none. Like the tickets they go with, the entries commit with
// synchronous_commit off (the unsynced pool): a crash of the server may
// lose the last few hundred milliseconds of them, as it may lose the
// Pebble store's unsynced ones.
func (s *Store) PutQuoteRefs(ctx context.Context, ts []store.EncodedTicket) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	var refs, calls [][]byte
	var ids, callIDs []string
	var issued []int64
	for _, t := range ts {
		call, hasCall := t.CallRef()
		if !t.IsMultiStep() {
			if !hasCall {
				continue
			}
			at, ok := quote.IssuedAt(t.ID)
			if !ok {
				return fmt.Errorf("postgres: call reference of quote %q: malformed id", t.ID)
			}
			calls, callIDs, issued = append(calls, call[:]), append(callIDs, t.ID), append(issued, at.Unix())
			continue
		}
		ref := quote.Ref(t.ID)
		refs, ids = append(refs, ref[:]), append(ids, t.ID)
		if hasCall {
			refs, ids = append(refs, call[:]), append(ids, t.ID)
		}
	}
	if len(refs) > 0 {
		if _, err := s.async.Exec(ctx, `INSERT INTO quote_refs (ref, quote_id) SELECT * FROM unnest($1::bytea[], $2::text[])
			ON CONFLICT (ref) DO UPDATE SET quote_id = excluded.quote_id`, refs, ids); err != nil {
			return fmt.Errorf("postgres: commit quote references: %w", err)
		}
	}
	if len(calls) > 0 {
		// A batch holding one calldata twice (two quotes alike) keeps the
		// later; ON CONFLICT cannot touch a row twice in one statement.
		if _, err := s.async.Exec(ctx, `INSERT INTO quote_calls (ref, quote_id, issued_s)
			SELECT DISTINCT ON (ref) ref, quote_id, issued_s FROM unnest($1::bytea[], $2::text[], $3::bigint[]) WITH ORDINALITY AS c(ref, quote_id, issued_s, n)
			ORDER BY ref, n DESC
			ON CONFLICT (ref) DO UPDATE SET quote_id = excluded.quote_id, issued_s = excluded.issued_s`, calls, callIDs, issued); err != nil {
			return fmt.Errorf("postgres: commit call references: %w", err)
		}
	}
	return nil
}

// SweepQuoteRefs drops the call references of quotes (other than
// multi-step ones) issued before before.
func (s *Store) SweepQuoteRefs(ctx context.Context, before time.Time) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.async.Exec(ctx, `DELETE FROM quote_calls WHERE issued_s < $1`, before.Unix()); err != nil {
		return fmt.Errorf("postgres: sweep call references: %w", err)
	}
	return nil
}

// QuoteByRef returns the id of the quote with reference (or call
// reference) ref, or store.ErrNotFound.
func (s *Store) QuoteByRef(ctx context.Context, ref [32]byte) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	var id string
	err := s.pool.QueryRow(ctx, `SELECT quote_id FROM quote_refs WHERE ref = $1
		UNION ALL SELECT quote_id FROM quote_calls WHERE ref = $1 LIMIT 1`, ref[:]).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("postgres: quote ref %x: %w", ref, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: quote ref %x: %w", ref, err)
	}
	return id, nil
}

// SandboxDelivery returns the hash of the delivery made for ref, or
// store.ErrNotFound.
func (s *Store) SandboxDelivery(ctx context.Context, ref string) (string, error) {
	if err := s.checkOpen(ctx); err != nil {
		return "", err
	}
	var h string
	err := s.pool.QueryRow(ctx, `SELECT tx_hash FROM sandbox_deliveries WHERE ref = $1`, ref).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("postgres: sandbox delivery %s: %w", ref, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: sandbox delivery %s: %w", ref, err)
	}
	return h, nil
}

// PutSandboxDelivery records the delivery made for ref, committed durably.
func (s *Store) PutSandboxDelivery(ctx context.Context, ref, txHash string) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO sandbox_deliveries (ref, tx_hash) VALUES ($1, $2)
		ON CONFLICT (ref) DO UPDATE SET tx_hash = excluded.tx_hash`, ref, txHash); err != nil {
		return fmt.Errorf("postgres: record sandbox delivery %s: %w", ref, err)
	}
	return nil
}

// AppendChainOp stores rec, an encoded operation, as the seq-th operation
// applied to sandbox chain chainID, committed durably before it returns:
// the chain's owner answers for an operation only once it is stored. A seq
// already stored is refused with store.ErrExists and nothing is
// written.
func (s *Store) AppendChainOp(ctx context.Context, chainID, seq uint64, rec []byte) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	if len(rec) == 0 {
		return fmt.Errorf("postgres: operation %d of chain %d: empty record", seq, chainID)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO chain_ops (chain_id, seq, record) VALUES ($1, $2, $3)`,
		int64(chainID), int64(seq), rec)
	if uniqueViolation(err) != "" {
		return fmt.Errorf("%w: operation %d of chain %d", store.ErrExists, seq, chainID)
	}
	if err != nil {
		return fmt.Errorf("postgres: append operation %d of chain %d: %w", seq, chainID, err)
	}
	return nil
}

// ChainOps calls fn with every encoded operation stored for sandbox chain
// chainID, in sequence order, stopping at the first error fn returns.
func (s *Store) ChainOps(ctx context.Context, chainID uint64, fn func(seq uint64, rec []byte) error) error {
	if err := s.checkOpen(ctx); err != nil {
		return err
	}
	after := int64(-1) << 63
	first := true
	for {
		rows, err := s.pool.Query(ctx, `SELECT seq, record FROM chain_ops WHERE chain_id = $1 AND (seq > $2 OR $3)
			ORDER BY seq LIMIT $4`, int64(chainID), after, first, trackerChunk)
		if err != nil {
			return fmt.Errorf("postgres: scan operations of chain %d: %w", chainID, err)
		}
		first = false
		n := 0
		for rows.Next() {
			var rec []byte
			if err := rows.Scan(&after, &rec); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: scan operations of chain %d: %w", chainID, err)
			}
			n++
			if err := fn(uint64(after), rec); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: scan operations of chain %d: %w", chainID, err)
		}
		if n < trackerChunk {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
