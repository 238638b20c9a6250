package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// feeQuote is a partner quote that carried a fee of feeMicro micro-USD,
// settling in eco.
func feeQuote(partner, id, eco string, feeMicro int64, at time.Time) *account.Activity {
	return &account.Activity{PartnerID: partner, ID: id, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: "aggregator", FeeMicroUSD: feeMicro, VolumeMicroUSD: 100 * feeMicro, CreatedAt: at,
		Earning: &account.Earning{Ecosystem: eco, State: account.EarningPending}}
}

// recordQuotes encodes and records quotes as the ledger actor does.
func recordQuotes(ctx context.Context, s *Store, d store.Durability, as []*account.Activity) ([]bool, error) {
	recs := make([]store.EncodedQuote, len(as))
	for i, a := range as {
		var err error
		if recs[i], err = store.EncodeQuote(a); err != nil {
			return nil, err
		}
	}
	return s.RecordQuotes(ctx, recs, d)
}

// rowsOf returns every activity row of partner, oldest first.
func rowsOf(t *testing.T, s *Store, partner string) []*account.Activity {
	t.Helper()
	var out []*account.Activity
	if err := s.EachActivity(context.Background(), partner, time.Time{}, time.Time{}, func(a *account.Activity) bool {
		out = append(out, a)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// The Pebble store's test (store/pebble/ledger_test.go): a quote is
// recorded once whether its earlier record was committed long ago, just
// now or earlier in the same batch, and a retry never turns a settled
// earning pending again; on both durabilities.
func TestRecordQuotesCountsAQuoteOnce(t *testing.T) {
	for _, d := range []store.Durability{store.Synced, store.Unsynced} {
		t.Run(fmt.Sprint("synced=", bool(d)), func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t, Options{})
			at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			row := func(id string, i int) *account.Activity {
				return feeQuote("ptn_a", id, "evm", 10, at.Add(time.Duration(i)*time.Second))
			}
			var first []*account.Activity
			for i := range 50 {
				first = append(first, row(fmt.Sprintf("qt_old%02d", i), i))
			}
			if w, err := recordQuotes(ctx, s, d, first); err != nil || slices.Contains(w, false) {
				t.Fatalf("first batch: %v %v", w, err)
			}
			if _, err := recordQuotes(ctx, s, d, []*account.Activity{row("qt_mem", 60)}); err != nil {
				t.Fatal(err)
			}
			batch := []*account.Activity{row("qt_new1", 100), row("qt_old07", 7), row("qt_mem", 60), row("qt_new2", 103), row("qt_new1", 100)}
			written, err := recordQuotes(ctx, s, d, batch)
			if err != nil {
				t.Fatal(err)
			}
			if want := []bool{true, false, false, true, false}; !slices.Equal(written, want) {
				t.Fatalf("written = %v, want %v", written, want)
			}
			if err := s.PutFeeWallet(ctx, "ptn_a", "evm", "0x1111111111111111111111111111111111111111"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Settle(ctx, "evm", false, at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if written, err := recordQuotes(ctx, s, d, []*account.Activity{row("qt_old07", 7), row("qt_new3", 200)}); err != nil || !slices.Equal(written, []bool{false, true}) {
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
		})
	}
}

// TestRecordQuotesPendingOrder: earnings enter their ecosystem's pending
// order in the batch's order, batch after batch; quotes without a fee are
// not in it.
func TestRecordQuotesPendingOrder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	noFee := feeQuote("ptn_b", "qt_nofee", "evm", 0, at)
	noFee.Earning = nil
	batches := [][]*account.Activity{
		{feeQuote("ptn_b", "qt_3", "evm", 1, at.Add(3)), noFee, feeQuote("ptn_a", "qt_1", "solana", 1, at.Add(1))},
		{feeQuote("ptn_a", "qt_2", "evm", 1, at.Add(2))},
	}
	for _, b := range batches {
		if _, err := recordQuotes(ctx, s, store.Synced, b); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{"evm": {"qt_3", "qt_2"}, "solana": {"qt_1"}}
	for eco, ids := range want {
		rows, err := s.pool.Query(ctx, `SELECT id FROM activity WHERE pending_ecosystem = $1 ORDER BY ledger_seq`, eco)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		rows.Close()
		if !slices.Equal(got, ids) {
			t.Errorf("pending in %s: %v, want %v", eco, got, ids)
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM activity WHERE id = 'qt_nofee' AND pending_ecosystem IS NULL AND ledger_seq IS NULL`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the quote without a fee: %d %v", n, err)
	}
}

// TestRecordQuotesAcrossNodes: nodes recording overlapping batches at once
// (a retried quote reaching two nodes) store each quote once, and exactly
// one of them reports it written.
func TestRecordQuotesAcrossNodes(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	nodes := []*Store{db.open(t, Options{}), db.open(t, Options{}), db.open(t, Options{})}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const quotes = 200
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written = map[string]int{}
	)
	for n, s := range nodes {
		for b := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each batch takes 40 quotes starting at its own offset, so
				// batches on every node overlap.
				var batch []*account.Activity
				for i := range 40 {
					q := (b*20 + n*7 + i) % quotes
					batch = append(batch, feeQuote("ptn_a", fmt.Sprintf("qt_%03d", q), "evm", 1, at.Add(time.Duration(q))))
				}
				w, err := recordQuotes(ctx, s, store.Durability(b%2 == 0), batch)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for i, ok := range w {
					if ok {
						written[batch[i].ID]++
					}
				}
			}()
		}
	}
	wg.Wait()
	rows := rowsOf(t, nodes[0], "ptn_a")
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ID] {
			t.Fatalf("%s stored twice", r.ID)
		}
		seen[r.ID] = true
	}
	for id := range seen {
		if written[id] != 1 {
			t.Errorf("%s reported written %d times", id, written[id])
		}
	}
	if len(written) != len(seen) {
		t.Errorf("%d quotes reported written, %d stored", len(written), len(seen))
	}
}

func TestRecordQuotesRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	if w, err := s.RecordQuotes(ctx, nil, store.Synced); err != nil || len(w) != 0 {
		t.Fatalf("empty batch: %v %v", w, err)
	}
	if _, err := s.RecordQuotes(ctx, []store.EncodedQuote{{}}, store.Synced); err == nil {
		t.Fatal("a record not made by EncodeQuote was accepted")
	}
	if n := countRows(t, s, "activity"); n != 0 {
		t.Fatalf("refused batches left %d rows", n)
	}
}

// TestRecordQuotesOppositeOrders: two nodes recording the same quotes in
// opposite orders, again and again, never fail a batch (the rows go in in
// one order whatever the batch's, so the two never deadlock).
func TestRecordQuotesOppositeOrders(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for round := range 20 {
		var up []*account.Activity
		for i := range 30 {
			up = append(up, feeQuote("ptn_a", fmt.Sprintf("qt_%02d_%02d", round, i), "evm", 1, at.Add(time.Duration(round*100+i))))
		}
		down := slices.Clone(up)
		slices.Reverse(down)
		var wg sync.WaitGroup
		for _, c := range []struct {
			s     *Store
			batch []*account.Activity
		}{{a, up}, {b, down}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := recordQuotes(ctx, c.s, store.Synced, c.batch); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			}()
		}
		wg.Wait()
	}
	if n := countRows(t, a, "activity"); n != 20*30 {
		t.Fatalf("%d rows, want %d", n, 20*30)
	}
}
