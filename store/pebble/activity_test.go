package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"github.com/swapgate/swapgate/routing/domain/account"
	"testing"
	"time"
)

// seedActivity writes n records for partner, one a minute from start,
// alternating providers, chains, statuses and fees.
func seedActivity(t *testing.T, s *Store, partner string, start time.Time, n int) []*account.Activity {
	t.Helper()
	b := s.DB().NewBatch()
	defer b.Close()
	var out []*account.Activity
	for i := range n {
		a := &account.Activity{
			PartnerID: partner, ID: fmt.Sprintf("q%03d", i), Kind: account.ActivityQuote,
			Status: []string{"QUOTED", "DONE"}[i%2], Provider: []string{"aggregator", "intents"}[i%2],
			Tool: "tool", FromChain: 1, ToChain: []uint64{137, 42161, 1151111081099710}[i%3],
			FromToken: "native", ToToken: "native", FromAmount: "1000", ToAmount: "990",
			FeeMicroUSD: int64(i%3) * 1_000_000, VolumeMicroUSD: 100_000_000,
			CreatedAt: start.Add(time.Duration(i) * 6 * time.Hour),
		}
		if err := s.PutActivity(b, a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestActivitiesPagingAndFilters(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	all := seedActivity(t, s, "ptn_a", start, 12)
	seedActivity(t, s, "ptn_a2", start, 5) // id extends ptn_a's: must never leak
	seedActivity(t, s, "ptn_", start, 5)

	zero := int64(0)
	twoUSD := int64(2_000_000)
	cases := []struct {
		name string
		q    account.ActivityQuery
		want []string
	}{
		{"all newest first", account.ActivityQuery{}, ids(all, func(*account.Activity) bool { return true })},
		{"status", account.ActivityQuery{Status: "DONE"}, ids(all, func(a *account.Activity) bool { return a.Status == "DONE" })},
		{"chain as destination", account.ActivityQuery{Chain: 42161}, ids(all, func(a *account.Activity) bool { return a.ToChain == 42161 })},
		{"chain as source", account.ActivityQuery{Chain: 1}, ids(all, func(*account.Activity) bool { return true })},
		{"fee > 0", account.ActivityQuery{MinFeeMicroUSD: &zero}, ids(all, func(a *account.Activity) bool { return a.FeeMicroUSD > 0 })},
		{"fee >= 2", account.ActivityQuery{MinFeeMicroUSD: &twoUSD}, ids(all, func(a *account.Activity) bool { return a.FeeMicroUSD >= 2_000_000 })},
		{"combined", account.ActivityQuery{Status: "QUOTED", MinFeeMicroUSD: &zero}, ids(all, func(a *account.Activity) bool { return a.Status == "QUOTED" && a.FeeMicroUSD > 0 })},
	}
	for _, tc := range cases {
		for _, limit := range []int{1, 3, 5, 100} {
			t.Run(fmt.Sprintf("%s/limit%d", tc.name, limit), func(t *testing.T) {
				q := tc.q
				q.Limit = limit
				var got []string
				for page := 0; ; page++ {
					if page > 20 {
						t.Fatal("no end of pages")
					}
					acts, next, err := s.Activities(ctx, "ptn_a", q)
					if err != nil {
						t.Fatal(err)
					}
					if len(acts) > limit {
						t.Fatalf("page of %d > limit %d", len(acts), limit)
					}
					for _, a := range acts {
						if a.PartnerID != "ptn_a" {
							t.Fatalf("foreign record %+v", a)
						}
						got = append(got, a.ID)
					}
					if next == "" {
						break
					}
					if len(acts) != limit {
						t.Fatalf("short page %d with a next cursor", len(acts))
					}
					q.Cursor = next
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("got %v\nwant %v", got, tc.want)
				}
			})
		}
	}
	if _, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{Cursor: "!!"}); !errors.Is(err, account.ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
	big, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{Limit: 10_000})
	if err != nil || len(big) != 12 {
		t.Fatalf("large limit: %d %v", len(big), err)
	}
}

// ids returns the ids of the records keeping, newest first.
func ids(all []*account.Activity, keep func(*account.Activity) bool) []string {
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		if keep(all[i]) {
			out = append(out, all[i].ID)
		}
	}
	return out
}

func TestActivityRewriteKeepsPlace(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	all := seedActivity(t, s, "ptn_a", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 3)
	up := *all[0]
	up.Kind, up.Status = account.ActivitySwap, "PENDING"
	b := s.DB().NewBatch()
	if err := s.PutActivity(b, &up); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	acts, _, err := s.Activities(ctx, "ptn_a", account.ActivityQuery{})
	if err != nil || len(acts) != 3 || acts[2].Status != "PENDING" || acts[2].Kind != account.ActivitySwap {
		t.Fatalf("after status change: %v %+v", err, acts)
	}
	if err := s.PutActivity(b, &account.Activity{PartnerID: "ptn_a", ID: "q"}); err == nil {
		t.Fatal("zero CreatedAt accepted")
	}
}

func TestStatsGrouping(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// 12 records, 6 hours apart: 4 per day on Mar 1..3.
	seedActivity(t, s, "ptn_a", start, 12)
	seedActivity(t, s, "ptn_a2", start, 12)

	st, err := s.Stats(ctx, "ptn_a", start.Add(24*time.Hour), start.Add(72*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Records 4..11: fees (i%3) USD = 1,2,0,1,2,0,1,2 = 9 USD.
	want := account.StatFigures{Quotes: 8, VolumeMicroUSD: 800_000_000, FeeMicroUSD: 9_000_000}
	if st.Totals != want {
		t.Fatalf("totals %+v, want %+v", st.Totals, want)
	}
	if len(st.ByDay) != 2 || st.ByDay[0].Day != "2026-03-02" || st.ByDay[1].Day != "2026-03-03" ||
		st.ByDay[0].Quotes != 4 || st.ByDay[0].FeeMicroUSD != 4_000_000 || st.ByDay[1].FeeMicroUSD != 5_000_000 {
		t.Fatalf("byDay %+v", st.ByDay)
	}
	if len(st.ByProvider) != 2 || st.ByProvider[0].Provider != "aggregator" || st.ByProvider[0].Quotes != 4 ||
		st.ByProvider[1].Provider != "intents" || st.ByProvider[1].Quotes != 4 {
		t.Fatalf("byProvider %+v", st.ByProvider)
	}
	// The upper bound is exclusive: a range ending at a record's instant
	// leaves it out.
	st, err = s.Stats(ctx, "ptn_a", start, start.Add(6*time.Hour))
	if err != nil || st.Totals.Quotes != 1 {
		t.Fatalf("exclusive bound: %+v %v", st.Totals, err)
	}
	st, err = s.Stats(ctx, "ptn_none", start, start.Add(1000*time.Hour))
	if err != nil || st.Totals.Quotes != 0 || len(st.ByDay) != 0 {
		t.Fatalf("empty partner: %+v %v", st, err)
	}
}
