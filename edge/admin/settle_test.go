package admin

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// fakeSettlementStore serves fixed pending earnings and wallets, and
// refuses its first conflicts applies as a store does when a concurrent
// run took an earning first.
type fakeSettlementStore struct {
	wallets   map[string]string
	pending   []account.Activity
	conflicts int
	fail      error

	reads, applies int
	paid, forgot   []string
	batch          *account.SettlementBatch
}

func (f *fakeSettlementStore) FeeWalletsIn(context.Context, string) (map[string]string, error) {
	return f.wallets, nil
}

func (f *fakeSettlementStore) PendingEarnings(_ context.Context, _ string, fn func(*account.Activity) error) error {
	f.reads++
	for _, a := range f.pending {
		c := a
		e := *a.Earning
		c.Earning = &e
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSettlementStore) ApplySettlement(_ context.Context, _ string, b *account.SettlementBatch, paid, forgotten []*account.Activity) error {
	f.applies++
	if f.fail != nil {
		return f.fail
	}
	if f.conflicts > 0 {
		f.conflicts--
		return account.ErrSettlementConflict
	}
	for _, a := range paid {
		f.paid = append(f.paid, a.ID+"→"+a.Earning.SettledTo)
	}
	for _, a := range forgotten {
		f.forgot = append(f.forgot, a.ID)
	}
	f.batch = b
	return nil
}

// TestSettle holds the settlement run to its steps: what it reads, what
// the domain decides, what it hands back, and its retries after a
// concurrent run.
func TestSettle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	earning := func(partner, id string, state string) account.Activity {
		return account.Activity{PartnerID: partner, ID: id, FeeMicroUSD: 10, CreatedAt: now.Add(-time.Hour),
			Earning: &account.Earning{Ecosystem: "evm", State: state}}
	}
	pending := []account.Activity{earning("ptn_a", "q1", account.EarningPending), earning("ptn_b", "q2", account.EarningPending),
		earning("ptn_a", "q3", account.EarningSettled)}
	wallets := map[string]string{"ptn_a": "0xa"}
	refused := errors.New("disk full")
	tests := []struct {
		name               string
		dryRun             bool
		conflicts          int
		fail               error
		wantErr            error
		wantApplies        int
		wantPaid, wantGone string
		wantBatch          bool
	}{
		{name: "pays, keeps and forgets", wantApplies: 1, wantPaid: "[q1→0xa]", wantGone: "[q3]", wantBatch: true},
		{name: "a dry run applies nothing", dryRun: true, wantApplies: 0, wantPaid: "[]", wantGone: "[]"},
		{name: "a conflict is read and decided again", conflicts: 1, wantApplies: 2, wantPaid: "[q1→0xa]", wantGone: "[q3]", wantBatch: true},
		{name: "conflicts past the attempts fail the run", conflicts: settleAttempts, wantErr: account.ErrSettlementConflict, wantApplies: settleAttempts, wantPaid: "[]", wantGone: "[]"},
		{name: "a store failure is not retried", fail: refused, wantErr: refused, wantApplies: 1, wantPaid: "[]", wantGone: "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeSettlementStore{wallets: wallets, pending: pending, conflicts: tt.conflicts, fail: tt.fail}
			b, err := Settle(context.Background(), st, "evm", tt.dryRun, now)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if st.applies != tt.wantApplies || st.reads != max(tt.wantApplies, 1) {
				t.Fatalf("%d reads and %d applies, want %d applies, a read before each", st.reads, st.applies, tt.wantApplies)
			}
			if got := fmt.Sprint(nonNil(st.paid)); got != tt.wantPaid {
				t.Fatalf("paid %s, want %s", got, tt.wantPaid)
			}
			if got := fmt.Sprint(nonNil(st.forgot)); got != tt.wantGone {
				t.Fatalf("forgotten %s, want %s", got, tt.wantGone)
			}
			if err != nil {
				return
			}
			if b.DryRun != tt.dryRun || len(b.Payouts) != 1 || b.Payouts[0].PartnerID != "ptn_a" || len(b.Skipped) != 1 || b.Skipped[0].PartnerID != "ptn_b" {
				t.Fatalf("batch %+v", b)
			}
			if (b.ID != "") != tt.wantBatch || (tt.wantBatch && st.batch.ID != b.ID) {
				t.Fatalf("batch ID %q, applied %+v", b.ID, st.batch)
			}
		})
	}
	if _, err := Settle(context.Background(), &fakeSettlementStore{}, "bad/eco", false, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid ecosystem: %v, want ErrInvalid", err)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
