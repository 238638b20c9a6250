package storecontract

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// Accounts is the partners and their API keys' digests: the operator's
// edits (admin.PartnerStore) and the edge's authentication by digest
// (edge.PartnerFinder). Every acknowledged write is durable, and a key
// rotation retires the old digest in the same write that admits the new.
type Accounts interface {
	admin.PartnerStore
	edge.PartnerFinder
}

func digest(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// partner is a new partner with API key key.
func partner(id, key string) *account.Partner {
	return &account.Partner{
		ID: id, Name: "Acme " + id, Email: "ops@acme.example",
		FeeTier:           account.FeeTier{SwapFeeBps: account.AnonymousSwapFeeBps, OnrampFeeBps: account.AnonymousOnrampFeeBps},
		Limits:            account.Limits{HeavyPerMin: account.DefaultHeavyPerMin, ReadPerMin: account.DefaultReadPerMin},
		EnabledEcosystems: account.Ecosystems(),
		KeyDigest:         digest(key),
		WebhooksEnabled:   true,
	}
}

// byDigest returns the ID of the partner whose key is key, "" for none.
func byDigest(t testing.TB, s edge.PartnerFinder, key string) string {
	t.Helper()
	p, err := s.PartnerByKeyDigest(context.Background(), digest(key))
	if errors.Is(err, account.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatalf("partner by digest: %v", err)
	}
	return p.ID
}

func mustNil(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// RunAccounts holds an Accounts implementation to its contract.
func RunAccounts(t *testing.T, open Factory[Accounts]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Accounts])
	}{
		{"create stores the partner and its digest, and fills ID and times", func(t *testing.T, h *Handle[Accounts]) {
			p := partner("", "key-a")
			mustNil(t, "create", h.Store.CreatePartner(ctx, p))
			if p.ID == "" || p.CreatedAt.IsZero() || !p.UpdatedAt.Equal(p.CreatedAt) {
				t.Fatalf("created %+v: want a generated ID and CreatedAt = UpdatedAt", p)
			}
			if got := byDigest(t, h.Store, "key-a"); got != p.ID {
				t.Fatalf("by digest: %q, want %q", got, p.ID)
			}
			list, err := h.Store.ListPartners(ctx)
			if err != nil || len(list) != 1 || list[0].ID != p.ID || list[0].Name != p.Name || list[0].KeyDigest != p.KeyDigest {
				t.Fatalf("list %+v %v", list, err)
			}
		}},
		{"a second partner with the same ID or key digest is refused", func(t *testing.T, h *Handle[Accounts]) {
			mustNil(t, "create", h.Store.CreatePartner(ctx, partner("ptn_a", "key-a")))
			for _, p := range []*account.Partner{partner("ptn_a", "key-other"), partner("ptn_b", "key-a")} {
				if err := h.Store.CreatePartner(ctx, p); !errors.Is(err, account.ErrExists) {
					t.Errorf("create %s with key of digest %x: %v, want ErrExists", p.ID, p.KeyDigest[:4], err)
				}
			}
			if got := byDigest(t, h.Store, "key-other"); got != "" {
				t.Fatalf("a refused partner's digest authenticates %q", got)
			}
			if list, err := h.Store.ListPartners(ctx); err != nil || len(list) != 1 {
				t.Fatalf("list after refusals: %d partners, %v", len(list), err)
			}
		}},
		{"list is ordered by ID", func(t *testing.T, h *Handle[Accounts]) {
			for _, id := range []string{"ptn_c", "ptn_a", "ptn_b"} {
				mustNil(t, "create", h.Store.CreatePartner(ctx, partner(id, "key-"+id)))
			}
			list, err := h.Store.ListPartners(ctx)
			mustNil(t, "list", err)
			var ids []string
			for _, p := range list {
				ids = append(ids, p.ID)
			}
			if fmt.Sprint(ids) != "[ptn_a ptn_b ptn_c]" {
				t.Fatalf("list order %v", ids)
			}
		}},
		{"rotation retires the old digest as it admits the new", func(t *testing.T, h *Handle[Accounts]) {
			mustNil(t, "create", h.Store.CreatePartner(ctx, partner("ptn_a", "old")))
			got, err := h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error {
				p.KeyDigest = digest("new")
				return nil
			})
			if err != nil || got.KeyDigest != digest("new") || got.UpdatedAt.Before(got.CreatedAt) {
				t.Fatalf("rotate: %+v %v", got, err)
			}
			if byDigest(t, h.Store, "old") != "" || byDigest(t, h.Store, "new") != "ptn_a" {
				t.Fatal("after rotation the old key still works or the new one does not")
			}
		}},
		{"an update refused by fn or of a missing partner changes nothing", func(t *testing.T, h *Handle[Accounts]) {
			mustNil(t, "create", h.Store.CreatePartner(ctx, partner("ptn_a", "key-a")))
			refused := errors.New("refused")
			_, err := h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error {
				p.Disabled, p.KeyDigest = true, digest("other")
				return refused
			})
			if !errors.Is(err, refused) {
				t.Fatalf("update refused by fn: %v", err)
			}
			list, _ := h.Store.ListPartners(ctx)
			if len(list) != 1 || list[0].Disabled || byDigest(t, h.Store, "key-a") != "ptn_a" || byDigest(t, h.Store, "other") != "" {
				t.Fatalf("a refused update left %+v", list)
			}
			if _, err := h.Store.UpdatePartner(ctx, "ptn_zz", func(*account.Partner) error { return nil }); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("update of a missing partner: %v, want ErrNotFound", err)
			}
		}},
		{"allowedOrigins are kept by create and update, read by every lookup, and cleared to none", func(t *testing.T, h *Handle[Accounts]) {
			p := partner("ptn_a", "key-a")
			p.AllowedOrigins = []string{"https://app.example", "http://localhost:5173"}
			mustNil(t, "create", h.Store.CreatePartner(ctx, p))
			want := fmt.Sprint(p.AllowedOrigins)
			got, err := h.Store.PartnerByKeyDigest(ctx, digest("key-a"))
			if err != nil || fmt.Sprint(got.AllowedOrigins) != want {
				t.Fatalf("by digest after create: %v %v, want %s", got, err, want)
			}
			// An update of another field keeps them.
			_, err = h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error { p.SwapFeeBps = 10; return nil })
			mustNil(t, "set fees", err)
			list, err := h.Store.ListPartners(ctx)
			if err != nil || len(list) != 1 || fmt.Sprint(list[0].AllowedOrigins) != want {
				t.Fatalf("list after another update: %+v %v, want origins %s", list, err, want)
			}
			up, err := h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error {
				p.AllowedOrigins = []string{"https://other.example"}
				return nil
			})
			if err != nil || fmt.Sprint(up.AllowedOrigins) != "[https://other.example]" {
				t.Fatalf("update origins: %+v %v", up, err)
			}
			_, err = h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error { p.AllowedOrigins = nil; return nil })
			mustNil(t, "clear origins", err)
			got, err = h.Store.PartnerByKeyDigest(ctx, digest("key-a"))
			if err != nil || len(got.AllowedOrigins) != 0 {
				t.Fatalf("by digest after clearing: %+v %v, want no origins", got, err)
			}
		}},
		{"disabled partners are still found by digest", func(t *testing.T, h *Handle[Accounts]) {
			mustNil(t, "create", h.Store.CreatePartner(ctx, partner("ptn_a", "key-a")))
			_, err := h.Store.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error { p.Disabled = true; return nil })
			mustNil(t, "disable", err)
			p, err := h.Store.PartnerByKeyDigest(ctx, digest("key-a"))
			if err != nil || !p.Disabled {
				t.Fatalf("disabled partner by digest: %+v %v", p, err)
			}
		}},
		{"an interrupted create leaves nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Accounts]) {
			Interrupt(t, h, func(ctx context.Context, s Accounts) error {
				return s.CreatePartner(ctx, partner("ptn_a", "key-a"))
			}, func(t testing.TB, s Accounts) {
				if list, err := s.ListPartners(ctx); err != nil || len(list) != 0 || byDigest(t, s, "key-a") != "" {
					t.Fatalf("an interrupted create left %d partners (%v)", len(list), err)
				}
			}, func(t testing.TB, s Accounts) {
				if byDigest(t, s, "key-a") != "ptn_a" {
					t.Fatal("the acknowledged partner is not found by its key")
				}
			})
		}},
		{"an interrupted rotation leaves the old key working, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Accounts]) {
			mustNil(t, "create", h.Store.CreatePartner(ctx, partner("ptn_a", "old")))
			Interrupt(t, h, func(ctx context.Context, s Accounts) error {
				_, err := s.UpdatePartner(ctx, "ptn_a", func(p *account.Partner) error { p.KeyDigest = digest("new"); return nil })
				return err
			}, func(t testing.TB, s Accounts) {
				if byDigest(t, s, "old") != "ptn_a" || byDigest(t, s, "new") != "" {
					t.Fatal("an interrupted rotation moved the key")
				}
			}, func(t testing.TB, s Accounts) {
				if byDigest(t, s, "old") != "" || byDigest(t, s, "new") != "ptn_a" {
					t.Fatal("the acknowledged rotation is not what the store shows")
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
