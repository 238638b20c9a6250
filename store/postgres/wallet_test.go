package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The wallet history is served by migration 18's partial indexes. The
// plan is read on a table of realistic shape and size, 20,000 lines of 4
// partners, a quarter of them swaps between 500 wallets, and
// ANALYZEd, rather than with enable_seqscan=off: that setting only shows
// that the index can be used, while this shows that the planner chooses
// it over reading the partner's history (a sequential scan, or the primary
// key in time order filtered line by line) on its own, as it must in
// production. A table of a few rows would be read whole whatever the
// indexes, so a plan from one proves nothing.
func TestWalletHistoryUsesTheWalletIndexes(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if _, err := s.pool.Exec(ctx, `INSERT INTO activity (partner_id, created_ns, id, record, from_wallet, to_wallet)
		SELECT 'ptn_' || (i % 4), i, 'q' || i, '{"v":2}',
			CASE WHEN i % 4 = 0 THEN '0x' || lpad(to_hex(i % 500), 40, '0') END,
			CASE WHEN i % 4 = 0 THEN '0x' || lpad(to_hex((i + 8) % 500), 40, '0') END
		FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE activity`); err != nil {
		t.Fatal(err)
	}
	wallet := "0x" + strings.Repeat("0", 38) + "28"
	for _, bounded := range []bool{false, true} {
		sql, args := activitySQL("ptn_0", wallet, bounded, 15000, "q15000")
		var plan string
		rows, err := s.pool.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan += line + "\n"
		}
		rows.Close()
		if !strings.Contains(plan, "activity_from_wallet") || !strings.Contains(plan, "activity_to_wallet") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("bounded %v: the wallet's history is not read through both wallet indexes:\n%s", bounded, plan)
		}
	}
	// The same query finds the wallet's lines, ptn_0's (i a multiple of
	// 4): sender of i ≡ 40 (mod 500), receiver of i ≡ 32, 40 of each.
	sql, args := activitySQL("ptn_0", wallet, false, 0, "")
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 80 {
		t.Errorf("the wallet's lines: %d, want 80", n)
	}
}

// Migration 18 gives the lines of swaps tracked before it their swap's
// wallets and transactions, as a transition writes them now, and leaves
// every other line alone.
func TestMigration18MarksTrackedSwapsLines(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, srv.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool, 17); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO activity VALUES
			('ptn_m', 1, 'q_swap', '{"v":2,"partnerId":"ptn_m","id":"q_swap","kind":"swap","status":"PENDING"}', NULL, NULL),
			('ptn_m', 2, 'q_quote', '{"v":2,"partnerId":"ptn_m","id":"q_quote","kind":"quote","status":"QUOTED"}', NULL, NULL);
		INSERT INTO swaps VALUES ('0xa1', false, '{"id":"0xa1","partnerId":"ptn_m","quoteId":"q_swap","status":"DONE",
			"fromAddress":"0xAf88d065e77c8cC2239327C5EDb3A432268e5831","toAddress":"7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV",
			"sending":{"txHash":"0xa1","chainId":1},"receiving":{"chainId":2}}')`); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, pool, 18); err != nil {
		t.Fatal(err)
	}
	var from, to *string
	var status, fromAddr, sent string
	var recvKnown bool
	if err := pool.QueryRow(ctx, `SELECT from_wallet, to_wallet, record->>'status', record->>'fromAddress', record->>'sendingTxHash',
		(record::jsonb) ? 'receivingTxHash' FROM activity WHERE id = 'q_swap'`).Scan(&from, &to, &status, &fromAddr, &sent, &recvKnown); err != nil {
		t.Fatal(err)
	}
	if from == nil || *from != "0xaf88d065e77c8cc2239327c5edb3a432268e5831" || to == nil || *to != "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV" ||
		status != "DONE" || fromAddr != "0xAf88d065e77c8cC2239327C5EDb3A432268e5831" || sent != "0xa1" || recvKnown {
		t.Errorf("the swap's line: wallets %v %v, status %s, fromAddress %s, sendingTxHash %s, receivingTxHash present %v",
			from, to, status, fromAddr, sent, recvKnown)
	}
	var untouched int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM activity WHERE id = 'q_quote' AND from_wallet IS NULL AND to_wallet IS NULL
		AND record->>'kind' = 'quote' AND record->>'fromAddress' IS NULL`).Scan(&untouched); err != nil || untouched != 1 {
		t.Errorf("the quote's line changed: %d, %v", untouched, err)
	}
}
