package account

import (
	"fmt"
	"testing"
	"time"
)

func TestTallies(t *testing.T) {
	day := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	rows := []*Activity{
		{Provider: "aggregator", VolumeMicroUSD: 1000, FeeMicroUSD: 3, CreatedAt: day,
			Earning: &Earning{Ecosystem: "solana", State: EarningPending}},
		{Provider: "aggregator", VolumeMicroUSD: 500, CreatedAt: day.Add(2 * time.Hour)},
		{Provider: "intents", VolumeMicroUSD: 10, FeeMicroUSD: 4, CreatedAt: day.Add(3 * time.Hour),
			Earning: &Earning{Ecosystem: "evm", State: EarningSettled}},
		{Provider: "intents", VolumeMicroUSD: 10, FeeMicroUSD: 5, CreatedAt: day.Add(3 * time.Hour),
			Earning: &Earning{Ecosystem: "evm", State: EarningPending}},
		{Provider: "intents", CreatedAt: day, Earning: &Earning{Ecosystem: "near", State: EarningPending}}, // zero total: left out
		// Settled by transfers: one group per transaction, after those settled without one.
		{Provider: "intents", FeeMicroUSD: 6, CreatedAt: day.Add(4 * time.Hour),
			Earning: &Earning{Ecosystem: "evm", State: EarningSettled, SettledChainID: 8453, SettledTx: "0xbb"}},
		{Provider: "intents", FeeMicroUSD: 7, CreatedAt: day.Add(4 * time.Hour),
			Earning: &Earning{Ecosystem: "evm", State: EarningSettled, SettledChainID: 10, SettledTx: "0xaa"}},
		{Provider: "intents", FeeMicroUSD: 8, CreatedAt: day.Add(4 * time.Hour),
			Earning: &Earning{Ecosystem: "evm", State: EarningSettled, SettledChainID: 8453, SettledTx: "0xbb"}},
	}
	st, et := NewStatsTally(day, day.Add(48*time.Hour)), NewEarningsTally()
	for _, r := range rows {
		st.Add(r)
		et.Add(r)
	}
	s := st.Stats()
	if s.Totals != (StatFigures{Quotes: 8, VolumeMicroUSD: 1520, FeeMicroUSD: 33}) ||
		fmt.Sprint(s.ByDay) != "[{2026-03-01 {2 1000 3}} {2026-03-02 {6 520 30}}]" ||
		fmt.Sprint(s.ByProvider) != "[{aggregator {2 1500 3}} {intents {6 20 30}}]" {
		t.Fatalf("stats %+v", s)
	}
	e := et.Earnings()
	if fmt.Sprint(e.Pending) != "[{evm 0  1 5} {solana 0  1 3}]" ||
		fmt.Sprint(e.Settled) != "[{evm 0  1 4} {evm 10 0xaa 1 7} {evm 8453 0xbb 2 14}]" {
		t.Fatalf("earnings %+v", e)
	}
}

func TestActivityQuery(t *testing.T) {
	zero, two := int64(0), int64(2)
	a := &Activity{Status: "QUOTED", FromChain: 1, ToChain: 8453, FeeMicroUSD: 1}
	tests := []struct {
		q    ActivityQuery
		want bool
	}{
		{ActivityQuery{}, true},
		{ActivityQuery{Status: "QUOTED"}, true},
		{ActivityQuery{Status: "DONE"}, false},
		{ActivityQuery{Chain: 8453}, true},
		{ActivityQuery{Chain: 10}, false},
		{ActivityQuery{MinFeeMicroUSD: &zero}, true},
		{ActivityQuery{MinFeeMicroUSD: &two}, false},
	}
	for _, tt := range tests {
		if got := tt.q.Match(a); got != tt.want {
			t.Errorf("%+v.Match = %v, want %v", tt.q, got, tt.want)
		}
	}
	for _, tt := range []struct{ limit, want int }{{0, DefaultActivityLimit}, {-3, DefaultActivityLimit}, {7, 7}, {MaxActivityLimit + 1, MaxActivityLimit}} {
		if got := (&ActivityQuery{Limit: tt.limit}).PageSize(); got != tt.want {
			t.Errorf("PageSize(%d) = %d, want %d", tt.limit, got, tt.want)
		}
	}
}
