package pebblestore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// A quote is recorded once whether its earlier record sits in an sstable, in
// the memtable or earlier in the same batch, and a retry never turns a
// settled earning pending again.
func TestRecordQuotesCountsAQuoteOnce(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(id string, i int) *account.Activity {
		return feeQuote("ptn_a", id, "evm", 10, at.Add(time.Duration(i)*time.Second))
	}
	var first []*account.Activity
	for i := range 50 {
		first = append(first, row(fmt.Sprintf("qt_old%02d", i), i))
	}
	if _, err := recordQuotes(ctx, s, first); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil { // the first rows now live in an sstable
		t.Fatal(err)
	}
	if _, err := recordQuotes(ctx, s, []*account.Activity{row("qt_mem", 60)}); err != nil {
		t.Fatal(err)
	}

	// A retry is the same quote again: same partner, id and issue time.
	batch := []*account.Activity{row("qt_new1", 100), row("qt_old07", 7), row("qt_mem", 60), row("qt_new2", 103), row("qt_new1", 100)}
	written, err := recordQuotes(ctx, s, batch)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true, false}; !slices.Equal(written, want) {
		t.Fatalf("written = %v, want %v", written, want)
	}
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x1111111111111111111111111111111111111111"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Settle(ctx, s, "evm", false, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if written, err := recordQuotes(ctx, s, []*account.Activity{row("qt_old07", 7), row("qt_new3", 200)}); err != nil || !slices.Equal(written, []bool{false, true}) {
		t.Fatalf("after settlement: written %v, %v", written, err)
	}
	count := map[string]int{}
	states := map[string]string{}
	for _, r := range rowsOf(t, s, "ptn_a") {
		count[r.ID]++
		states[r.ID] = r.Earning.State
	}
	if len(count) != 54 {
		t.Errorf("%d distinct rows, want 54", len(count))
	}
	if states["qt_old07"] != account.EarningSettled || states["qt_new3"] != account.EarningPending {
		t.Errorf("states after settlement and retry: qt_old07 %s, qt_new3 %s", states["qt_old07"], states["qt_new3"])
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("%s recorded %d times", id, n)
		}
	}
}

// feeQuote is a partner quote that carried a fee of feeMicro micro-USD,
// settling in eco.
func feeQuote(partner, id, eco string, feeMicro int64, at time.Time) *account.Activity {
	return &account.Activity{PartnerID: partner, ID: id, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: "aggregator", FeeMicroUSD: feeMicro, VolumeMicroUSD: 100 * feeMicro, CreatedAt: at,
		Earning: &account.Earning{Ecosystem: eco, State: account.EarningPending}}
}

// recordQuotes encodes and records quotes as the ledger actor does.
func recordQuotes(ctx context.Context, s *Store, as []*account.Activity) ([]bool, error) {
	recs := make([]store.EncodedQuote, len(as))
	for i, a := range as {
		var err error
		if recs[i], err = store.EncodeQuote(a); err != nil {
			return nil, err
		}
	}
	return s.RecordQuotes(ctx, recs, store.Synced)
}
