package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// changeLog records OnChange notifications.
type changeLog struct {
	mu  sync.Mutex
	ids []string
}

func (c *changeLog) record(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
}

func (c *changeLog) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

func openStore(t *testing.T) (*pebblestore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s, dir
}

func intp(v int) *int { return &v }

// backend builds a PartnerAdmin over a fresh store and reports changes.
type backend func(t *testing.T) (PartnerAdmin, *pebblestore.Store, *changeLog)

func localBackend(t *testing.T) (PartnerAdmin, *pebblestore.Store, *changeLog) {
	s, _ := openStore(t)
	log := &changeLog{}
	return NewLocal(s, log.record), s, log
}

func remoteBackend(t *testing.T) (PartnerAdmin, *pebblestore.Store, *changeLog) {
	s, dir := openStore(t)
	log := &changeLog{}
	srv, err := Start(dir, s, log.record)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, s, log
}

// TestPartnerAdminContract runs the same scenario over Local and over
// Client→Server, so the two implementations cannot drift apart.
func TestPartnerAdminContract(t *testing.T) {
	for name, mk := range map[string]backend{"local": localBackend, "remote": remoteBackend} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pa, store, log := mk(t)

			created, err := pa.Create(ctx, CreateRequest{Name: " Acme ", Email: "ops@acme.example", SwapFeeBps: intp(25)})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if !account.WellFormedKey(created.APIKey) || created.ID == "" || created.Partner.ID != created.ID {
				t.Fatalf("Create result = %+v", created)
			}
			v := created.Partner
			if v.Name != "Acme" || v.FeeTier != (FeeTier{25, account.AnonymousOnrampFeeBps}) ||
				v.RateLimit != (RateLimit{2000, 2000, 6000}) || !v.WebhooksEnabled || v.Disabled ||
				!slices.Equal(v.EnabledEcosystems, account.Ecosystems()) || v.CreatedAt.IsZero() {
				t.Fatalf("created view = %+v", v)
			}
			stored, err := store.PartnerByKeyDigest(ctx, account.KeyDigest(created.APIKey))
			if err != nil || stored.ID != created.ID {
				t.Fatalf("created key does not find the partner: %v", err)
			}

			rotated, err := pa.RotateKey(ctx, created.ID)
			if err != nil {
				t.Fatalf("RotateKey: %v", err)
			}
			if rotated.APIKey == created.APIKey || !account.WellFormedKey(rotated.APIKey) || rotated.ID != created.ID {
				t.Fatalf("RotateKey result = %+v", rotated)
			}
			if _, err := store.PartnerByKeyDigest(ctx, account.KeyDigest(created.APIKey)); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("old key still resolves: %v", err)
			}
			if _, err := store.PartnerByKeyDigest(ctx, account.KeyDigest(rotated.APIKey)); err != nil {
				t.Fatalf("new key does not resolve: %v", err)
			}

			v, err = pa.SetFees(ctx, created.ID, nil, intp(90))
			if err != nil || v.FeeTier != (FeeTier{25, 90}) {
				t.Fatalf("SetFees = %+v, %v", v.FeeTier, err)
			}
			v, err = pa.SetLimits(ctx, created.ID, intp(50000), nil)
			if err != nil || v.RateLimit != (RateLimit{50000, 50000, 6000}) {
				t.Fatalf("SetLimits = %+v, %v", v.RateLimit, err)
			}
			v, err = pa.SetOrigins(ctx, created.ID, []string{"https://App.example:443", "http://localhost:5173"})
			if err != nil || !slices.Equal(v.AllowedOrigins, []string{"https://app.example", "http://localhost:5173"}) {
				t.Fatalf("SetOrigins = %+v, %v", v.AllowedOrigins, err)
			}
			if stored, err := store.Partner(ctx, created.ID); err != nil || len(stored.AllowedOrigins) != 2 {
				t.Fatalf("stored origins = %+v, %v", stored, err)
			}
			v, err = pa.Disable(ctx, created.ID)
			if err != nil || !v.Disabled {
				t.Fatalf("Disable = %+v, %v", v, err)
			}

			list, err := pa.List(ctx)
			if err != nil || len(list) != 1 || list[0].ID != created.ID || !list[0].Disabled {
				t.Fatalf("List = %+v, %v", list, err)
			}

			want := []string{created.ID, created.ID, created.ID, created.ID, created.ID, created.ID}
			if got := log.snapshot(); !slices.Equal(got, want) {
				t.Fatalf("OnChange calls = %v, want %v", got, want)
			}
		})
	}
}

func TestPartnerAdminErrors(t *testing.T) {
	for name, mk := range map[string]backend{"local": localBackend, "remote": remoteBackend} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pa, _, log := mk(t)
			tests := []struct {
				name string
				call func() error
				want error
			}{
				{"create without name", func() error {
					_, err := pa.Create(ctx, CreateRequest{Email: "a@b.co"})
					return err
				}, ErrInvalid},
				{"create bad email", func() error {
					_, err := pa.Create(ctx, CreateRequest{Name: "n", Email: "a@b"})
					return err
				}, ErrInvalid},
				{"create fee out of range", func() error {
					_, err := pa.Create(ctx, CreateRequest{Name: "n", Email: "a@b.co", OnrampFeeBps: intp(10001)})
					return err
				}, ErrInvalid},
				{"create zero limit", func() error {
					_, err := pa.Create(ctx, CreateRequest{Name: "n", Email: "a@b.co", ReadPerMin: intp(0)})
					return err
				}, ErrInvalid},
				{"rotate unknown", func() error {
					_, err := pa.RotateKey(ctx, "ptn_nope")
					return err
				}, account.ErrNotFound},
				{"rotate empty id", func() error {
					_, err := pa.RotateKey(ctx, "")
					return err
				}, ErrInvalid},
				{"set fees unknown", func() error {
					_, err := pa.SetFees(ctx, "ptn_nope", intp(1), nil)
					return err
				}, account.ErrNotFound},
				{"set fees nothing", func() error {
					_, err := pa.SetFees(ctx, "ptn_nope", nil, nil)
					return err
				}, ErrInvalid},
				{"set limits negative", func() error {
					_, err := pa.SetLimits(ctx, "ptn_nope", intp(-1), nil)
					return err
				}, ErrInvalid},
				{"set origins with a path", func() error {
					_, err := pa.SetOrigins(ctx, "ptn_nope", []string{"https://app.example/x"})
					if err != nil && !strings.Contains(err.Error(), "allowedOrigins") {
						return fmt.Errorf("%w, not naming allowedOrigins", err)
					}
					return err
				}, ErrInvalid},
				{"set origins with a wildcard", func() error {
					_, err := pa.SetOrigins(ctx, "ptn_nope", []string{"https://*.example"})
					return err
				}, ErrInvalid},
				{"set origins without a list", func() error {
					_, err := pa.SetOrigins(ctx, "ptn_nope", nil)
					return err
				}, ErrInvalid},
				{"set origins unknown", func() error {
					_, err := pa.SetOrigins(ctx, "ptn_nope", []string{})
					return err
				}, account.ErrNotFound},
				{"disable path-like id", func() error {
					_, err := pa.Disable(ctx, "../x")
					return err
				}, account.ErrNotFound},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if err := tt.call(); !errors.Is(err, tt.want) {
						t.Fatalf("error = %v, want %v", err, tt.want)
					}
				})
			}
			if got := log.snapshot(); len(got) != 0 {
				t.Fatalf("failed operations notified changes: %v", got)
			}
		})
	}
}
