package storecontract

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/ledger"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Ledger is the partners' activity and the earnings it carries: the group
// commit's appends (ledger.Appender) and the account endpoints' reads
// (edge.LedgerReader). A quote is recorded once, however often it is
// appended; a synced append is durable when it returns.
type Ledger interface {
	ledger.Appender
	edge.LedgerReader
}

// t0 is the suites' reference time.
var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// feeQuote is a partner quote that carried a fee of feeMicro micro-USD,
// settling in eco; a zero fee is a fee-free quote, without an earning.
func feeQuote(partnerID, id, eco string, feeMicro int64, at time.Time) *account.Activity {
	a := &account.Activity{PartnerID: partnerID, ID: id, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: "aggregator", FeeMicroUSD: feeMicro, VolumeMicroUSD: 100 * feeMicro, CreatedAt: at}
	if feeMicro > 0 {
		a.Earning = &account.Earning{Ecosystem: eco, State: account.EarningPending}
	} else {
		a.VolumeMicroUSD = 1_000_000
	}
	return a
}

// record appends as as the ledger actor does and returns what was written.
func record(ctx context.Context, s ledger.Appender, d store.Durability, as ...*account.Activity) ([]bool, error) {
	recs := make([]store.EncodedQuote, len(as))
	for i, a := range as {
		var err error
		if recs[i], err = store.EncodeQuote(a); err != nil {
			return nil, err
		}
	}
	return s.RecordQuotes(ctx, recs, d)
}

// idsOf lists a partner's activity ids, newest first, every page.
func idsOf(t testing.TB, s edge.LedgerReader, partnerID string) string {
	t.Helper()
	var ids []string
	q := account.ActivityQuery{Limit: 2}
	for {
		page, next, err := s.Activities(context.Background(), partnerID, q)
		mustNil(t, "activities", err)
		for _, a := range page {
			if a.PartnerID != partnerID {
				t.Fatalf("%s's activity holds %+v", partnerID, a)
			}
			ids = append(ids, a.ID)
		}
		if next == "" {
			return fmt.Sprint(ids)
		}
		q.Cursor = next
	}
}

// pendingOf is a partner's pending earnings as "eco=total/rows".
func pendingOf(t testing.TB, s edge.LedgerReader, partnerID string) string {
	t.Helper()
	e, err := s.Earnings(context.Background(), partnerID)
	mustNil(t, "earnings", err)
	return groups(e.Pending)
}

func settledOf(t testing.TB, s edge.LedgerReader, partnerID string) string {
	t.Helper()
	e, err := s.Earnings(context.Background(), partnerID)
	mustNil(t, "earnings", err)
	return groups(e.Settled)
}

func groups(gs []account.EarningsGroup) string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%s=%d/%d", g.Ecosystem, g.TotalMicroUSD, g.RowCount))
	}
	return fmt.Sprint(out)
}

