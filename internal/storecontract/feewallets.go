package storecontract

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/swapgate/swapgate/actors/engine"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// FeeWallets is a partner's fee wallets, one per ecosystem: the account
// endpoints' edits (edge.FeeWalletStore) and the quote path's lookup
// (engine.FeeWalletFinder), which sees every acknowledged change at once.
// An acknowledged write is durable: it is the wallet the next settlement
// pays.
type FeeWallets interface {
	edge.FeeWalletStore
	engine.FeeWalletFinder
}

const (
	walletA1 = "0x1111111111111111111111111111111111111111"
	walletA2 = "0x2222222222222222222222222222222222222222"
)

// walletOf is the lookup's answer for partner in eco, "" for none.
func walletOf(t testing.TB, s engine.FeeWalletFinder, partnerID, eco string) string {
	t.Helper()
	addr, ok, err := s.FeeWallet(context.Background(), partnerID, eco)
	mustNil(t, "fee wallet", err)
	if !ok {
		return ""
	}
	return addr
}

// walletsOf lists a partner's wallets as "eco=address" strings.
func walletsOf(t testing.TB, s edge.FeeWalletStore, partnerID string) string {
	t.Helper()
	ws, err := s.FeeWallets(context.Background(), partnerID)
	mustNil(t, "fee wallets", err)
	var out []string
	for _, w := range ws {
		if w.PartnerID != partnerID {
			t.Fatalf("%s's list holds %+v", partnerID, w)
		}
		out = append(out, w.Ecosystem+"="+w.Address)
	}
	return fmt.Sprint(out)
}

// RunFeeWallets holds a FeeWallets implementation to its contract.
func RunFeeWallets(t *testing.T, open Factory[FeeWallets]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[FeeWallets])
	}{
		{"put, list in canonical order, look up; other partners see nothing", func(t *testing.T, h *Handle[FeeWallets]) {
			mustNil(t, "put near", h.Store.PutFeeWallet(ctx, "ptn_a", "near", "acme.near"))
			mustNil(t, "put evm", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			if got := walletsOf(t, h.Store, "ptn_a"); got != "[evm="+walletA1+" near=acme.near]" {
				t.Fatalf("list %s", got)
			}
			if walletOf(t, h.Store, "ptn_a", "evm") != walletA1 || walletOf(t, h.Store, "ptn_a", "solana") != "" {
				t.Fatal("lookup disagrees with the list")
			}
			if walletsOf(t, h.Store, "ptn_ab") != "[]" || walletOf(t, h.Store, "ptn_ab", "evm") != "" {
				t.Fatal("another partner sees ptn_a's wallets")
			}
		}},
		{"a replacement keeps CreatedAt, moves UpdatedAt, and the lookup follows", func(t *testing.T, h *Handle[FeeWallets]) {
			mustNil(t, "put", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			if walletOf(t, h.Store, "ptn_a", "evm") != walletA1 { // fills any cache
				t.Fatal("first wallet not found")
			}
			first, _ := h.Store.FeeWallets(ctx, "ptn_a")
			mustNil(t, "replace", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA2))
			if got := walletOf(t, h.Store, "ptn_a", "evm"); got != walletA2 {
				t.Fatalf("lookup after replacement: %q", got)
			}
			ws, _ := h.Store.FeeWallets(ctx, "ptn_a")
			if len(ws) != 1 || !ws[0].CreatedAt.Equal(first[0].CreatedAt) || ws[0].UpdatedAt.Before(first[0].UpdatedAt) {
				t.Fatalf("after replacement %+v, first %+v", ws, first)
			}
		}},
		{"delete: gone from list and lookup; a missing one is ErrNotFound", func(t *testing.T, h *Handle[FeeWallets]) {
			mustNil(t, "put", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			_ = walletOf(t, h.Store, "ptn_a", "evm")
			mustNil(t, "delete", h.Store.DeleteFeeWallet(ctx, "ptn_a", "evm"))
			if walletOf(t, h.Store, "ptn_a", "evm") != "" || walletsOf(t, h.Store, "ptn_a") != "[]" {
				t.Fatal("a deleted wallet is still seen")
			}
			if err := h.Store.DeleteFeeWallet(ctx, "ptn_a", "evm"); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("second delete: %v, want ErrNotFound", err)
			}
		}},
		{"bad input is refused and writes nothing", func(t *testing.T, h *Handle[FeeWallets]) {
			for _, c := range []struct{ partner, eco, addr string }{{"ptn_a", "evm", ""}, {"ptn_a", "", walletA1}, {"", "evm", walletA1}, {"ptn_a", "e/x", walletA1}} {
				if err := h.Store.PutFeeWallet(ctx, c.partner, c.eco, c.addr); err == nil {
					t.Errorf("put %+v accepted", c)
				}
			}
			if walletsOf(t, h.Store, "ptn_a") != "[]" {
				t.Fatal("a refused put wrote a wallet")
			}
		}},
		{"an interrupted put changes nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[FeeWallets]) {
			mustNil(t, "put", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			Interrupt(t, h, func(ctx context.Context, s FeeWallets) error {
				return s.PutFeeWallet(ctx, "ptn_a", "evm", walletA2)
			}, func(t testing.TB, s FeeWallets) {
				if walletOf(t, s, "ptn_a", "evm") != walletA1 || walletsOf(t, s, "ptn_a") != "[evm="+walletA1+"]" {
					t.Fatal("an interrupted replacement changed the wallet")
				}
			}, func(t testing.TB, s FeeWallets) {
				if walletOf(t, s, "ptn_a", "evm") != walletA2 || walletsOf(t, s, "ptn_a") != "[evm="+walletA2+"]" {
					t.Fatal("the acknowledged wallet is not the one the store shows")
				}
			})
		}},
		{"an acknowledged delete survives a crash", func(t *testing.T, h *Handle[FeeWallets]) {
			mustNil(t, "put", h.Store.PutFeeWallet(ctx, "ptn_a", "evm", walletA1))
			Interrupt(t, h, func(ctx context.Context, s FeeWallets) error {
				return s.DeleteFeeWallet(ctx, "ptn_a", "evm")
			}, func(t testing.TB, s FeeWallets) {
				if walletOf(t, s, "ptn_a", "evm") != walletA1 {
					t.Fatal("an interrupted delete removed the wallet")
				}
			}, func(t testing.TB, s FeeWallets) {
				if walletOf(t, s, "ptn_a", "evm") != "" || walletsOf(t, s, "ptn_a") != "[]" {
					t.Fatal("the acknowledged delete is undone")
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
