package storecontract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Settlement is what a settlement run reads and applies
// (admin.SettlementStore), with what the suite needs around it: the ledger
// that earns (Ledger), the wallets that are paid (edge.FeeWalletStore) and
// the batches recorded. A run's decisions are applied whole or not at
// all, durably, and never pay one earning twice.
type Settlement interface {
	admin.SettlementStore
	Ledger
	edge.FeeWalletStore
	// SettlementBatches returns the recorded batches of an ecosystem,
	// oldest first.
	SettlementBatches(ctx context.Context, ecosystem string) ([]account.SettlementBatch, error)
}

// rows appends n pending earnings of feeMicro for partner in eco.
func rows(t testing.TB, s Ledger, partnerID, eco string, n int, feeMicro int64, at time.Time) {
	t.Helper()
	as := make([]*account.Activity, n)
	for i := range as {
		as[i] = feeQuote(partnerID, fmt.Sprintf("%s-%s-%d-%d", partnerID, eco, at.UnixNano(), i), eco, feeMicro, at.Add(time.Duration(i)*time.Second))
	}
	if _, err := record(context.Background(), s, store.Synced, as...); err != nil {
		t.Fatal(err)
	}
}

// batchIDs lists the recorded batches of eco.
func batchIDs(t testing.TB, s Settlement, eco string) []string {
	t.Helper()
	bs, err := s.SettlementBatches(context.Background(), eco)
	mustNil(t, "settlement batches", err)
	var ids []string
	for _, b := range bs {
		ids = append(ids, b.ID)
	}
	return ids
}