// RunLedger holds a Ledger implementation to its contract.
func RunLedger(t *testing.T, open Factory[Ledger]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Ledger])
	}{
		{"records read back newest first, paged, per partner", func(t *testing.T, h *Handle[Ledger]) {
			w, err := record(ctx, h.Store, store.Synced,
				feeQuote("ptn_a", "q1", "evm", 1000, t0), feeQuote("ptn_a", "q2", "", 0, t0.Add(time.Second)),
				feeQuote("ptn_b", "q3", "evm", 5, t0.Add(2*time.Second)), feeQuote("ptn_a", "q4", "solana", 7, t0.Add(3*time.Second)))
			if err != nil || fmt.Sprint(w) != "[true true true true]" {
				t.Fatalf("record: %v %v", w, err)
			}
			if got := idsOf(t, h.Store, "ptn_a"); got != "[q4 q2 q1]" {
				t.Fatalf("ptn_a's activity %s", got)
			}
			if got := idsOf(t, h.Store, "ptn_b"); got != "[q3]" {
				t.Fatalf("ptn_b's activity %s", got)
			}
			if got := pendingOf(t, h.Store, "ptn_a"); got != "[evm=1000/1 solana=7/1]" {
				t.Fatalf("ptn_a's pending earnings %s", got)
			}
		}},
		{"a quote is recorded once: again later, twice in a batch, by racing appenders", func(t *testing.T, h *Handle[Ledger]) {
			q := feeQuote("ptn_a", "q1", "evm", 1000, t0)
			if w, err := record(ctx, h.Store, store.Synced, q); err != nil || !w[0] {
				t.Fatalf("first: %v %v", w, err)
			}
			if w, err := record(ctx, h.Store, store.Synced, q, feeQuote("ptn_a", "q2", "evm", 1, t0), feeQuote("ptn_a", "q2", "evm", 1, t0)); err != nil || fmt.Sprint(w) != "[false true false]" {
				t.Fatalf("again: %v %v", w, err)
			}
			var wg sync.WaitGroup
			wrote := make([]bool, 8)
			for i := range wrote {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w, err := record(ctx, h.Store, store.Synced, feeQuote("ptn_a", "q3", "evm", 10, t0.Add(time.Minute)))
					if err != nil {
						t.Error(err)
						return
					}
					wrote[i] = w[0]
				}()
			}
			wg.Wait()
			n := 0
			for _, w := range wrote {
				if w {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("a quote appended by %d racing appenders was written %d times", len(wrote), n)
			}
			if got := pendingOf(t, h.Store, "ptn_a"); got != "[evm=1011/3]" {
				t.Fatalf("pending %s: a quote counted twice", got)
			}
		}},
		{"stats over [from, to)", func(t *testing.T, h *Handle[Ledger]) {
			_, err := record(ctx, h.Store, store.Synced, feeQuote("ptn_a", "q1", "evm", 10, t0),
				feeQuote("ptn_a", "q2", "evm", 20, t0.Add(24*time.Hour)), feeQuote("ptn_a", "q3", "evm", 40, t0.Add(48*time.Hour)))
			mustNil(t, "record", err)
			st, err := h.Store.Stats(ctx, "ptn_a", t0, t0.Add(48*time.Hour))
			mustNil(t, "stats", err)
			if st.Totals.Quotes != 2 || st.Totals.FeeMicroUSD != 30 || len(st.ByDay) != 2 || st.ByDay[0].Day != "2026-03-01" {
				t.Fatalf("stats %+v", st)
			}
		}},
		{"an unsynced append is visible once acknowledged", func(t *testing.T, h *Handle[Ledger]) {
			if _, err := record(ctx, h.Store, store.Unsynced, feeQuote("ptn_a", "q1", "", 0, t0)); err != nil {
				t.Fatal(err)
			}
			if got := idsOf(t, h.Store, "ptn_a"); got != "[q1]" {
				t.Fatalf("activity %s", got)
			}
		}},
		{"an interrupted append leaves nothing, a synced one survives a crash with its earning", func(t *testing.T, h *Handle[Ledger]) {
			Interrupt(t, h, func(ctx context.Context, s Ledger) error {
				_, err := record(ctx, s, store.Synced, feeQuote("ptn_a", "q1", "evm", 1000, t0), feeQuote("ptn_a", "q2", "near", 5, t0.Add(time.Second)))
				return err
			}, func(t testing.TB, s Ledger) {
				if ids, p := idsOf(t, s, "ptn_a"), pendingOf(t, s, "ptn_a"); ids != "[]" || p != "[]" {
					t.Fatalf("an interrupted append left %s, pending %s", ids, p)
				}
			}, func(t testing.TB, s Ledger) {
				if ids, p := idsOf(t, s, "ptn_a"), pendingOf(t, s, "ptn_a"); ids != "[q2 q1]" || p != "[evm=1000/1 near=5/1]" {
					t.Fatalf("after the append: %s, pending %s", ids, p)
				}
				// Recorded again after the crash (a retry): still once.
				if w, err := record(context.Background(), s, store.Synced, feeQuote("ptn_a", "q1", "evm", 1000, t0)); err != nil || w[0] {
					t.Fatalf("retry wrote again: %v %v", w, err)
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}
