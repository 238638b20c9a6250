package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// What the contract suite cannot see from outside: a paid record's apply
// writes its earning alone, so that a change made to the line since the
// run read it (a tracker's status) is kept; and the store's two ways to
// settle, Settle in one transaction and admin.Settle through
// ApplySettlement, never pay one earning twice when they race.
func TestApplySettlementWritesTheEarningAlone(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := recordQuotes(ctx, s, store.Synced, []*account.Activity{feeQuote("ptn_a", "qt_1", "evm", 7, at)}); err != nil {
		t.Fatal(err)
	}
	var read []*account.Activity
	if err := s.PendingEarnings(ctx, "evm", func(a *account.Activity) error { read = append(read, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(read) != 1 {
		t.Fatalf("pending %d, want 1", len(read))
	}
	run := account.NewSettlement("evm", "stl_1", at.Add(time.Hour), map[string]string{"ptn_a": "0x1111111111111111111111111111111111111111"})
	if run.Decide(read[0]) != account.Pay {
		t.Fatal("the run does not pay the earning")
	}
	// The run's copy is stale in everything but the earning.
	read[0].Status = "STALE"
	if err := s.ApplySettlement(ctx, "evm", run.Batch(false), read, nil); err != nil {
		t.Fatal(err)
	}
	var got *account.Activity
	if err := s.EachActivity(ctx, "ptn_a", time.Time{}, at.Add(time.Hour), func(a *account.Activity) bool { got = a; return true }); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Status != account.ActivityQuoted || got.Earning == nil || got.Earning.State != account.EarningSettled {
		t.Fatalf("after the apply %+v (earning %+v)", got, got.Earning)
	}
	if err := s.ApplySettlement(ctx, "evm", run.Batch(false), read, nil); !errors.Is(err, account.ErrSettlementConflict) {
		t.Fatalf("a second apply: %v, want ErrSettlementConflict", err)
	}
}

func TestSettleAndAdminSettleRacePayOnce(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var quotes []*account.Activity
	for i := range 200 {
		quotes = append(quotes, feeQuote("ptn_a", fmt.Sprintf("qt_%03d", i), "evm", 1, at.Add(time.Duration(i))))
	}
	if _, err := recordQuotes(ctx, a, store.Synced, quotes); err != nil {
		t.Fatal(err)
	}
	if err := a.PutFeeWallet(ctx, "ptn_a", "evm", "0x1111111111111111111111111111111111111111"); err != nil {
		t.Fatal(err)
	}
	type result struct {
		b   *account.SettlementBatch
		err error
	}
	done := make(chan result, 2)
	go func() {
		bt, err := a.Settle(ctx, "evm", false, at.Add(time.Hour))
		done <- result{bt, err}
	}()
	go func() {
		bt, err := admin.Settle(ctx, b, "evm", false, at.Add(time.Hour))
		done <- result{bt, err}
	}()
	paid := 0
	for range 2 {
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, p := range r.b.Payouts {
			paid += p.RowCount
		}
	}
	if paid != len(quotes) {
		t.Fatalf("the two runs paid %d rows, want each of the %d once", paid, len(quotes))
	}
	left := 0
	if err := a.PendingEarnings(ctx, "evm", func(*account.Activity) error { left++; return nil }); err != nil || left != 0 {
		t.Fatalf("%d still pending (%v)", left, err)
	}
}
