package postgres

import (
	"context"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"
)

// steps says, for each schema version, the tables that exist once it is
// applied, and seeds a row that the later steps must keep. A new migration
// adds its line here.
var steps = []struct {
	tables []string
	// seed writes rows in the schema of this version; check reads them
	// back after every later step.
	seed, check string
}{
	1: {tables: []string{"fee_wallets", "meta", "partners", "schema_version"},
		seed: `INSERT INTO partners VALUES ('ptn_seed', 'n', 'e', 1, 2, 3, 4, '{evm}', decode(repeat('ab', 32), 'hex'), false, true, 1, 2);
		       INSERT INTO fee_wallets VALUES ('ptn_seed', 'evm', '0xabc', 1, 2)`,
		check: `SELECT count(*) FROM partners p JOIN fee_wallets w ON w.partner_id = p.id WHERE p.id = 'ptn_seed'`},
	2: {tables: []string{"fee_wallets", "idempotency", "meta", "partners", "schema_version"},
		seed:  `INSERT INTO idempotency VALUES ('partner.ptn_seed', 'k', decode(repeat('01', 32), 'hex'), 201, 'body', 'req', 1, 2)`,
		check: `SELECT count(*) FROM idempotency WHERE scope = 'partner.ptn_seed'`},
	3: {tables: []string{"fee_wallets", "idempotency", "meta", "partners", "schema_version", "webhooks"},
		seed:  `INSERT INTO webhooks VALUES ('wh_seed', 'ptn_seed', 'https://example.com', '{swap.completed}', true, 'sealed', 1, 1)`,
		check: `SELECT count(*) FROM webhooks WHERE id = 'wh_seed'`},
	4: {tables: []string{"activity", "fee_wallets", "idempotency", "meta", "partners", "schema_version", "webhooks"},
		seed:  `INSERT INTO activity VALUES ('ptn_seed', 1, 'qt_seed', '{"v":2,"partnerId":"ptn_seed","id":"qt_seed"}', 'evm', nextval('ledger_seq'))`,
		check: `SELECT count(*) FROM activity WHERE id = 'qt_seed' AND pending_ecosystem = 'evm'`},
	5: {tables: []string{"activity", "deliveries", "fee_wallets", "idempotency", "meta", "outbox", "partners", "schema_version", "webhooks"},
		seed: `INSERT INTO outbox VALUES ('dl_seed', 1, 'wh_seed', '{"deliveryId":"dl_seed"}', NULL, NULL);
		       INSERT INTO deliveries VALUES ('dl_seed', 'wh_seed', 1, '{"id":"dl_seed"}')`,
		check: `SELECT count(*) FROM outbox JOIN deliveries USING (delivery_id) WHERE delivery_id = 'dl_seed'`},
	6: {tables: []string{"activity", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "inbound_deposits", "meta",
		"onramp_orders", "outbox", "partners", "schema_version", "swaps", "webhooks"},
		seed: `INSERT INTO swaps VALUES ('0xseed', true, '{"id":"0xseed"}');
		       INSERT INTO onramp_orders VALUES ('ord_seed', true, '{}');
		       INSERT INTO inbound_deposits VALUES ('0xseed', false, '{}')`,
		check: `SELECT count(*) FROM swaps JOIN inbound_deposits ON tx_hash = id, onramp_orders WHERE id = '0xseed' AND uid = 'ord_seed'`},
	7: {tables: []string{"activity", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "inbound_deposits", "meta",
		"onramp_orders", "outbox", "partners", "schema_version", "settlements", "swaps", "webhooks"},
		seed:  `INSERT INTO settlements VALUES ('evm', 'stl_seed', '{"id":"stl_seed"}')`,
		check: `SELECT count(*) FROM settlements WHERE id = 'stl_seed'`},
	8: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "inbound_deposits", "meta",
		"onramp_orders", "outbox", "partners", "quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps", "webhooks"},
		seed: `INSERT INTO quote_refs VALUES (decode(repeat('cd', 32), 'hex'), 'qt_seed');
		       INSERT INTO sandbox_deliveries VALUES ('ref_seed', '0x01');
		       INSERT INTO chain_ops VALUES (1, 1, 'op')`,
		check: `SELECT count(*) FROM quote_refs, sandbox_deliveries, chain_ops WHERE quote_id = 'qt_seed' AND sandbox_deliveries.ref = 'ref_seed' AND seq = 1`},
	9: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "inbound_deposits", "meta",
		"onramp_orders", "outbox", "partners", "quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps", "tickets", "webhooks"},
		seed:  `INSERT INTO tickets VALUES ('qt_seed', 1, '0xdeposit', '', '{}')`,
		check: `SELECT count(*) FROM tickets WHERE id = 'qt_seed' AND deposit_address = '0xdeposit'`},
	10: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partners", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "webhooks"},
		seed:  `INSERT INTO idempotency_claims VALUES ('partner.ptn_seed', 'k', 'node', now())`,
		check: `SELECT count(*) FROM idempotency_claims WHERE scope = 'partner.ptn_seed'`},
	11: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partner_usage", "partners", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "webhooks"},
		seed:  `INSERT INTO partner_usage VALUES ('ptn_seed', 1764165600, 'heavy', 3, 1)`,
		check: `SELECT count(*) FROM partner_usage WHERE partner_id = 'ptn_seed' AND admitted = 3`},
	12: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partner_usage", "partners", "portal_codes", "portal_key_rotations", "portal_sessions",
		"quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps", "tickets", "webhooks"},
		seed: `INSERT INTO portal_codes VALUES ('a@b.co', 'ptn_seed', decode(repeat('ef', 32), 'hex'), 1, 2, 0, false);
		       INSERT INTO portal_sessions VALUES (repeat('a', 64), 'ptn_seed', 'csrf', 'fp', 1, 2);
		       INSERT INTO portal_key_rotations VALUES ('ptn_seed', 3)`,
		check: `SELECT count(*) FROM portal_codes, portal_sessions, portal_key_rotations WHERE email = 'a@b.co' AND portal_sessions.partner_id = 'ptn_seed' AND rotated_ns = 3`},
	13: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners", "portal_codes",
		"portal_key_rotations", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps", "tickets", "webhooks"},
		seed: `INSERT INTO partner_epochs VALUES ('ptn_seed', 3);
		       INSERT INTO partner_grants VALUES ('ptn_seed', 'req_seed', 'heavy', 'node', 1, 50)`,
		check: `SELECT count(*) FROM partner_epochs JOIN partner_grants USING (partner_id) WHERE partner_id = 'ptn_seed' AND epoch = 3`},
	14: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners", "portal_codes",
		"portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps",
		"tickets", "webhooks"},
		seed:  `INSERT INTO portal_limits VALUES (repeat('c', 64), 5, 2)`,
		check: `SELECT count(*) FROM portal_limits WHERE start_ns = 5 AND n = 2`},
	15: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners", "portal_codes",
		"portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version", "settlements", "swaps",
		"tickets", "webhooks"},
		// The grant seeded at version 13 reads as a grant that gave nothing back.
		seed: `INSERT INTO partner_grants VALUES ('ptn_back', 'req_back', 'heavy', 'node', 1, 0, 20)`,
		check: `SELECT count(*) FROM partner_grants a JOIN partner_grants b ON a.partner_id = 'ptn_seed' AND a.returned = 0
		        AND b.partner_id = 'ptn_back' AND b.granted = 0 AND b.returned = 20`},
	16: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "operator_keys", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners",
		"portal_codes", "portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "tx_intents", "tx_nonces", "webhooks"},
		seed: `INSERT INTO tx_intents VALUES ('tx_seed', 'payout/seed', 'payout', 42161, 'queued', true, 1, '{"id":"tx_seed"}');
		       INSERT INTO tx_nonces VALUES (42161, '0xseed', 7);
		       INSERT INTO operator_keys VALUES ('evm', '\x01')`,
		check: `SELECT count(*) FROM tx_intents, tx_nonces, operator_keys WHERE id = 'tx_seed' AND next = 7 AND name = 'evm'`},
	17: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "operator_keys", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners",
		"payouts", "portal_codes", "portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "tx_intents", "tx_nonces", "webhooks"},
		seed:  `INSERT INTO payouts VALUES ('pay_seed', 'evm', 'planned', 1, '{"v":1,"id":"pay_seed"}')`,
		check: `SELECT count(*) FROM payouts WHERE id = 'pay_seed' AND state = 'planned'`},
	18: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "operator_keys", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners",
		"payouts", "portal_codes", "portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "tx_intents", "tx_nonces", "webhooks"},
		seed:  `INSERT INTO activity VALUES ('ptn_seed', 2, 'qt_wallet', '{"v":2,"partnerId":"ptn_seed","id":"qt_wallet"}', NULL, NULL, '0xseed', 'seedwallet')`,
		check: `SELECT count(*) FROM activity WHERE partner_id = 'ptn_seed' AND from_wallet = '0xseed' AND to_wallet = 'seedwallet'`},
	19: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "operator_keys", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners",
		"payouts", "portal_codes", "portal_key_rotations", "portal_limits", "portal_sessions", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "tx_intents", "tx_nonces", "webhooks"},
		seed:  `UPDATE partners SET allowed_origins = '{https://app.example}' WHERE id = 'ptn_seed'`,
		check: `SELECT count(*) FROM partners WHERE id = 'ptn_seed' AND allowed_origins = '{https://app.example}'`},
	20: {tables: []string{"activity", "chain_ops", "deliveries", "deposit_swaps", "fee_wallets", "idempotency", "idempotency_claims",
		"inbound_deposits", "meta", "onramp_orders", "operator_keys", "outbox", "partner_epochs", "partner_grants", "partner_usage", "partners",
		"payouts", "portal_codes", "portal_key_rotations", "portal_limits", "portal_sessions", "quote_calls", "quote_refs", "sandbox_deliveries", "schema_version",
		"settlements", "swaps", "tickets", "tx_intents", "tx_nonces", "webhooks"},
		seed: `INSERT INTO swaps VALUES ('0xquoted', false, '{"id":"0xquoted","quoteId":"qt_seed"}');
		       INSERT INTO quote_calls VALUES (decode(repeat('cd', 32), 'hex'), 'qt_seed', 1)`,
		check: `SELECT count(*) FROM swaps JOIN quote_calls ON quote_id = record->>'quoteId' WHERE quote_id = 'qt_seed'`},
}

