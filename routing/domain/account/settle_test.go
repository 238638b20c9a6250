package account

import (
	"slices"
	"testing"
	"time"
)

// TestSettlementDecisions holds the settlement rules to a table: each case is
// a pending set and the wallets registered at the run, and says what happens
// to each earning and what the batch reports.
func TestSettlementDecisions(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pending := func(partner string, fee int64) *Activity {
		return &Activity{PartnerID: partner, ID: "q", FeeMicroUSD: fee, Earning: &Earning{Ecosystem: "evm", State: EarningPending}}
	}
	settled := func(partner string, fee int64) *Activity {
		a := pending(partner, fee)
		a.Earning.State, a.Earning.SettledTo, a.Earning.SettledBatch = EarningSettled, "0xold", "stl_old"
		return a
	}
	tests := []struct {
		name    string
		rows    []*Activity
		wallets map[string]string
		dryRun  bool
		want    []Decision
		payouts []Payout
		skipped []Unpaid
		id      string
	}{
		{name: "nothing pending", want: []Decision{}, payouts: []Payout{}, id: ""},
		{
			name:    "rule 1: pending earnings settle to the wallet registered now",
			rows:    []*Activity{pending("a", 100), pending("a", 250), pending("b", 7)},
			wallets: map[string]string{"a": "0xnew", "b": "0xb"},
			want:    []Decision{Pay, Pay, Pay},
			payouts: []Payout{{PartnerID: "a", Wallet: "0xnew", RowCount: 2, TotalMicroUSD: 350}, {PartnerID: "b", Wallet: "0xb", RowCount: 1, TotalMicroUSD: 7}},
			id:      "stl_1",
		},
		{
			name:    "rule 2: no wallet (deleted or never registered) keeps earnings pending",
			rows:    []*Activity{pending("a", 100), pending("b", 5), pending("b", 6)},
			wallets: map[string]string{"a": "0xa"},
			want:    []Decision{Pay, Keep, Keep},
			payouts: []Payout{{PartnerID: "a", Wallet: "0xa", RowCount: 1, TotalMicroUSD: 100}},
			skipped: []Unpaid{{PartnerID: "b", RowCount: 2, TotalMicroUSD: 11}},
			id:      "stl_1",
		},
		{
			name:    "only skipped partners: nothing to record",
			rows:    []*Activity{pending("b", 5)},
			want:    []Decision{Keep},
			payouts: []Payout{},
			skipped: []Unpaid{{PartnerID: "b", RowCount: 1, TotalMicroUSD: 5}},
		},
		{
			name:    "rule 3 and no double payment: an already settled earning is forgotten, not paid again",
			rows:    []*Activity{settled("a", 100), pending("a", 1)},
			wallets: map[string]string{"a": "0xnew"},
			want:    []Decision{Forget, Pay},
			payouts: []Payout{{PartnerID: "a", Wallet: "0xnew", RowCount: 1, TotalMicroUSD: 1}},
			id:      "stl_1",
		},
		{
			name:    "a dry run decides alike but carries no batch id",
			rows:    []*Activity{pending("a", 100)},
			wallets: map[string]string{"a": "0xa"},
			dryRun:  true,
			want:    []Decision{Pay},
			payouts: []Payout{{PartnerID: "a", Wallet: "0xa", RowCount: 1, TotalMicroUSD: 100}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := NewSettlement("evm", "stl_1", now, tt.wallets)
			got := []Decision{}
			before := make([]Earning, len(tt.rows))
			for i, r := range tt.rows {
				before[i] = *r.Earning
				got = append(got, run.Decide(r))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("decisions %v, want %v", got, tt.want)
			}
			for i, r := range tt.rows {
				e := r.Earning
				switch got[i] {
				case Pay:
					if e.State != EarningSettled || e.SettledBatch != "stl_1" || e.SettledTo != tt.wallets[r.PartnerID] || !e.SettledAt.Equal(now) {
						t.Errorf("row %d paid but its earning reads %+v", i, e)
					}
				default:
					if *e != before[i] {
						t.Errorf("row %d (%v) changed: %+v, was %+v", i, got[i], e, before[i])
					}
				}
			}
			b := run.Batch(tt.dryRun)
			if b.ID != tt.id || b.DryRun != tt.dryRun || b.Ecosystem != "evm" || !b.CreatedAt.Equal(now) ||
				!slices.Equal(b.Payouts, tt.payouts) || !slices.Equal(b.Skipped, tt.skipped) {
				t.Fatalf("batch %+v", b)
			}
		})
	}
}
