package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/testdeps"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
	"github.com/swapgate/swapgate/store/postgres"
)

// Real fee-wallet addresses, one per ecosystem.
var realWallets = []struct{ eco, addr string }{
	{"evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
	{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
	{"bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
	{"sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7"},
	{"near", "partner.near"},
}

type walletList struct {
	PartnerID string `json:"partnerId"`
	Wallets   []struct {
		Ecosystem string `json:"ecosystem"`
		Address   string `json:"address"`
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
	} `json:"wallets"`
}

func (ts *testServer) putWallet(key, eco, addr string) *envelope {
	ts.t.Helper()
	return ts.do(http.MethodPut, "/v1/partner/me/fee-wallets", fmt.Appendf(nil, `{"ecosystem":%q,"address":%q}`, eco, addr), withKey(key))
}

func TestFeeWalletLifecycleE2E(t *testing.T) {
	ts := startServer(t, nil)
	id, key := ts.createPartner("Acme")
	_, otherKey := ts.createPartner("Other")

	var list walletList
	ts.get("/v1/partner/me/fee-wallets", withKey(key)).decode(t, &list)
	if list.PartnerID != id || list.Wallets == nil || len(list.Wallets) != 0 {
		t.Fatalf("empty list: %+v", list)
	}
	ts.get("/v1/partner/me/fee-wallets").wantError(t, 401, "UNAUTHORIZED", "")

	for _, w := range realWallets {
		var put struct{ PartnerID, Ecosystem, Address string }
		env := ts.putWallet(key, w.eco, w.addr)
		env.decode(t, &put)
		if put.PartnerID != id || put.Ecosystem != w.eco || put.Address != w.addr {
			t.Fatalf("PUT %s: %s", w.eco, env.Data)
		}
	}
	ts.get("/v1/partner/me/fee-wallets", withKey(key)).decode(t, &list)
	if len(list.Wallets) != len(realWallets) {
		t.Fatalf("list %+v", list)
	}
	for i, w := range realWallets {
		got := list.Wallets[i]
		if got.Ecosystem != w.eco || got.Address != w.addr {
			t.Fatalf("wallet %d = %+v, want %+v", i, got, w)
		}
		if _, err := time.Parse(time.RFC3339, got.CreatedAt); err != nil || got.UpdatedAt == "" {
			t.Fatalf("wallet times %+v", got)
		}
	}
	evmCreated := list.Wallets[0].CreatedAt

	// Upsert replaces the address and keeps createdAt.
	time.Sleep(1100 * time.Millisecond) // timestamps have second precision
	const evm2 = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
	if env := ts.putWallet(key, "evm", evm2); env.Status != 200 {
		t.Fatalf("replace: %s", env.Raw)
	}
	ts.get("/v1/partner/me/fee-wallets", withKey(key)).decode(t, &list)
	if w := list.Wallets[0]; w.Address != evm2 || w.CreatedAt != evmCreated || w.UpdatedAt == evmCreated {
		t.Fatalf("after replace %+v (created %s)", w, evmCreated)
	}

	// Another partner sees none of them.
	ts.get("/v1/partner/me/fee-wallets", withKey(otherKey)).decode(t, &list)
	if len(list.Wallets) != 0 {
		t.Fatalf("other partner sees %+v", list)
	}

	refusals := []struct {
		name, contentType, body string
		status                  int
		code, param             string
	}{
		{"missing address", "application/json", `{"ecosystem":"evm"}`, 400, "INVALID_PARAMS", "address"},
		{"missing ecosystem", "application/json", `{"address":"partner.near"}`, 400, "INVALID_PARAMS", "ecosystem"},
		{"unknown ecosystem", "application/json", `{"ecosystem":"ton","address":"EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"}`, 400, "INVALID_PARAMS", "ecosystem"},
		{"bad EIP-55 checksum", "application/json", `{"ecosystem":"evm","address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"}`, 400, "INVALID_PARAMS", "address"},
		{"testnet bitcoin", "application/json", `{"ecosystem":"bitcoin","address":"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}`, 400, "INVALID_PARAMS", "address"},
		{"31-byte solana", "application/json", `{"ecosystem":"solana","address":"1111111111111111111111111111111"}`, 400, "INVALID_PARAMS", "address"},
		{"short sui", "application/json", `{"ecosystem":"sui","address":"0x2"}`, 400, "INVALID_PARAMS", "address"},
		{"uppercase near", "application/json", `{"ecosystem":"near","address":"Partner.near"}`, 400, "INVALID_PARAMS", "address"},
		{"extra field", "application/json", `{"ecosystem":"near","address":"partner.near","label":"x"}`, 400, "VALIDATION_ERROR", ""},
		{"wrong type", "application/json", `{"ecosystem":"near","address":42}`, 400, "VALIDATION_ERROR", ""},
		{"text/plain", "text/plain", `{"ecosystem":"near","address":"partner.near"}`, 400, "INVALID_BODY", ""},
		{"malformed JSON", "application/json", `{"ecosystem":"near",`, 400, "INVALID_BODY", ""},
		{"empty body", "application/json", ``, 400, "INVALID_BODY", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			env := ts.do(http.MethodPut, "/v1/partner/me/fee-wallets", []byte(tc.body), withKey(key), withHeader("Content-Type", tc.contentType))
			env.wantError(t, tc.status, tc.code, tc.param)
			if tc.code == "VALIDATION_ERROR" && env.Error.Details["field"] == nil {
				t.Fatalf("VALIDATION_ERROR without details.field: %s", env.Raw)
			}
			if tc.param == "address" && env.Error.Details["ecosystem"] == nil {
				t.Fatalf("address error without details.ecosystem: %s", env.Raw)
			}
		})
	}
	// Nothing refused was stored.
	ts.get("/v1/partner/me/fee-wallets", withKey(key)).decode(t, &list)
	if len(list.Wallets) != 5 || list.Wallets[4].Address != "partner.near" {
		t.Fatalf("after refusals %+v", list)
	}

	var del struct {
		PartnerID string `json:"partnerId"`
		Ecosystem string `json:"ecosystem"`
		Deleted   bool   `json:"deleted"`
	}
	ts.do(http.MethodDelete, "/v1/partner/me/fee-wallets/near", nil, withKey(key)).decode(t, &del)
	if del.PartnerID != id || del.Ecosystem != "near" || !del.Deleted {
		t.Fatalf("delete: %+v", del)
	}
	ts.do(http.MethodDelete, "/v1/partner/me/fee-wallets/near", nil, withKey(key)).wantError(t, 404, "INVALID_PARAMS", "ecosystem")
	ts.do(http.MethodDelete, "/v1/partner/me/fee-wallets/evm", nil, withKey(otherKey)).wantError(t, 404, "INVALID_PARAMS", "ecosystem")
	ts.do(http.MethodDelete, "/v1/partner/me/fee-wallets/ton", nil, withKey(key)).wantError(t, 400, "INVALID_PARAMS", "ecosystem")
	ts.get("/v1/partner/me/fee-wallets", withKey(key)).decode(t, &list)
	if len(list.Wallets) != 4 {
		t.Fatalf("after delete %+v", list)
	}
}

// seedStore opens dir (no server running), lets fn write to it and closes
// it, so tests can plant ledger rows and activity the quote path would
// write. It is Pebble's: in the suite's PostgreSQL pass a test that calls
// it cannot run (its PostgreSQL counterparts are store/postgres's
// tests), and make test leaves such tests out of that pass by name
// (PG_E2E_PEBBLE in the Makefile, held to the callers by
// internal/testrun's TestPebbleOnlyTestsLeftOut); one it did not leave
// out fails under CI=true.
func seedStore(t *testing.T, dir string, fn func(*pebblestore.Store)) {
	t.Helper()
	if suitePostgres != nil {
		testdeps.Unmet(t, "reads or writes the Pebble store directly: name it in the Makefile's PG_E2E_PEBBLE")
	}
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fn(st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// storeActivities reads a partner's activity from the store of a stopped
// test server's data directory, whichever backend the suite runs on: the
// Pebble store under dir, or the server's database in the PostgreSQL pass.
func storeActivities(t *testing.T, dir, partnerID string) []*account.Activity {
	t.Helper()
	ctx := context.Background()
	var (
		acts []*account.Activity
		err  error
	)
	if dsn, ok := suiteStores.Load(dir); ok {
		st, oerr := postgres.Open(ctx, dsn.(string), postgres.Options{DataDir: dir})
		if oerr != nil {
			t.Fatal(oerr)
		}
		defer st.Close()
		acts, _, err = st.Activities(ctx, partnerID, account.ActivityQuery{})
	} else {
		st, oerr := pebblestore.Open(dir, pebblestore.Options{})
		if oerr != nil {
			t.Fatal(oerr)
		}
		defer st.Close()
		acts, _, err = st.Activities(ctx, partnerID, account.ActivityQuery{})
	}
	if err != nil {
		t.Fatalf("activities of %s: %v", partnerID, err)
	}
	return acts
}

// createPartnerOffline provisions a partner through the CLI on a directory
// no server holds.
func createPartnerOffline(t *testing.T, dir, name string) (id, key string) {
	t.Helper()
	var res struct {
		ID     string `json:"id"`
		APIKey string `json:"apiKey"`
	}
	cli(t, &res, "partner", "create", "--data", dir, "--name", name, "--email", strings.ToLower(name)+"@example.com")
	return res.ID, res.APIKey
}

type earningsView struct {
	PartnerID string `json:"partnerId"`
	Pending   []struct {
		Ecosystem string `json:"ecosystem"`
		TotalUSD  string `json:"totalUsd"`
		RowCount  int    `json:"rowCount"`
	} `json:"pending"`
	Settled []struct {
		Ecosystem string `json:"ecosystem"`
		ChainID   uint64 `json:"chainId"`
		TxHash    string `json:"txHash"`
		TotalUSD  string `json:"totalUsd"`
		RowCount  int    `json:"rowCount"`
	} `json:"settled"`
	Notes string `json:"notes"`
}

// summary renders an earnings view compactly for comparison.
func (e earningsView) summary() string {
	var b strings.Builder
	b.WriteString("pending:")
	for _, g := range e.Pending {
		fmt.Fprintf(&b, " %s=%s/%d", g.Ecosystem, g.TotalUSD, g.RowCount)
	}
	b.WriteString(" settled:")
	for _, g := range e.Settled {
		fmt.Fprintf(&b, " %s=%s/%d", g.Ecosystem, g.TotalUSD, g.RowCount)
		if g.TxHash != "" {
			fmt.Fprintf(&b, "@%d:%s", g.ChainID, g.TxHash)
		}
	}
	return b.String()
}

type settleOut struct {
	ID      string `json:"id"`
	DryRun  bool   `json:"dryRun"`
	Payouts []struct {
		PartnerID     string `json:"partnerId"`
		Wallet        string `json:"wallet"`
		RowCount      int    `json:"rowCount"`
		TotalMicroUSD int64  `json:"totalMicroUsd"`
	} `json:"payouts"`
	Skipped []struct {
		PartnerID string `json:"partnerId"`
		RowCount  int    `json:"rowCount"`
	} `json:"skipped"`
	Transfers []transferOut `json:"transfers"`
	Failed    []transferOut `json:"failed"`
}

// transferOut is a payout as the settle command prints it.
type transferOut struct {
	ID        string `json:"id"`
	PartnerID string `json:"partnerId"`
	ChainID   uint64 `json:"chainId"`
	Token     string `json:"token"`
	Wallet    string `json:"wallet"`
	Amount    string `json:"amount"`
	RowCount  int    `json:"rowCount"`
	State     string `json:"state"`
	TxHash    string `json:"txHash"`
	Reason    string `json:"reason"`
}

func TestEarningsAndSettleE2E(t *testing.T) {
	dir := t.TempDir()
	idA, keyA := createPartnerOffline(t, dir, "Acme")
	idB, keyB := createPartnerOffline(t, dir, "Beta")
	t0 := time.Now().Add(-time.Hour).UTC()
	seedStore(t, dir, func(st *pebblestore.Store) {
		row := func(pid, q, eco string, fee int64, i int) store.EncodedQuote {
			rec, err := store.EncodeQuote(&account.Activity{PartnerID: pid, ID: q, Kind: account.ActivityQuote,
				Status: account.ActivityQuoted, Provider: "aggregator", FeeMicroUSD: fee, VolumeMicroUSD: fee * 333,
				CreatedAt: t0.Add(time.Duration(i) * time.Second),
				Earning:   &account.Earning{Ecosystem: eco, FeeAmount: "1000", State: account.EarningPending}})
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
		if _, err := st.RecordQuotes(context.Background(), []store.EncodedQuote{
			row(idA, "qa1", "evm", 1_200_000, 1), row(idA, "qa2", "evm", 2_100_000, 2),
			row(idA, "qa3", "solana", 5, 3), row(idB, "qb1", "evm", 12_345_678, 4),
		}, store.Synced); err != nil {
			t.Fatal(err)
		}
	})
	ts := startServer(t, func(c *app.Config) { c.DataDir = dir })

	earnings := func(key string) earningsView {
		var e earningsView
		ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &e)
		if e.Pending == nil || e.Settled == nil || !strings.Contains(e.Notes, "fee wallet") {
			t.Fatalf("earnings shape %+v", e)
		}
		return e
	}
	if e := earnings(keyA); e.PartnerID != idA || e.summary() != "pending: evm=3.30/2 solana=0.000005/1 settled:" {
		t.Fatalf("A before settle: %s", e.summary())
	}
	if e := earnings(keyB); e.summary() != "pending: evm=12.345678/1 settled:" {
		t.Fatalf("B before settle: %s", e.summary())
	}
	ts.get("/v1/partner/me/earnings").wantError(t, 401, "UNAUTHORIZED", "")

	// No wallet yet: a run (through the running server's admin listener)
	// skips everyone.
	var out settleOut
	cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm")
	if out.ID != "" || len(out.Payouts) != 0 || len(out.Skipped) != 2 {
		t.Fatalf("settle without wallets: %+v", out)
	}
	if env := ts.putWallet(keyA, "evm", realWallets[0].addr); env.Status != 200 {
		t.Fatalf("put wallet: %s", env.Raw)
	}
	cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm", "--dry-run")
	if !out.DryRun || out.ID != "" || len(out.Payouts) != 1 || out.Payouts[0].TotalMicroUSD != 3_300_000 {
		t.Fatalf("dry run: %+v", out)
	}
	if e := earnings(keyA); e.summary() != "pending: evm=3.30/2 solana=0.000005/1 settled:" {
		t.Fatalf("dry run changed earnings: %s", e.summary())
	}
	cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm")
	if out.ID == "" || len(out.Payouts) != 1 || out.Payouts[0].PartnerID != idA || out.Payouts[0].Wallet != realWallets[0].addr ||
		out.Payouts[0].RowCount != 2 || len(out.Skipped) != 1 || out.Skipped[0].PartnerID != idB {
		t.Fatalf("settle: %+v", out)
	}
	// These earnings name no chain the manager signs on: one manual
	// transfer, its earnings settled only once it is recorded.
	if len(out.Transfers) != 1 || out.Transfers[0].State != "manual" || out.Transfers[0].RowCount != 2 {
		t.Fatalf("settle transfers: %+v", out.Transfers)
	}
	if e := earnings(keyA); e.summary() != "pending: evm=3.30/2 solana=0.000005/1 settled:" {
		t.Fatalf("A before the record: %s", e.summary())
	}
	var stderr strings.Builder
	if code := run([]string{"settle", "record", "--data", dir, "--payout", out.Transfers[0].ID, "--tx", "0x12"}, &strings.Builder{}, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--tx") {
		t.Fatalf("record with a bad hash: exit %d %s", code, stderr.String())
	}
	hash := "0x" + strings.Repeat("5a", 32)
	var rec transferOut
	cli(t, &rec, "settle", "record", "--data", dir, "--payout", out.Transfers[0].ID, "--tx", hash)
	if rec.State != "settled" || rec.TxHash != hash {
		t.Fatalf("record: %+v", rec)
	}
	if e := earnings(keyA); e.summary() != "pending: solana=0.000005/1 settled: evm=3.30/2@0:"+hash {
		t.Fatalf("A after settle: %s", e.summary())
	}
	if e := earnings(keyB); e.summary() != "pending: evm=12.345678/1 settled:" {
		t.Fatalf("B after settle: %s", e.summary())
	}
	// Safe to run twice.
	var again settleOut
	cli(t, &again, "settle", "--data", dir, "--ecosystem", "evm")
	if again.ID != "" || len(again.Payouts) != 0 || len(again.Transfers) != 0 {
		t.Fatalf("second run paid again: %+v", again)
	}

	// With the server stopped the command opens the store itself.
	if env := ts.putWallet(keyA, "solana", realWallets[1].addr); env.Status != 200 {
		t.Fatalf("put wallet: %s", env.Raw)
	}
	ts.stop()
	cli(t, &out, "settle", "--data", dir, "--ecosystem", "solana")
	if out.ID == "" || len(out.Payouts) != 1 || out.Payouts[0].Wallet != realWallets[1].addr || len(out.Transfers) != 1 ||
		out.Transfers[0].State != "manual" || out.Transfers[0].Wallet != realWallets[1].addr {
		t.Fatalf("offline settle: %+v", out)
	}
	sig := "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	cli(t, &rec, "settle", "record", "--data", dir, "--payout", out.Transfers[0].ID, "--tx", sig)
	if rec.State != "settled" {
		t.Fatalf("offline record: %+v", rec)
	}
	if code := run([]string{"settle", "--data", dir, "--ecosystem", "ton"}, &strings.Builder{}, &stderr); code != 2 {
		t.Fatalf("unknown ecosystem: exit %d %s", code, stderr.String())
	}
	ts = startServer(t, func(c *app.Config) { c.DataDir = dir })
	if e := earnings(keyA); e.summary() != "pending: settled: evm=3.30/2@0:"+hash+" solana=0.000005/1@0:"+sig {
		t.Fatalf("A after both: %s", e.summary())
	}
}

func TestStatsAndTransactionsE2E(t *testing.T) {
	dir := t.TempDir()
	idA, keyA := createPartnerOffline(t, dir, "Acme")
	idB, keyB := createPartnerOffline(t, dir, "Beta")
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	recent := time.Now().Add(-time.Hour).UTC()
	seedStore(t, dir, func(st *pebblestore.Store) {
		b := st.DB().NewBatch()
		defer b.Close()
		put := func(a *account.Activity) {
			if err := st.PutActivity(b, a); err != nil {
				t.Fatal(err)
			}
		}
		// A: 10 records, 8 hours apart from Mar 1 (Mar 1: 0-2, Mar 2: 3-5,
		// Mar 3: 6-8, Mar 4: 9), plus one an hour ago.
		for i := range 10 {
			put(&account.Activity{
				PartnerID: idA, ID: fmt.Sprintf("qa%02d", i), Kind: account.ActivityQuote,
				Status: []string{"QUOTED", "DONE"}[i%2], Provider: []string{"aggregator", "intents"}[i%2], Tool: "sandbox",
				FromChain: 1, ToChain: []uint64{8453, 1151111081099710}[i%2], FromToken: "native", ToToken: "native",
				FromAmount: "1000000000000000000", ToAmount: "999", FeeMicroUSD: int64(i%3) * 1_500_000,
				VolumeMicroUSD: 2_000_000_000, CreatedAt: day.Add(time.Duration(i) * 8 * time.Hour),
			})
		}
		put(&account.Activity{PartnerID: idA, ID: "qrecent", Kind: account.ActivitySwap, Status: "PENDING",
			Provider: "aggregator", Tool: "sandbox", FromChain: 10, ToChain: 10, FeeMicroUSD: 10_000, VolumeMicroUSD: 1_000_000,
			CreatedAt: recent})
		put(&account.Activity{PartnerID: idB, ID: "qb", Kind: account.ActivityQuote, Status: "DONE",
			Provider: "aggregator", FromChain: 1, ToChain: 8453, FeeMicroUSD: 99_000_000, VolumeMicroUSD: 99_000_000, CreatedAt: day})
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
	})
	ts := startServer(t, func(c *app.Config) { c.DataDir = dir })

	type figures struct {
		Quotes    int64  `json:"quotes"`
		VolumeUSD string `json:"volumeUsd"`
		FeesUSD   string `json:"feesUsd"`
	}
	var stats struct {
		From   string  `json:"from"`
		To     string  `json:"to"`
		Totals figures `json:"totals"`
		ByDay  []struct {
			Date string `json:"date"`
			figures
		} `json:"byDay"`
		ByProvider []struct {
			Provider string `json:"provider"`
			figures
		} `json:"byProvider"`
	}
	// Mar 2 through Mar 3 inclusive: records 3..8.
	ts.get("/v1/partner/stats?from=2026-03-02&to=2026-03-03", withKey(keyA)).decode(t, &stats)
	// fees (i%3)*1.5 for i=3..8: 0,1.5,3,0,1.5,3 = 9
	if stats.Totals != (figures{6, "12000.00", "9.00"}) || stats.From != "2026-03-02T00:00:00Z" || stats.To != "2026-03-04T00:00:00Z" {
		t.Fatalf("stats totals %+v from %s to %s", stats.Totals, stats.From, stats.To)
	}
	if len(stats.ByDay) != 2 || stats.ByDay[0].Date != "2026-03-02" || stats.ByDay[0].figures != (figures{3, "6000.00", "4.50"}) ||
		stats.ByDay[1].Date != "2026-03-03" || stats.ByDay[1].figures != (figures{3, "6000.00", "4.50"}) {
		t.Fatalf("byDay %+v", stats.ByDay)
	}
	if len(stats.ByProvider) != 2 || stats.ByProvider[0].Provider != "aggregator" || stats.ByProvider[0].Quotes != 3 ||
		stats.ByProvider[1].Provider != "intents" || stats.ByProvider[1].Quotes != 3 {
		t.Fatalf("byProvider %+v", stats.ByProvider)
	}
	// RFC 3339 bounds: [Mar 1 08:00, Mar 1 16:00) holds record 1 only.
	ts.get("/v1/partner/stats?from=2026-03-01T08:00:00Z&to=2026-03-01T16:00:00Z", withKey(keyA)).decode(t, &stats)
	if stats.Totals != (figures{1, "2000.00", "1.50"}) {
		t.Fatalf("instant range %+v", stats.Totals)
	}
	// Default range: the last 30 days hold only the recent record.
	ts.get("/v1/partner/stats", withKey(keyA)).decode(t, &stats)
	if stats.Totals != (figures{1, "1.00", "0.01"}) {
		t.Fatalf("default range %+v", stats.Totals)
	}
	// B sees only its own.
	ts.get("/v1/partner/stats?from=2026-01-01", withKey(keyB)).decode(t, &stats)
	if stats.Totals != (figures{1, "99.00", "99.00"}) {
		t.Fatalf("B stats %+v", stats.Totals)
	}
	for _, tc := range []struct{ query, param string }{
		{"from=yesterday", "from"}, {"to=2026-13-01", "to"}, {"from=2026-03-05&to=2026-03-01", "from"},
	} {
		ts.get("/v1/partner/stats?"+tc.query, withKey(keyA)).wantError(t, 400, "INVALID_PARAMS", tc.param)
	}
	ts.get("/v1/partner/stats").wantError(t, 401, "UNAUTHORIZED", "")

	type txPage struct {
		Transactions []struct {
			ID        string `json:"id"`
			Kind      string `json:"kind"`
			Status    string `json:"status"`
			Provider  string `json:"provider"`
			Tool      string `json:"tool"`
			FromChain uint64 `json:"fromChain"`
			ToChain   uint64 `json:"toChain"`
			FromToken string `json:"fromToken"`
			ToToken   string `json:"toToken"`
			FromAmt   string `json:"fromAmount"`
			ToAmount  string `json:"toAmount"`
			FeeUSD    string `json:"feeUsd"`
			CreatedAt string `json:"createdAt"`
		} `json:"transactions"`
		NextCursor *string `json:"nextCursor"`
	}
	// all follows the cursor through every page and returns the ids.
	all := func(key, query string) []string {
		var ids []string
		cursor := ""
		for range 20 {
			q := query
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			var p txPage
			ts.get("/v1/partner/transactions?"+q, withKey(key)).decode(t, &p)
			for _, tx := range p.Transactions {
				ids = append(ids, tx.ID)
			}
			if p.NextCursor == nil {
				return ids
			}
			cursor = *p.NextCursor
		}
		t.Fatal("cursor never ends")
		return nil
	}
	var first txPage
	ts.get("/v1/partner/transactions?limit=2", withKey(keyA)).decode(t, &first)
	if len(first.Transactions) != 2 || first.NextCursor == nil {
		t.Fatalf("first page %+v", first)
	}
	if tx := first.Transactions[0]; tx.ID != "qrecent" || tx.Kind != "swap" || tx.FeeUSD != "0.01" || tx.FromChain != 10 {
		t.Fatalf("newest first: %+v", tx)
	}
	if tx := first.Transactions[1]; tx.ID != "qa09" || tx.FromAmt != "1000000000000000000" || tx.CreatedAt != "2026-03-04T00:00:00Z" || tx.FeeUSD != "0.00" {
		t.Fatalf("second: %+v", tx)
	}
	want := func(ids ...string) string { return strings.Join(ids, ",") }
	for _, tc := range []struct{ query, want string }{
		{"limit=3", want("qrecent", "qa09", "qa08", "qa07", "qa06", "qa05", "qa04", "qa03", "qa02", "qa01", "qa00")},
		{"limit=4&status=DONE", want("qa09", "qa07", "qa05", "qa03", "qa01")},
		{"limit=2&chain=1151111081099710", want("qa09", "qa07", "qa05", "qa03", "qa01")},
		{"chain=10", want("qrecent")},
		{"limit=2&minFeeUsd=0", want("qrecent", "qa08", "qa07", "qa05", "qa04", "qa02", "qa01")},
		{"minFeeUsd=3", want("qa08", "qa05", "qa02")},
		{"minFeeUsd=1.5&status=QUOTED", want("qa08", "qa04", "qa02")},
	} {
		if got := strings.Join(all(keyA, tc.query), ","); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.query, got, tc.want)
		}
	}
	if got := strings.Join(all(keyB, "limit=500"), ","); got != "qb" {
		t.Fatalf("B transactions %s", got)
	}
	for _, tc := range []struct{ query, param string }{
		{"limit=0", "limit"}, {"limit=abc", "limit"}, {"limit=501", "limit"}, {"chain=base", "chain"},
		{"minFeeUsd=-1", "minFeeUsd"}, {"minFeeUsd=lots", "minFeeUsd"}, {"cursor=%21%21", "cursor"},
		{"cursor=" + strings.Repeat("A", 257), "cursor"}, {"status=" + strings.Repeat("A", 65), "status"},
		{"status=DONE%00", "status"}, {"status=a%0Ab", "status"}, {"status=%FF", "status"},
	} {
		ts.get("/v1/partner/transactions?"+tc.query, withKey(keyA)).wantError(t, 400, "INVALID_PARAMS", tc.param)
	}
}
