package pebblestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// appendRows writes n pending rows of fee feeMicro for partner in eco.
func appendRows(t *testing.T, s *Store, partner, eco string, n int, feeMicro int64, at time.Time) {
	t.Helper()
	rows := make([]*account.Activity, n)
	for i := range rows {
		rows[i] = feeQuote(partner, fmt.Sprintf("%s-%s-%d-%d", partner, eco, at.UnixNano(), i), eco, feeMicro,
			at.Add(time.Duration(i)*time.Second))
	}
	if _, err := recordQuotes(context.Background(), s, rows); err != nil {
		t.Fatal(err)
	}
}

// rowsOf returns a partner's records that carry an earning.
func rowsOf(t *testing.T, s *Store, partner string) []*account.Activity {
	t.Helper()
	var out []*account.Activity
	if err := s.EachActivity(context.Background(), partner, time.Time{}, time.Time{}, func(a *account.Activity) bool {
		if a.Earning != nil {
			out = append(out, a)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSettle(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const (
		walletA1 = "0x1111111111111111111111111111111111111111"
		walletA2 = "0x2222222222222222222222222222222222222222"
	)
	appendRows(t, s, "ptn_a", "evm", 3, 1_250_000, t0)
	appendRows(t, s, "ptn_b", "evm", 2, 500_000, t0) // no wallet yet
	appendRows(t, s, "ptn_a", "solana", 1, 9_000_000, t0)
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutFeeWallet(ctx, "ptn_a", "solana", "So11111111111111111111111111111111111111112"); err != nil {
		t.Fatal(err)
	}

	// A dry run reports and writes nothing.
	dry, err := admin.Settle(ctx, s, "evm", true, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if dry.ID != "" || !dry.DryRun || len(dry.Payouts) != 1 || dry.Payouts[0] != (account.Payout{PartnerID: "ptn_a", Wallet: walletA1, RowCount: 3, TotalMicroUSD: 3_750_000}) ||
		len(dry.Skipped) != 1 || dry.Skipped[0] != (account.Unpaid{PartnerID: "ptn_b", RowCount: 2, TotalMicroUSD: 1_000_000}) {
		t.Fatalf("dry run %+v", dry)
	}
	for _, r := range rowsOf(t, s, "ptn_a") {
		if r.Earning.State != account.EarningPending {
			t.Fatalf("dry run settled %+v", r)
		}
	}
	if b, _ := s.SettlementBatches(ctx, "evm"); len(b) != 0 {
		t.Fatalf("dry run recorded %+v", b)
	}

	// First run: A paid to its current wallet, B skipped, Solana untouched.
	t1 := t0.Add(2 * time.Hour)
	first, err := admin.Settle(ctx, s, "evm", false, t1)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || len(first.Payouts) != 1 || first.Payouts[0] != (account.Payout{PartnerID: "ptn_a", Wallet: walletA1, RowCount: 3, TotalMicroUSD: 3_750_000}) {
		t.Fatalf("first run %+v", first)
	}
	for _, r := range rowsOf(t, s, "ptn_a") {
		switch r.Earning.Ecosystem {
		case "evm":
			if r.Earning.State != account.EarningSettled || r.Earning.SettledTo != walletA1 || r.Earning.SettledBatch != first.ID || !r.Earning.SettledAt.Equal(t1) {
				t.Fatalf("evm row after first run %+v", r)
			}
		case "solana":
			if r.Earning.State != account.EarningPending {
				t.Fatalf("solana row settled by an evm run: %+v", r)
			}
		}
	}
	for _, r := range rowsOf(t, s, "ptn_b") {
		if r.Earning.State != account.EarningPending {
			t.Fatalf("partner without wallet settled: %+v", r)
		}
	}

	// Second run: nothing new, nothing recorded.
	again, err := admin.Settle(ctx, s, "evm", false, t1.Add(time.Minute))
	if err != nil || again.ID != "" || len(again.Payouts) != 0 || len(again.Skipped) != 1 {
		t.Fatalf("second run %+v %v", again, err)
	}

	// The wallet changes; new rows settle to the new wallet, old ones keep
	// the old. B registers and is paid its waiting rows.
	if err := s.PutFeeWallet(ctx, "ptn_a", "evm", walletA2); err != nil {
		t.Fatal(err)
	}
	if err := s.PutFeeWallet(ctx, "ptn_b", "evm", "0x3333333333333333333333333333333333333333"); err != nil {
		t.Fatal(err)
	}
	appendRows(t, s, "ptn_a", "evm", 1, 2_000_000, t0.Add(3*time.Hour))
	third, err := admin.Settle(ctx, s, "evm", false, t0.Add(4*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Payouts) != 2 || third.Payouts[0] != (account.Payout{PartnerID: "ptn_a", Wallet: walletA2, RowCount: 1, TotalMicroUSD: 2_000_000}) ||
		third.Payouts[1].PartnerID != "ptn_b" || third.Payouts[1].RowCount != 2 || len(third.Skipped) != 0 {
		t.Fatalf("third run %+v", third)
	}
	paidTo := map[string]int{}
	for _, r := range rowsOf(t, s, "ptn_a") {
		if r.Earning.Ecosystem == "evm" {
			paidTo[r.Earning.SettledTo]++
		}
	}
	if paidTo[walletA1] != 3 || paidTo[walletA2] != 1 {
		t.Fatalf("rows by wallet %v", paidTo)
	}
	batches, err := s.SettlementBatches(ctx, "evm")
	if err != nil || len(batches) != 2 || batches[0].ID != first.ID || batches[1].ID != third.ID {
		t.Fatalf("batches %+v %v", batches, err)
	}

	// Earnings reflect it; B's view never contains A's rows.
	e, err := s.Earnings(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	wantSettled := []account.EarningsGroup{{Ecosystem: "evm", RowCount: 4, TotalMicroUSD: 5_750_000}}
	wantPending := []account.EarningsGroup{{Ecosystem: "solana", RowCount: 1, TotalMicroUSD: 9_000_000}}
	if fmt.Sprint(e.Settled) != fmt.Sprint(wantSettled) || fmt.Sprint(e.Pending) != fmt.Sprint(wantPending) {
		t.Fatalf("earnings of A %+v", e)
	}
	e, err = s.Earnings(ctx, "ptn_b")
	if err != nil || len(e.Pending) != 0 || fmt.Sprint(e.Settled) != fmt.Sprint([]account.EarningsGroup{{Ecosystem: "evm", RowCount: 2, TotalMicroUSD: 1_000_000}}) {
		t.Fatalf("earnings of B %+v %v", e, err)
	}
}

func TestSettleDeletedWalletPauses(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, nil)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := s.PutFeeWallet(ctx, "ptn_a", "near", "acme.near"); err != nil {
		t.Fatal(err)
	}
	appendRows(t, s, "ptn_a", "near", 1, 1, t0)
	if _, err := admin.Settle(ctx, s, "near", false, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteFeeWallet(ctx, "ptn_a", "near"); err != nil {
		t.Fatal(err)
	}
	appendRows(t, s, "ptn_a", "near", 1, 1, t0.Add(2*time.Hour))
	b, err := admin.Settle(ctx, s, "near", false, t0.Add(3*time.Hour))
	if err != nil || len(b.Payouts) != 0 || len(b.Skipped) != 1 {
		t.Fatalf("settle after delete %+v %v", b, err)
	}
	rows := rowsOf(t, s, "ptn_a")
	if rows[0].Earning.State != account.EarningSettled || rows[0].Earning.SettledTo != "acme.near" || rows[1].Earning.State != account.EarningPending {
		t.Fatalf("rows %+v %+v", rows[0], rows[1])
	}
	if _, err := admin.Settle(ctx, s, "bad/eco", false, t0); err == nil {
		t.Fatal("invalid ecosystem accepted")
	}
}
