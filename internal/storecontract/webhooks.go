package storecontract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	webhookpool "github.com/swapgate/swapgate/actors/webhook"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Webhooks is webhook registrations, the outbox of events owed to them and
// their delivery records: the partner's endpoints
// (edge.WebhookRegistrations) and the delivery pool (webhookpool.Store).
// A registration and an event are durable when acknowledged; an outbox
// entry leaves only in the write that records its outcome; the outcomes
// of a batch of attempts are recorded whole or not at all.
type Webhooks interface {
	edge.WebhookRegistrations
	webhookpool.Store
}

// hook is a registration of partnerID subscribed to events.
func hook(partnerID string, events ...string) *webhook.Registration {
	return &webhook.Registration{PartnerID: partnerID, URL: "https://example.com/hook", Events: events,
		Secret: "0123456789abcdef", Active: true}
}

// completed is a swap.completed event of transaction tx.
func completed(tx string) webhook.Event {
	return webhook.Event{Name: webhook.SwapCompleted, Time: time.Now(), Data: webhook.SwapData{TransactionID: tx}}
}

// owed lists the outbox entries due within the next hour, earliest first.
func owed(t testing.TB, s webhookpool.Store) []*webhook.OutboxEntry {
	t.Helper()
	var out []*webhook.OutboxEntry
	err := s.DueDeliveries(context.Background(), time.Time{}, time.Now().Add(time.Hour), nil, func(e *webhook.OutboxEntry) bool {
		out = append(out, e)
		return true
	})
	mustNil(t, "due deliveries", err)
	return out
}

// owedIDs lists the delivery IDs owed, as a string.
func owedIDs(t testing.TB, s webhookpool.Store) string {
	t.Helper()
	var ids []string
	for _, e := range owed(t, s) {
		ids = append(ids, e.DeliveryID)
	}
	return fmt.Sprint(ids)
}

// history is a webhook's delivery records as "id:state:attempts".
func history(t testing.TB, s edge.WebhookRegistrations, partnerID, webhookID string) string {
	t.Helper()
	hist, err := s.Deliveries(context.Background(), partnerID, webhookID, 50)
	mustNil(t, "deliveries", err)
	var out []string
	for _, r := range hist {
		out = append(out, fmt.Sprintf("%s:%s:%d", r.ID, r.State, r.Attempt))
	}
	return fmt.Sprint(out)
}

