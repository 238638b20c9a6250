package postgres

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's webhook registration tests
// (store/pebble/webhook_test.go), run against PostgreSQL, and what sharing
// the store between nodes adds.

func newHook(partnerID string, events ...string) *webhook.Registration {
	return &webhook.Registration{PartnerID: partnerID, URL: "https://example.com/hook", Events: events,
		Secret: "0123456789abcdef", Active: true}
}

func TestWebhookLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	a := newHook("ptn_a", webhook.SwapCompleted)
	if err := s.CreateWebhook(ctx, a); err != nil {
		t.Fatal(err)
	}
	if len(a.ID) != 27 || a.ID[:3] != "wh_" || !a.CreatedAt.Equal(clock.Now()) || !a.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("created %+v", a)
	}
	clock.Advance(time.Second)
	b := newHook("ptn_a", webhook.SwapFailed)
	if err := s.CreateWebhook(ctx, b); err != nil {
		t.Fatal(err)
	}
	other := newHook("ptn_ab", webhook.SwapFailed)
	if err := s.CreateWebhook(ctx, other); err != nil {
		t.Fatal(err)
	}

	list, err := s.Webhooks(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Secret != a.Secret ||
		!slices.Equal(list[1].Events, b.Events) || list[0].URL != a.URL || !list[0].Active || !list[0].CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("list %+v", list)
	}
	if got, err := s.WebhookByID(ctx, other.ID); err != nil || got.PartnerID != "ptn_ab" || got.Secret != other.Secret {
		t.Fatalf("by id: %+v %v", got, err)
	}
	if got, err := s.Webhook(ctx, "ptn_a", a.ID); err != nil || got.ID != a.ID || got.Secret != a.Secret {
		t.Fatalf("Webhook: %+v %v", got, err)
	}
	for _, c := range []struct{ partner, id string }{
		{"ptn_a", other.ID}, {"ptn_a", "wh_missing"}, {"ptn/a", a.ID}, {"ptn_a", "../x"},
	} {
		if _, err := s.Webhook(ctx, c.partner, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Webhook(%s, %s) = %v, want ErrNotFound", c.partner, c.id, err)
		}
		if err := s.DeleteWebhook(ctx, c.partner, c.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteWebhook(%s, %s) = %v, want ErrNotFound", c.partner, c.id, err)
		}
	}
	if err := s.DeleteWebhook(ctx, "ptn_a", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebhookByID(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted webhook still found: %v", err)
	}
	if err := s.DeleteWebhook(ctx, "ptn_a", a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if list, err := s.Webhooks(ctx, "ptn_a"); err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("after delete: %+v %v", list, err)
	}
	if list, err := s.Webhooks(ctx, "not/valid"); err != nil || list != nil {
		t.Fatalf("Webhooks of an invalid partner: %+v %v", list, err)
	}
}

func TestCreateWebhookRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	taken := newHook("ptn_a")
	taken.ID = "wh_taken"
	if err := s.CreateWebhook(ctx, taken); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		w    *webhook.Registration
		want error
	}{
		{"invalid partner", newHook("ptn/a"), nil},
		{"invalid id", &webhook.Registration{ID: "wh/1", PartnerID: "ptn_a"}, nil},
		{"id taken, by another partner too", &webhook.Registration{ID: "wh_taken", PartnerID: "ptn_b"}, store.ErrExists},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.CreateWebhook(ctx, c.w)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("CreateWebhook = %v, want %v", err, c.want)
			}
		})
	}
	if n := countRows(t, s, "webhooks"); n != 1 {
		t.Fatalf("refused creates left %d rows", n)
	}
}

func TestWebhookLimit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	for i := range webhook.MaxPerPartner {
		if err := s.CreateWebhook(ctx, newHook("ptn_a", webhook.SwapPending)); err != nil {
			t.Fatalf("webhook %d: %v", i, err)
		}
	}
	if err := s.CreateWebhook(ctx, newHook("ptn_a", webhook.SwapPending)); !errors.Is(err, webhook.ErrLimit) {
		t.Fatalf("eleventh webhook: %v", err)
	}
	if err := s.CreateWebhook(ctx, newHook("ptn_b", webhook.SwapPending)); err != nil {
		t.Fatalf("another partner is not limited: %v", err)
	}
}

// TestWebhookLimitAcrossNodes: registrations racing on several nodes never
// take a partner past the limit.
func TestWebhookLimitAcrossNodes(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	nodes := []*Store{db.open(t, Options{}), db.open(t, Options{})}
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		created, limit int
	)
	for i := range 2 * webhook.MaxPerPartner {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := nodes[i%2].CreateWebhook(ctx, newHook("ptn_a", webhook.SwapPending))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, webhook.ErrLimit):
				limit++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if created != webhook.MaxPerPartner || limit != webhook.MaxPerPartner {
		t.Fatalf("%d created and %d refused, want %d each", created, limit, webhook.MaxPerPartner)
	}
}

// TestWebhookSecretSealed: the table holds no secret in clear; a sealed
// secret moved to another webhook's row does not open there; another node
// with the same key file reads the secret.
func TestWebhookSecretSealed(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	s := db.open(t, Options{})
	a, b := newHook("ptn_a"), newHook("ptn_a")
	a.Secret, b.Secret = "whsec_alpha_0123456789", "whsec_bravo_0123456789"
	for _, w := range []*webhook.Registration{a, b} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT id::bytea || url::bytea || sealed_secret FROM webhooks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("whsec_")) {
			t.Fatalf("a secret is in clear in the table: %q", raw)
		}
	}
	rows.Close()
	if got, err := db.open(t, Options{}).Webhook(ctx, "ptn_a", b.ID); err != nil || got.Secret != b.Secret {
		t.Fatalf("another node reads %+v, %v", got, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE webhooks SET sealed_secret = (SELECT sealed_secret FROM webhooks WHERE id = $1) WHERE id = $2`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Webhook(ctx, "ptn_a", b.ID); err == nil {
		t.Fatal("a secret sealed for one webhook opened in another's row")
	}
}

// TestWebhookEventsRoundTrip: nil and empty event lists read back as they
// were written, as the Pebble store's JSON keeps them.
func TestWebhookEventsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	for _, events := range [][]string{nil, {}, {webhook.SwapCompleted, webhook.DepositReceived}} {
		w := newHook("ptn_a", events...)
		w.Events = events
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		got, err := s.WebhookByID(ctx, w.ID)
		if err != nil || (got.Events == nil) != (events == nil) || !slices.Equal(got.Events, events) {
			t.Fatalf("events %#v read back as %#v (%v)", events, got.Events, err)
		}
	}
}
