package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/store"
)

// A schema 1 directory (ledger rows as records of their own) opens as
// schema 2 with every row inside its quote's activity record: states,
// settlements and the pending index survive, and the old keys are gone.
func TestMigrateSchema1LedgerRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	settledAt := at.Add(2 * time.Hour)

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Write what a schema 1 build left: two pending rows (one with its
	// activity record, one without), one settled row, their indexes.
	b := s.DB().NewBatch()
	legacy := func(r legacyLedgerRecord, seq uint64) {
		r.V = 1
		val, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		suffix := string(binary.BigEndian.AppendUint64([]byte(r.PartnerID+"/"), uint64(r.CreatedAt.UnixNano()))) + r.QuoteID
		must(t, b.Set([]byte(legacyPrefixLedgerRow+suffix), val, nil))
		must(t, b.Set([]byte(legacyPrefixLedgerQuote+r.QuoteID), []byte(r.PartnerID), nil))
		if r.State == account.EarningPending {
			ek := binary.BigEndian.AppendUint64(LedgerEcosystemPrefix(r.Ecosystem), seq)
			must(t, b.Set(append(ek, r.QuoteID...), []byte(legacyPrefixLedgerRow+suffix), nil))
		}
	}
	legacy(legacyLedgerRecord{PartnerID: "ptn_a", QuoteID: "qt_1", Ecosystem: "evm", Provider: "aggregator", Tool: "sbx-arcbridge",
		FromChain: 42161, ToChain: 8453, FeeToken: "0xfee", FeeAmount: "2500", FeeMicroUSD: 2500, VolumeMicroUSD: 1_000_000,
		CreatedAt: at, State: account.EarningPending}, 1)
	legacy(legacyLedgerRecord{PartnerID: "ptn_a", QuoteID: "qt_2", Ecosystem: "evm", FeeMicroUSD: 700, CreatedAt: at.Add(time.Second),
		State: account.EarningPending}, 2)
	legacy(legacyLedgerRecord{PartnerID: "ptn_a", QuoteID: "qt_0", Ecosystem: "solana", FeeMicroUSD: 9, CreatedAt: at.Add(-time.Hour),
		State: account.EarningSettled, SettledBatch: "stl_x", SettledTo: "So1", SettledAt: settledAt}, 0)
	must(t, s.PutActivity(b, &account.Activity{PartnerID: "ptn_a", ID: "qt_1", Kind: account.ActivityQuote, Status: "DONE", Provider: "aggregator",
		FromChain: 42161, ToChain: 8453, FromAmount: "1000", ToAmount: "990", CreatedAt: at}))
	must(t, b.Set(keySchema, []byte{0, 0, 0, 1}, nil))
	must(t, b.Commit(pebble.Sync))
	must(t, s.Close())

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.get(keySchema); err != nil || binary.BigEndian.Uint32(v) != SchemaVersion {
		t.Fatalf("schema after open %v %v", v, err)
	}
	rows := map[string]*account.Activity{}
	for _, r := range rowsOf(t, s, "ptn_a") {
		rows[r.ID] = r
	}
	if len(rows) != 3 || rows["qt_1"].Earning.State != account.EarningPending || rows["qt_1"].Earning.FeeAmount != "2500" || rows["qt_1"].FeeMicroUSD != 2500 ||
		rows["qt_0"].Earning.State != account.EarningSettled || !rows["qt_0"].Earning.SettledAt.Equal(settledAt) || rows["qt_2"].Earning.Ecosystem != "evm" {
		t.Fatalf("rows after migration: %+v %+v %+v", rows["qt_0"], rows["qt_1"], rows["qt_2"])
	}
	acts, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
	if err != nil || len(acts) != 3 || acts[1].ID != "qt_1" || acts[1].Status != "DONE" || acts[1].FeeMicroUSD != 2500 {
		t.Fatalf("activity after migration: %v %+v", err, acts)
	}
	for _, prefix := range []string{legacyPrefixLedgerRow, legacyPrefixLedgerQuote} {
		it, err := s.DB().NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixUpperBound(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		if it.First() {
			t.Errorf("%s key %q left behind", prefix, it.Key())
		}
		must(t, it.Close())
	}
	// The pending index leads settlement to the migrated records.
	must(t, s.PutFeeWallet(ctx, "ptn_a", "evm", "0x1111111111111111111111111111111111111111"))
	batch, err := admin.Settle(ctx, s, "evm", false, at.Add(3*time.Hour))
	if err != nil || len(batch.Payouts) != 1 || batch.Payouts[0].RowCount != 2 || batch.Payouts[0].TotalMicroUSD != 3200 {
		t.Fatalf("settle after migration: %+v %v", batch, err)
	}
}

// A schema 2 directory (tickets and their deposit index in Pebble) opens
// as schema 3 (and on, as the current schema) without them, every other family untouched, its neighbours
// in key order included.
func TestMigrateSchema2DropsPebbleTickets(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := "qt_0069557e000123456789abcdef0123"
	keys := []struct {
		key  string
		kept bool
	}{
		{legacyPrefixTicket + "\x00\x00\x00\x00\x69\x55\x7e\x00" + id, false},
		{legacyPrefixTicket + "\xff\xff\xff\xff\xff\xff\xff\xff" + id, false},
		{legacyPrefixDeposit + "0xdep/", false},
		{legacyPrefixDeposit + "dep/memo", false},
		{"depositswap/0xdep/", true},
		{"quoteref/" + string(make([]byte, 32)), true},
		{"quote0", true},
		{"swap/0xabc", true},
		{"partner/ptn_a", true},
	}
	b := s.DB().NewBatch()
	for _, k := range keys {
		val := []byte(id)
		if strings.HasPrefix(k.key, prefixSwap) {
			// A later step reads tracked swaps.
			val = []byte(`{"v":1,"id":"0xabc"}`)
		}
		must(t, b.Set([]byte(k.key), val, nil))
	}
	must(t, b.Set(keySchema, []byte{0, 0, 0, 2}, nil))
	must(t, b.Commit(pebble.Sync))
	must(t, s.Close())

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.get(keySchema); err != nil || binary.BigEndian.Uint32(v) != SchemaVersion {
		t.Fatalf("schema after open %v %v", v, err)
	}
	for _, k := range keys {
		_, err := s.get([]byte(k.key))
		if kept := err == nil; kept != k.kept {
			t.Errorf("key %q: kept %v, want %v (%v)", k.key, kept, k.kept, err)
		}
	}
}

// A schema 4 directory opens as schema 5 with its tracked swaps' lines
// marked with their wallets and transactions and indexed by wallet, as a
// transition of the swap writes them now; a quote's line that never
// became a swap stays out of every wallet's history.
func TestMigrateSchema4IndexesSwapWallets(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var recs []store.EncodedQuote
	for i, id := range []string{"q1", "q2"} {
		r, err := store.EncodeQuote(&account.Activity{PartnerID: "ptn_a", ID: id, Kind: account.ActivityQuote,
			Status: account.ActivityQuoted, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		must(t, err)
		recs = append(recs, r)
	}
	_, err = s.RecordQuotes(ctx, recs, store.Synced)
	must(t, err)
	// As schema 4 left a tracked swap: its record, and its line marked
	// with its kind and status only.
	sw := &swap.Swap{ID: "0xa1", QuoteID: "q1", QuoteIssuedAt: t0, PartnerID: "ptn_a", Status: swap.StatusDone,
		FromAddress: "0xAf88d065e77c8cC2239327C5EDb3A432268e5831", ToAddress: "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV",
		Sending: swap.Leg{TxHash: "0xa1"}, Receiving: swap.Leg{TxHash: "0xb1"}}
	b := s.DB().NewBatch()
	must(t, s.putSwap(b, sw))
	must(t, s.PutActivity(b, &account.Activity{PartnerID: "ptn_a", ID: "q1", Kind: account.ActivitySwap, Status: swap.StatusPending, CreatedAt: t0}))
	must(t, b.Set(keySchema, []byte{0, 0, 0, 4}, nil))
	must(t, b.Commit(pebble.Sync))
	must(t, s.Close())

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, w := range []string{"0xaf88d065e77c8cc2239327c5edb3a432268e5831", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"} {
		page, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{Wallet: w})
		must(t, err)
		if len(page) != 1 || page[0].ID != "q1" || page[0].Status != swap.StatusDone || page[0].FromAddress != sw.FromAddress ||
			page[0].ToAddress != sw.ToAddress || page[0].SendingTxHash != "0xa1" || page[0].ReceivingTxHash != "0xb1" {
			t.Errorf("wallet %s's history after the migration: %+v", w, page)
		}
	}
	all, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
	must(t, err)
	if len(all) != 2 || all[0].ID != "q2" || all[0].Kind != account.ActivityQuote || all[0].FromAddress != "" {
		t.Errorf("the partner's history after the migration: %+v", all)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
