package persistence

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// A quote id is recorded once whether its earlier row sits in an sstable, in
// the memtable or earlier in the same batch.
func TestRecordQuotesCountsAQuoteOnce(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(id string, i int) *LedgerRow {
		return &LedgerRow{PartnerID: "ptn_a", QuoteID: id, Ecosystem: "evm", Provider: "aggregator",
			FeeMicroUSD: 10, CreatedAt: at.Add(time.Duration(i) * time.Second)}
	}
	var first []*LedgerRow
	for i := range 50 {
		first = append(first, row(fmt.Sprintf("qt_old%02d", i), i))
	}
	if _, err := s.AppendLedger(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil { // the first rows now live in an sstable
		t.Fatal(err)
	}
	if _, err := s.AppendLedger(ctx, []*LedgerRow{row("qt_mem", 60)}); err != nil {
		t.Fatal(err)
	}

	batch := []*LedgerRow{row("qt_new1", 100), row("qt_old07", 101), row("qt_mem", 102), row("qt_new2", 103), row("qt_new1", 104)}
	written, err := s.AppendLedger(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true, false}; !slices.Equal(written, want) {
		t.Fatalf("written = %v, want %v", written, want)
	}
	count := map[string]int{}
	for _, r := range rowsOf(t, s, "ptn_a") {
		count[r.QuoteID]++
	}
	if len(count) != 53 {
		t.Errorf("%d distinct rows, want 53", len(count))
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("%s recorded %d times", id, n)
		}
	}
}
