package storecontract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
)

// Payouts is what on-chain settlement reads and writes (admin.PayoutStore),
// with the ledger that earns and the wallets that are paid. A plan is
// stored whole with its earnings out of the pending set, durably; a
// transfer finishes once, its earnings settled with it or pending again.
type Payouts interface {
	Settlement
	admin.PayoutStore
}

// usdcArb is a token the suite's earnings are paid in, on chain 42161.
const usdcArb = "0xaf88d065e77c8cc2239327c5edb3a432268e5831"

// tokenRows appends n pending evm earnings of partner in token on chain,
// each of amount base units and feeMicro.
func tokenRows(t testing.TB, s Ledger, partnerID string, chain uint64, token string, n int, amount string, feeMicro int64, at time.Time) {
	t.Helper()
	as := make([]*account.Activity, n)
	for i := range as {
		a := feeQuote(partnerID, fmt.Sprintf("%s-%d-%d-%d", partnerID, chain, at.UnixNano(), i), "evm", feeMicro, at.Add(time.Duration(i)*time.Second))
		a.ToChain, a.Earning.FeeToken, a.Earning.FeeAmount = chain, token, amount
		as[i] = a
	}
	if _, err := record(context.Background(), s, store.Synced, as...); err != nil {
		t.Fatal(err)
	}
}

// fakeSender is a transaction manager that remembers what it was handed,
// once per transfer (as intents are once per key), and signs on chains.
type fakeSender struct {
	mu     sync.Mutex
	chains map[uint64]bool
	sent   map[string]*account.Transfer
	calls  int
	fail   error
}

func newFakeSender(chains ...uint64) *fakeSender {
	f := &fakeSender{chains: map[uint64]bool{}, sent: map[string]*account.Transfer{}}
	for _, c := range chains {
		f.chains[c] = true
	}
	return f
}

func (f *fakeSender) CanSign(c uint64) bool { return f.chains[c] }

func (f *fakeSender) SendPayout(_ context.Context, t *account.Transfer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		return f.fail
	}
	if _, _, _, _, err := t.Call(); err != nil {
		return err
	}
	if _, ok := f.sent[t.ID]; !ok {
		c := *t
		f.sent[t.ID] = &c
	}
	return nil
}

func (f *fakeSender) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.sent {
		out = append(out, id)
	}
	return out
}

func transfersOf(t testing.TB, s admin.PayoutStore, state string) []*account.Transfer {
	t.Helper()
	ts, err := s.Payouts(context.Background(), "evm", state)
	mustNil(t, "payouts", err)
	return ts
}

