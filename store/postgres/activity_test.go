package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// The Pebble store's activity tests (store/pebble/activity_test.go), run
// against PostgreSQL, the records written through RecordQuotes; and the
// two backends read side by side.

// seedActivity writes n records for partner, one every six hours from
// start, alternating providers, chains, statuses and fees.
func seedActivity(t *testing.T, s interface {
	RecordQuotes(context.Context, []store.EncodedQuote, store.Durability) ([]bool, error)
}, partner string, start time.Time, n int) []*account.Activity {
	t.Helper()
	var out []*account.Activity
	var recs []store.EncodedQuote
	for i := range n {
		a := &account.Activity{
			PartnerID: partner, ID: fmt.Sprintf("q%03d", i), Kind: account.ActivityQuote,
			Status: []string{"QUOTED", "DONE"}[i%2], Provider: []string{"aggregator", "intents"}[i%2],
			Tool: "tool", FromChain: 1, ToChain: []uint64{137, 42161, 1151111081099710}[i%3],
			FromToken: "native", ToToken: "native", FromAmount: "1000", ToAmount: "990",
			FeeMicroUSD: int64(i%3) * 1_000_000, VolumeMicroUSD: 100_000_000,
			CreatedAt: start.Add(time.Duration(i) * 6 * time.Hour),
		}
		if i%3 != 0 {
			a.Earning = &account.Earning{Ecosystem: "evm", FeeToken: "0xaf88d065e77c8cc2239327c5edb3a432268e5831",
				FeeAmount: fmt.Sprint(i * 1000), PriceUSD: "1", State: account.EarningPending}
		}
		r, err := store.EncodeQuote(a)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		out = append(out, a)
	}
	if _, err := s.RecordQuotes(context.Background(), recs, store.Synced); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestActivitiesPagingAndFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
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

func TestStatsGrouping(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
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

func TestEachActivityBounds(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// More records than one read fetches, so that the scan crosses chunks.
	all := seedActivity(t, s, "ptn_a", start, activityChunk+40)
	seedActivity(t, s, "ptn_a2", start, 5)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * 6 * time.Hour) }
	cases := []struct {
		name        string
		from, until time.Time
		stopAfter   int
		want        []*account.Activity
	}{
		{"open", time.Time{}, time.Time{}, 0, all},
		{"from a record's instant", at(3), time.Time{}, 0, all[3:]},
		{"until a record's instant, excluded", time.Time{}, at(290), 0, all[:290]},
		{"between instants", at(2).Add(time.Nanosecond), at(5).Add(time.Nanosecond), 0, all[3:6]},
		{"stopped", at(10), time.Time{}, 4, all[10:14]},
		{"empty range", at(5), at(5), 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := s.EachActivity(ctx, "ptn_a", c.from, c.until, func(a *account.Activity) bool {
				got = append(got, a.ID)
				return c.stopAfter == 0 || len(got) < c.stopAfter
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, a := range c.want {
				want = append(want, a.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d records %v\nwant %d %v", len(got), got, len(want), want)
			}
		})
	}
	if err := s.EachActivity(ctx, "bad/id", time.Time{}, time.Time{}, func(*account.Activity) bool { t.Fatal("called"); return false }); err != nil {
		t.Fatal(err)
	}
}

// TestActivityLikePebble: the same quotes recorded in both backends read
// back alike: every page and cursor of every query, a cursor of one
// backend continuing on the other, the records themselves, stats and
// earnings.
func TestActivityLikePebble(t *testing.T) {
	ctx := context.Background()
	pg := openTest(t, Options{})
	pb, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []interface {
		RecordQuotes(context.Context, []store.EncodedQuote, store.Durability) ([]bool, error)
	}{pg, pb} {
		seedActivity(t, s, "ptn_a", start, 300)
		seedActivity(t, s, "ptn_b", start, 3)
	}
	zero := int64(0)
	for _, q := range []account.ActivityQuery{
		{Limit: 7}, {Limit: 100, Status: "DONE"}, {Limit: 3, Chain: 42161, MinFeeMicroUSD: &zero},
	} {
		for page := 0; ; page++ {
			a, an, err := pg.Activities(ctx, "ptn_a", q)
			if err != nil {
				t.Fatal(err)
			}
			b, bn, err := pb.Activities(ctx, "ptn_a", q)
			if err != nil {
				t.Fatal(err)
			}
			if an != bn || !reflect.DeepEqual(a, b) {
				t.Fatalf("query %+v page %d:\npostgres %d records, next %q\npebble   %d records, next %q", q, page, len(a), an, len(b), bn)
			}
			if an == "" {
				break
			}
			q.Cursor = an
		}
	}
	for _, p := range []string{"ptn_a", "ptn_b", "ptn_none"} {
		se, err := pg.Earnings(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		be, err := pb.Earnings(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(se, be) {
			t.Errorf("earnings of %s: postgres %+v, pebble %+v", p, *se, *be)
		}
		ss, err := pg.Stats(ctx, p, start.Add(time.Hour), start.Add(40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := pb.Stats(ctx, p, start.Add(time.Hour), start.Add(40*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ss, bs) {
			t.Errorf("stats of %s: postgres %+v, pebble %+v", p, *ss, *bs)
		}
	}
}

func TestActivitiesRefusesForeignCursors(t *testing.T) {
	s := openTest(t, Options{})
	for _, c := range []string{"!!", "AAAAAAAAAAA", "AAAAAAAAAAAv_w"} { // not base64, too short, an id not valid
		if _, _, err := s.Activities(context.Background(), "ptn_a", account.ActivityQuery{Cursor: c}); !errors.Is(err, account.ErrBadCursor) {
			t.Errorf("cursor %q: %v, want ErrBadCursor", c, err)
		}
	}
}