// RunSettlement holds a Settlement implementation to its contract, through
// the run that uses it (admin.Settle) and directly.
func RunSettlement(t *testing.T, open Factory[Settlement]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Settlement])
	}{
		{"runs pay the wallet of the moment, keep the walletless pending, settle nothing twice", func(t *testing.T, h *Handle[Settlement]) {
			s := h.Store
			rows(t, s, "ptn_a", "evm", 3, 1_250_000, t0)
			rows(t, s, "ptn_b", "evm", 2, 500_000, t0)
			rows(t, s, "ptn_a", "solana", 1, 9_000_000, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			dry, err := admin.Settle(ctx, s, "evm", true, t0.Add(time.Hour))
			if err != nil || dry.ID != "" || len(dry.Payouts) != 1 || dry.Payouts[0].TotalMicroUSD != 3_750_000 || len(dry.Skipped) != 1 {
				t.Fatalf("dry run %+v %v", dry, err)
			}
			if pendingOf(t, s, "ptn_a") != "[evm=3750000/3 solana=9000000/1]" || len(batchIDs(t, s, "evm")) != 0 {
				t.Fatal("a dry run wrote")
			}
			first, err := admin.Settle(ctx, s, "evm", false, t0.Add(2*time.Hour))
			if err != nil || first.ID == "" || len(first.Payouts) != 1 || first.Payouts[0] != (account.Payout{PartnerID: "ptn_a", Wallet: walletA1, RowCount: 3, TotalMicroUSD: 3_750_000}) {
				t.Fatalf("first run %+v %v", first, err)
			}
			if p, st := pendingOf(t, s, "ptn_a"), settledOf(t, s, "ptn_a"); p != "[solana=9000000/1]" || st != "[evm=3750000/3]" {
				t.Fatalf("after the first run: pending %s settled %s", p, st)
			}
			again, err := admin.Settle(ctx, s, "evm", false, t0.Add(3*time.Hour))
			if err != nil || again.ID != "" || len(again.Payouts) != 0 || len(again.Skipped) != 1 {
				t.Fatalf("second run %+v %v", again, err)
			}
			// A new wallet pays only what came after; a registered wallet
			// pays what waited for it.
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA2))
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_b", "evm", walletA1))
			rows(t, s, "ptn_a", "evm", 1, 2_000_000, t0.Add(4*time.Hour))
			third, err := admin.Settle(ctx, s, "evm", false, t0.Add(5*time.Hour))
			if err != nil || len(third.Payouts) != 2 || third.Payouts[0].Wallet != walletA2 || third.Payouts[0].RowCount != 1 || third.Payouts[1].PartnerID != "ptn_b" {
				t.Fatalf("third run %+v %v", third, err)
			}
			if ids := batchIDs(t, s, "evm"); fmt.Sprint(ids) != fmt.Sprint([]string{first.ID, third.ID}) {
				t.Fatalf("batches %v", ids)
			}
			// A settled quote appended again stays settled.
			if w, err := record(ctx, s, store.Synced, feeQuote("ptn_a", fmt.Sprintf("ptn_a-evm-%d-0", t0.UnixNano()), "evm", 1_250_000, t0)); err != nil || w[0] {
				t.Fatalf("a settled quote was recorded again: %v %v", w, err)
			}
			if p := pendingOf(t, s, "ptn_a"); p != "[solana=9000000/1]" {
				t.Fatalf("pending after a retried quote: %s", p)
			}
		}},
		{"a deleted wallet pauses payment, and what was paid keeps its wallet", func(t *testing.T, h *Handle[Settlement]) {
			s := h.Store
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "near", "acme.near"))
			rows(t, s, "ptn_a", "near", 1, 1, t0)
			_, err := admin.Settle(ctx, s, "near", false, t0.Add(time.Hour))
			mustNil(t, "settle", err)
			mustNil(t, "delete wallet", s.DeleteFeeWallet(ctx, "ptn_a", "near"))
			rows(t, s, "ptn_a", "near", 1, 1, t0.Add(2*time.Hour))
			b, err := admin.Settle(ctx, s, "near", false, t0.Add(3*time.Hour))
			if err != nil || len(b.Payouts) != 0 || len(b.Skipped) != 1 || b.ID != "" {
				t.Fatalf("settle after the delete %+v %v", b, err)
			}
			if p, st := pendingOf(t, s, "ptn_a"), settledOf(t, s, "ptn_a"); p != "[near=1/1]" || st != "[near=1/1]" {
				t.Fatalf("pending %s settled %s", p, st)
			}
			if _, err := admin.Settle(ctx, s, "bad/eco", false, t0); err == nil {
				t.Fatal("an invalid ecosystem was settled")
			}
		}},
		{"decisions on earnings no longer pending are refused whole", func(t *testing.T, h *Handle[Settlement]) {
			s := h.Store
			rows(t, s, "ptn_a", "evm", 2, 100, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			var read []*account.Activity
			mustNil(t, "pending", s.PendingEarnings(ctx, "evm", func(a *account.Activity) error { read = append(read, a); return nil }))
			if len(read) != 2 {
				t.Fatalf("%d pending earnings read, want 2", len(read))
			}
			// Another run pays the first earning meanwhile.
			other := account.NewSettlement("evm", "stl_other", t0.Add(time.Hour), map[string]string{"ptn_a": walletA1})
			first := *read[0]
			e := *first.Earning
			first.Earning = &e
			if other.Decide(&first) != account.Pay {
				t.Fatal("the other run does not pay")
			}
			mustNil(t, "the other run", s.ApplySettlement(ctx, "evm", other.Batch(false), []*account.Activity{&first}, nil))
			// This run decided both; applying it must pay neither.
			run := account.NewSettlement("evm", "stl_late", t0.Add(2*time.Hour), map[string]string{"ptn_a": walletA2})
			for _, a := range read {
				run.Decide(a)
			}
			err := s.ApplySettlement(ctx, "evm", run.Batch(false), read, nil)
			if !errors.Is(err, account.ErrSettlementConflict) {
				t.Fatalf("apply over a settled earning: %v, want ErrSettlementConflict", err)
			}
			if p, st := pendingOf(t, s, "ptn_a"), settledOf(t, s, "ptn_a"); p != "[evm=100/1]" || st != "[evm=100/1]" {
				t.Fatalf("a refused apply changed earnings: pending %s settled %s", p, st)
			}
			if ids := batchIDs(t, s, "evm"); fmt.Sprint(ids) != "[stl_other]" {
				t.Fatalf("batches after a refused apply %v", ids)
			}
		}},
		{"concurrent runs pay every earning once", func(t *testing.T, h *Handle[Settlement]) {
			s := h.Store
			rows(t, s, "ptn_a", "evm", 20, 10, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			var wg sync.WaitGroup
			paid := make([]int, 4)
			for i := range paid {
				wg.Add(1)
				go func() {
					defer wg.Done()
					b, err := admin.Settle(ctx, s, "evm", false, t0.Add(time.Duration(i+1)*time.Hour))
					if err != nil {
						t.Error(err)
						return
					}
					for _, p := range b.Payouts {
						paid[i] += p.RowCount
					}
				}()
			}
			wg.Wait()
			total := 0
			for _, n := range paid {
				total += n
			}
			if total != 20 || pendingOf(t, s, "ptn_a") != "[]" || settledOf(t, s, "ptn_a") != "[evm=200/20]" {
				t.Fatalf("runs paid %v rows (want 20 in all), settled %s", paid, settledOf(t, s, "ptn_a"))
			}
		}},
		{"an interrupted run pays nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Settlement]) {
			rows(t, h.Store, "ptn_a", "evm", 3, 10, t0)
			rows(t, h.Store, "ptn_b", "evm", 1, 10, t0)
			mustNil(t, "wallet", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			var id string
			Interrupt(t, h, func(ctx context.Context, s Settlement) error {
				b, err := admin.Settle(ctx, s, "evm", false, t0.Add(time.Hour))
				if err == nil {
					id = b.ID
				}
				return err
			}, func(t testing.TB, s Settlement) {
				if p := pendingOf(t, s, "ptn_a"); p != "[evm=30/3]" || len(batchIDs(t, s, "evm")) != 0 {
					t.Fatalf("an interrupted run left pending %s, batches %v", p, batchIDs(t, s, "evm"))
				}
			}, func(t testing.TB, s Settlement) {
				if p, st := pendingOf(t, s, "ptn_a"), settledOf(t, s, "ptn_a"); p != "[]" || st != "[evm=30/3]" || pendingOf(t, s, "ptn_b") != "[evm=10/1]" {
					t.Fatalf("after the run: pending %s settled %s", p, st)
				}
				if ids := batchIDs(t, s, "evm"); fmt.Sprint(ids) != fmt.Sprint([]string{id}) {
					t.Fatalf("batches %v, want [%s]", ids, id)
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