// RunWebhooks holds a Webhooks implementation to its contract.
func RunWebhooks(t *testing.T, open Factory[Webhooks]) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Webhooks])
	}{
		{"registrations: created, read back with their secret, scoped to their partner, bounded", func(t *testing.T, h *Handle[Webhooks]) {
			s := h.Store
			a := hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", s.CreateWebhook(ctx, a))
			if !strings.HasPrefix(a.ID, "wh_") || a.CreatedAt.IsZero() {
				t.Fatalf("created %+v", a)
			}
			for _, get := range []func() (*webhook.Registration, error){
				func() (*webhook.Registration, error) { return s.Webhook(ctx, "ptn_a", a.ID) },
				func() (*webhook.Registration, error) { return s.WebhookByID(ctx, a.ID) },
			} {
				got, err := get()
				if err != nil || got.Secret != a.Secret || got.URL != a.URL || fmt.Sprint(got.Events) != fmt.Sprint(a.Events) || !got.Active {
					t.Fatalf("read back %+v %v", got, err)
				}
			}
			if _, err := s.Webhook(ctx, "ptn_ab", a.ID); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("another partner reads it: %v", err)
			}
			if err := s.DeleteWebhook(ctx, "ptn_ab", a.ID); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("another partner deletes it: %v", err)
			}
			for i := 1; i < webhook.MaxPerPartner; i++ {
				mustNil(t, "create", s.CreateWebhook(ctx, hook("ptn_a", webhook.SwapFailed)))
			}
			if err := s.CreateWebhook(ctx, hook("ptn_a", webhook.SwapFailed)); !errors.Is(err, webhook.ErrLimit) {
				t.Fatalf("registration past the limit: %v, want ErrLimit", err)
			}
			list, err := s.Webhooks(ctx, "ptn_a")
			if err != nil || len(list) != webhook.MaxPerPartner || list[0].ID != a.ID {
				t.Fatalf("list: %d, first %v, %v", len(list), list[0].ID, err)
			}
		}},
		{"a failed delivery is resent once with its original payload; others are left as they are", func(t *testing.T, h *Handle[Webhooks]) {
			s := h.Store
			w := hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", s.CreateWebhook(ctx, w))
			now := time.Now().UTC()
			var entries []*webhook.OutboxEntry
			for range 3 {
				e, err := s.PublishTo(ctx, w, completed("0xresend"))
				mustNil(t, "publish", err)
				entries = append(entries, e)
			}
			dead, retrying, pending := entries[0], entries[1], entries[2]
			retryAt := now.Add(time.Hour)
			mustNil(t, "finish", s.FinishAttempts(ctx, []webhook.AttemptOutcome{
				{Entry: dead, At: now, Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 500, Error: "HTTP 500",
					State: webhook.DeliveryDead, Body: dead.Body}},
				{Entry: retrying, At: now, RetryAt: retryAt, Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 503,
					Error: "HTTP 503", State: webhook.DeliveryRetrying, Body: retrying.Body, NextAttemptAt: retryAt}},
			}))
			if _, _, err := s.ResendDelivery(ctx, "ptn_b", w.ID, dead.DeliveryID, now); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("another partner resends: %v", err)
			}
			if _, _, err := s.ResendDelivery(ctx, "ptn_a", w.ID, "dlv_000000000000000000000000", now); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("unknown delivery: %v", err)
			}
			e, rec, err := s.ResendDelivery(ctx, "ptn_a", w.ID, dead.DeliveryID, now)
			if err != nil || e == nil || rec.State != webhook.DeliveryPending || e.DeliveryID != dead.DeliveryID ||
				string(e.Body) != string(dead.Body) || e.Attempt != 1 || len(rec.Attempts) != 1 {
				t.Fatalf("resend dead: %+v %+v %v", e, rec, err)
			}
			if e2, rec2, err := s.ResendDelivery(ctx, "ptn_a", w.ID, dead.DeliveryID, now); err != nil || e2 != nil || rec2.State != webhook.DeliveryPending {
				t.Fatalf("second resend owed again: %+v %+v %v", e2, rec2, err)
			}
			e, rec, err = s.ResendDelivery(ctx, "ptn_a", w.ID, retrying.DeliveryID, now)
			if err != nil || e == nil || rec.State != webhook.DeliveryPending || !e.Due.Equal(now) || e.Attempt != 1 {
				t.Fatalf("resend retrying: %+v %+v %v", e, rec, err)
			}
			if e, rec, err := s.ResendDelivery(ctx, "ptn_a", w.ID, pending.DeliveryID, now); err != nil || e != nil || rec.State != webhook.DeliveryPending {
				t.Fatalf("resend pending: %+v %+v %v", e, rec, err)
			}
			// Each delivery is owed once: the pending one, the dead one
			// again, and the retrying one brought forward (not twice).
			counts := map[string]int{}
			for _, e := range owed(t, s) {
				counts[e.DeliveryID]++
			}
			if len(counts) != 3 || counts[dead.DeliveryID] != 1 || counts[retrying.DeliveryID] != 1 || counts[pending.DeliveryID] != 1 {
				t.Fatalf("owed %v", counts)
			}
		}},
		{"an event goes to the subscribed active webhooks only, and to a chosen one alone", func(t *testing.T, h *Handle[Webhooks]) {
			s := h.Store
			sub, other, inactive := hook("ptn_a", webhook.SwapCompleted), hook("ptn_a", webhook.SwapFailed), hook("ptn_a", webhook.SwapCompleted)
			inactive.Active = false
			elsewhere := hook("ptn_b", webhook.SwapCompleted)
			for _, w := range []*webhook.Registration{sub, other, inactive, elsewhere} {
				mustNil(t, "create", s.CreateWebhook(ctx, w))
			}
			es, err := s.Publish(ctx, "ptn_a", completed("0x1"))
			if err != nil || len(es) != 1 || es[0].WebhookID != sub.ID || es[0].PartnerID != "ptn_a" {
				t.Fatalf("publish: %+v %v", es, err)
			}
			test, err := s.PublishTo(ctx, other, completed("0x2"))
			mustNil(t, "publish to", err)
			if got := owed(t, s); len(got) != 2 {
				t.Fatalf("%d entries owed, want 2", len(got))
			}
			for _, c := range []struct{ hook, delivery string }{{sub.ID, es[0].DeliveryID}, {other.ID, test.DeliveryID}, {inactive.ID, ""}} {
				got := history(t, s, "ptn_a", c.hook)
				if (c.delivery == "" && got != "[]") || (c.delivery != "" && !strings.HasPrefix(got, "["+c.delivery+":")) {
					t.Errorf("history of %s: %s, want delivery %q", c.hook, got, c.delivery)
				}
			}
		}},
		{"an outcome removes or reschedules its entry and writes its record", func(t *testing.T, h *Handle[Webhooks]) {
			s := h.Store
			a, b := hook("ptn_a", webhook.SwapCompleted), hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", s.CreateWebhook(ctx, a))
			mustNil(t, "create", s.CreateWebhook(ctx, b))
			es, err := s.Publish(ctx, "ptn_a", completed("0x1"))
			if err != nil || len(es) != 2 {
				t.Fatalf("publish %d, %v", len(es), err)
			}
			byHook := map[string]*webhook.OutboxEntry{}
			for _, e := range owed(t, s) {
				byHook[e.WebhookID] = e
			}
			retryAt := time.Now().Add(30 * time.Minute).Truncate(time.Millisecond)
			mustNil(t, "finish", s.FinishAttempts(ctx, []webhook.AttemptOutcome{
				{Entry: byHook[a.ID], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}},
				{Entry: byHook[b.ID], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 503, State: webhook.DeliveryRetrying}, RetryAt: retryAt},
			}))
			left := owed(t, s)
			if len(left) != 1 || left[0].WebhookID != b.ID || left[0].Attempt != 1 || !left[0].Due.Equal(retryAt) {
				t.Fatalf("owed after the outcomes %+v", left)
			}
			if next, ok, err := s.NextDue(ctx, time.Now()); err != nil || !ok || !next.Equal(retryAt) {
				t.Fatalf("next due %v %v %v, want %v", next, ok, err, retryAt)
			}
			if due, later, err := s.CountOutbox(ctx, time.Now(), 100); err != nil || due != 0 || later != 1 {
				t.Fatalf("count %d due, %d later, %v", due, later, err)
			}
			if got := history(t, s, "ptn_a", a.ID); got != fmt.Sprintf("[%s:%s:1]", byHook[a.ID].DeliveryID, webhook.DeliveryDelivered) {
				t.Fatalf("history of a %s", got)
			}
			// Read again by key: there while owed, nil once dropped.
			keys := []store.OutboxKey{{Due: left[0].Due, DeliveryID: left[0].DeliveryID}}
			var again []*webhook.OutboxEntry
			mustNil(t, "entries", s.OutboxEntries(ctx, keys, func(_ int, e *webhook.OutboxEntry) { again = append(again, e) }))
			if len(again) != 1 || again[0] == nil || again[0].DeliveryID != left[0].DeliveryID {
				t.Fatalf("read by key %+v", again)
			}
			mustNil(t, "drop", s.DropDelivery(ctx, left[0]))
			again = nil
			mustNil(t, "entries", s.OutboxEntries(ctx, keys, func(_ int, e *webhook.OutboxEntry) { again = append(again, e) }))
			if len(again) != 1 || again[0] != nil || owedIDs(t, s) != "[]" {
				t.Fatalf("after the drop: by key %+v, owed %s", again, owedIDs(t, s))
			}
		}},
		{"a deleted webhook's registration and history go", func(t *testing.T, h *Handle[Webhooks]) {
			s := h.Store
			a := hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", s.CreateWebhook(ctx, a))
			_, err := s.Publish(ctx, "ptn_a", completed("0x1"))
			mustNil(t, "publish", err)
			mustNil(t, "delete", s.DeleteWebhook(ctx, "ptn_a", a.ID))
			if _, err := s.WebhookByID(ctx, a.ID); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("by ID after delete: %v", err)
			}
			if _, err := s.Deliveries(ctx, "ptn_a", a.ID, 10); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("history after delete: %v", err)
			}
		}},
		{"an interrupted publish owes nothing, an acknowledged one survives a crash", func(t *testing.T, h *Handle[Webhooks]) {
			a := hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", h.Store.CreateWebhook(ctx, a))
			var id string
			Interrupt(t, h, func(ctx context.Context, s Webhooks) error {
				es, err := s.Publish(ctx, "ptn_a", completed("0x1"))
				if err == nil && len(es) == 1 {
					id = es[0].DeliveryID
				}
				return err
			}, func(t testing.TB, s Webhooks) {
				if got := owedIDs(t, s); got != "[]" {
					t.Fatalf("an interrupted publish owes %s", got)
				}
			}, func(t testing.TB, s Webhooks) {
				if got := owedIDs(t, s); got != "["+id+"]" {
					t.Fatalf("owed %s, want [%s]", got, id)
				}
				if w, err := s.WebhookByID(ctx, a.ID); err != nil || w.Secret != a.Secret {
					t.Fatalf("the registration after a crash: %+v %v", w, err)
				}
			})
		}},
		{"interrupted outcomes leave every entry owed, acknowledged ones survive a crash", func(t *testing.T, h *Handle[Webhooks]) {
			a, b := hook("ptn_a", webhook.SwapCompleted), hook("ptn_a", webhook.SwapCompleted)
			mustNil(t, "create", h.Store.CreateWebhook(ctx, a))
			mustNil(t, "create", h.Store.CreateWebhook(ctx, b))
			_, err := h.Store.Publish(ctx, "ptn_a", completed("0x1"))
			mustNil(t, "publish", err)
			entries := owed(t, h.Store)
			before := owedIDs(t, h.Store)
			Interrupt(t, h, func(ctx context.Context, s Webhooks) error {
				outs := make([]webhook.AttemptOutcome, len(entries))
				for i, e := range entries {
					c := *e
					outs[i] = webhook.AttemptOutcome{Entry: &c, Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}}
				}
				return s.FinishAttempts(ctx, outs)
			}, func(t testing.TB, s Webhooks) {
				if got := owedIDs(t, s); got != before {
					t.Fatalf("after interrupted outcomes owed %s, want %s", got, before)
				}
				for _, w := range []*webhook.Registration{a, b} {
					if got := history(t, s, "ptn_a", w.ID); strings.Contains(got, webhook.DeliveryDelivered) {
						t.Fatalf("an interrupted outcome was recorded: %s", got)
					}
				}
			}, func(t testing.TB, s Webhooks) {
				if got := owedIDs(t, s); got != "[]" {
					t.Fatalf("after the outcomes owed %s", got)
				}
				for _, w := range []*webhook.Registration{a, b} {
					if got := history(t, s, "ptn_a", w.ID); !strings.Contains(got, webhook.DeliveryDelivered) {
						t.Fatalf("the outcome is not recorded: %s", got)
					}
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