// RunPayouts holds a Payouts implementation to its contract, through the
// run and hooks that use it (admin.SettlePayouts, admin.FinishTransfer,
// admin.RecordTransfer) and directly.
func RunPayouts(t *testing.T, open Factory[Payouts]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Payouts])
	}{
		{"a run plans one transfer per partner, chain and token, sends it once, and settles earnings only when it is confirmed", func(t *testing.T, h *Handle[Payouts]) {
			s := h.Store
			tokenRows(t, s, "ptn_a", 42161, usdcArb, 2, "1500000", 1_500_000, t0)
			tokenRows(t, s, "ptn_a", 8453, "0x0000000000000000000000000000000000000000", 1, "1000000000000000", 3_000_000, t0)
			tokenRows(t, s, "ptn_b", 42161, usdcArb, 1, "7", 7, t0)
			tokenRows(t, s, "ptn_c", 42161, usdcArb, 1, "9", 9, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_b", "evm", walletA2))
			send := newFakeSender(42161, 8453)
			dry, err := admin.SettlePayouts(ctx, s, send, "evm", true, t0.Add(time.Hour))
			if err != nil || dry.ID != "" || len(dry.Transfers) != 3 || send.calls != 0 || len(transfersOf(t, s, "")) != 0 {
				t.Fatalf("dry run %+v %v (sent %d)", dry, err, send.calls)
			}
			b, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(2*time.Hour))
			if err != nil || b.ID == "" || len(b.Transfers) != 3 || len(b.Skipped) != 1 || b.Skipped[0].PartnerID != "ptn_c" {
				t.Fatalf("run %+v %v", b, err)
			}
			if got := b.Transfers[1]; got.PartnerID != "ptn_a" || got.ChainID != 42161 || got.Amount != "3000000" || got.RowCount != 2 || got.Wallet != walletA1 || got.State != account.TransferPlanned {
				t.Fatalf("transfer %+v", got)
			}
			if len(send.ids()) != 3 {
				t.Fatalf("sent %v", send.ids())
			}
			// Planned earnings are neither pending for a run nor settled.
			if p, st := pendingOf(t, s, "ptn_a"), settledOf(t, s, "ptn_a"); p != "[evm=6000000/3]" || st != "[]" {
				t.Fatalf("planned: pending %s settled %s", p, st)
			}
			again, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(3*time.Hour))
			if err != nil || again.ID != "" || len(again.Transfers) != 0 || len(send.ids()) != 3 {
				t.Fatalf("second run %+v %v, sent %v", again, err, send.ids())
			}
			hash := "0x" + strings.Repeat("ab", 32)
			tr, err := admin.FinishTransfer(ctx, s, b.Transfers[1].ID, true, hash, "", t0.Add(4*time.Hour))
			if err != nil || tr.State != account.TransferSettled || tr.TxHash != hash {
				t.Fatalf("finish %+v %v", tr, err)
			}
			// The hook runs again: nothing changes.
			if tr, err := admin.FinishTransfer(ctx, s, b.Transfers[1].ID, true, hash, "", t0.Add(5*time.Hour)); err != nil || !tr.UpdatedAt.Equal(t0.Add(4*time.Hour)) {
				t.Fatalf("finish again %+v %v", tr, err)
			}
			e, err := s.Earnings(ctx, "ptn_a")
			mustNil(t, "earnings", err)
			if len(e.Settled) != 1 || e.Settled[0].ChainID != 42161 || e.Settled[0].TxHash != hash || e.Settled[0].RowCount != 2 || groups(e.Pending) != "[evm=3000000/1]" {
				t.Fatalf("earnings after the transfer settled %+v", e)
			}
			if _, err := admin.FinishTransfer(ctx, s, b.Transfers[1].ID, false, "", "late", t0.Add(5*time.Hour)); !errors.Is(err, account.ErrTransferState) {
				t.Fatalf("a settled transfer failed: %v", err)
			}
		}},
		{"a failed transfer puts its earnings back for the next run, which reports it", func(t *testing.T, h *Handle[Payouts]) {
			s := h.Store
			tokenRows(t, s, "ptn_a", 42161, usdcArb, 2, "5", 5, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			send := newFakeSender(42161)
			b, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(time.Hour))
			mustNil(t, "run", err)
			if _, err := admin.FinishTransfer(ctx, s, b.Transfers[0].ID, false, "", "execution reverted: balance too low", t0.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			next, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(3*time.Hour))
			if err != nil || len(next.Transfers) != 1 || next.Transfers[0].ID == b.Transfers[0].ID || next.Transfers[0].Amount != "10" ||
				len(next.Failed) != 1 || next.Failed[0].Reason != "execution reverted: balance too low" {
				t.Fatalf("run after a failure %+v %v", next, err)
			}
			if fs := transfersOf(t, s, account.TransferFailed); len(fs) != 1 || fs[0].ID != b.Transfers[0].ID {
				t.Fatalf("failed transfers %+v", fs)
			}
		}},
		{"planned transfers a killed run left unsent are sent by the next run", func(t *testing.T, h *Handle[Payouts]) {
			s := h.Store
			tokenRows(t, s, "ptn_a", 42161, usdcArb, 1, "5", 5, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			send := newFakeSender(42161)
			send.fail = errors.New("killed")
			if _, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(time.Hour)); err == nil {
				t.Fatal("a run whose sends failed reported success")
			}
			send.fail = nil
			b, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(2*time.Hour))
			if err != nil || len(b.Transfers) != 0 || len(send.ids()) != 1 || len(transfersOf(t, s, account.TransferPlanned)) != 1 {
				t.Fatalf("next run %+v %v sent %v", b, err, send.ids())
			}
		}},
		{"a chain the manager cannot sign on is a manual transfer, recorded with a valid transaction id", func(t *testing.T, h *Handle[Payouts]) {
			s := h.Store
			tokenRows(t, s, "ptn_a", 10, "0x0000000000000000000000000000000000000000", 1, "5", 5, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			send := newFakeSender(42161)
			b, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(time.Hour))
			if err != nil || len(b.Transfers) != 1 || b.Transfers[0].State != account.TransferManual || len(send.ids()) != 0 {
				t.Fatalf("run %+v %v", b, err)
			}
			id := b.Transfers[0].ID
			for _, bad := range []struct{ id, tx string }{{id, "0x12"}, {id, ""}, {"pay_nope", "0x" + strings.Repeat("1", 64)}} {
				if _, err := admin.RecordTransfer(ctx, s, bad.id, bad.tx, t0); !errors.Is(err, admin.ErrInvalid) {
					t.Fatalf("record %s %q: %v, want ErrInvalid", bad.id, bad.tx, err)
				}
			}
			if _, err := admin.RecordTransfer(ctx, s, "pay_"+strings.Repeat("0", 24), "0x"+strings.Repeat("1", 64), t0); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("record an unknown payout: %v", err)
			}
			hash := "0x" + strings.Repeat("1", 64)
			tr, err := admin.RecordTransfer(ctx, s, id, hash, t0.Add(2*time.Hour))
			if err != nil || tr.State != account.TransferSettled {
				t.Fatalf("record %+v %v", tr, err)
			}
			if st := settledOf(t, s, "ptn_a"); st != "[evm=5/1]" {
				t.Fatalf("settled %s", st)
			}
		}},
		{"concurrent runs plan every earning once", func(t *testing.T, h *Handle[Payouts]) {
			s := h.Store
			tokenRows(t, s, "ptn_a", 42161, usdcArb, 20, "1", 1, t0)
			mustNil(t, "wallet", s.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			send := newFakeSender(42161)
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := admin.SettlePayouts(ctx, s, send, "evm", false, t0.Add(time.Duration(i+1)*time.Hour)); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			rows := 0
			for _, tr := range transfersOf(t, s, "") {
				rows += tr.RowCount
			}
			if rows != 20 || pendingOf(t, s, "ptn_a") != "[evm=20/20]" {
				t.Fatalf("transfers hold %d rows, want 20", rows)
			}
		}},
		{"an interrupted plan plans nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Payouts]) {
			tokenRows(t, h.Store, "ptn_a", 42161, usdcArb, 3, "1", 1, t0)
			mustNil(t, "wallet", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			s := Interrupt(t, h, func(ctx context.Context, s Payouts) error {
				_, err := admin.SettlePayouts(ctx, s, nil, "evm", false, t0.Add(time.Hour))
				return err
			}, func(t testing.TB, s Payouts) {
				if ts := transfersOf(t, s, ""); len(ts) != 0 {
					t.Fatalf("an interrupted run planned %+v", ts)
				}
			}, func(t testing.TB, s Payouts) {
				if ts := transfersOf(t, s, account.TransferManual); len(ts) != 1 || ts[0].RowCount != 3 {
					t.Fatalf("planned %+v", ts)
				}
			})
			b, err := admin.SettlePayouts(ctx, s, nil, "evm", false, t0.Add(2*time.Hour))
			if err != nil || len(b.Transfers) != 0 {
				t.Fatalf("a run after the crash %+v %v", b, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t)
			tc.run(t, &h)
		})
	}
}