// TestMigrationsStepByStep applies each migration to a database at the
// version before it, holding data written at every earlier version, and
// checks the step's tables, its schema_version row, and that the data
// written before it is still there.
func TestMigrationsStepByStep(t *testing.T) {
	if len(steps) != len(migrations)+1 {
		t.Fatalf("steps describes %d versions, there are %d migrations", len(steps)-1, len(migrations))
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, srv.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for v := 1; v <= len(migrations); v++ {
		if err := migrate(ctx, pool, v); err != nil {
			t.Fatalf("migrate %d → %d: %v", v-1, v, err)
		}
		if got, err := currentVersion(ctx, pool); err != nil || got != v {
			t.Fatalf("after step %d the version is %d (%v)", v, got, err)
		}
		var tables []string
		rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, n)
		}
		if !slices.Equal(tables, steps[v].tables) {
			t.Errorf("tables at version %d = %v, want %v", v, tables, steps[v].tables)
		}
		if _, err := pool.Exec(ctx, steps[v].seed); err != nil {
			t.Fatalf("seed version %d: %v", v, err)
		}
		for w := 1; w <= v; w++ {
			var n int
			if err := pool.QueryRow(ctx, steps[w].check).Scan(&n); err != nil || n != 1 {
				t.Errorf("at version %d, the rows seeded at %d: %d (%v)", v, w, n, err)
			}
		}
		// Applying the same version again changes nothing.
		if err := migrate(ctx, pool, v); err != nil {
			t.Fatalf("migrate to %d again: %v", v, err)
		}
	}
}

func TestLoadMigrationsRefusesGaps(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("SELECT 1")}
	cases := []struct {
		name  string
		files []string
		ok    bool
	}{
		{"in order", []string{"0001_a.sql", "0002_b.sql"}, true},
		{"a gap", []string{"0001_a.sql", "0003_c.sql"}, false},
		{"a repeat", []string{"0001_a.sql", "0001_b.sql"}, false},
		{"not from 1", []string{"0002_b.sql"}, false},
		{"no number", []string{"initial.sql"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range c.files {
				fsys["migrations/"+f] = sql
			}
			ms, err := loadMigrations(fsys)
			if (err == nil) != c.ok {
				t.Fatalf("loadMigrations(%v) = %v, %v", c.files, ms, err)
			}
		})
	}
}
