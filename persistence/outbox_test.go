package persistence

import (
	"context"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/webhook"
)

// TestFinishAttemptsOneBatch records a delivery, a retry and the outcome of a
// deleted webhook's delivery together, and checks each as recording it alone
// would leave it.
func TestFinishAttemptsOneBatch(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openWebhookStore(t, t.TempDir(), clock)
	a, b, gone := newHook("ptn_a", webhook.SwapCompleted), newHook("ptn_a", webhook.SwapCompleted), newHook("ptn_b", webhook.SwapCompleted)
	for _, w := range []*webhook.Registration{a, b, gone} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	ev := webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now(), Data: webhook.SwapData{TransactionID: "tx1"}}
	for _, p := range []string{"ptn_a", "ptn_b"} {
		if err := s.Publish(ctx, p, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteWebhook(ctx, "ptn_b", gone.ID); err != nil {
		t.Fatal(err)
	}
	due := dueEntries(t, s, clock.Now())
	if len(due) != 3 {
		t.Fatalf("%d entries due, want 3", len(due))
	}
	byHook := map[string]*webhook.OutboxEntry{}
	for _, e := range due {
		byHook[e.WebhookID] = e
	}
	retryAt := clock.Now().Add(time.Minute)
	outs := []webhook.AttemptOutcome{
		{Entry: byHook[a.ID], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}},
		{Entry: byHook[b.ID], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 503, State: webhook.DeliveryRetrying, Error: "receiver answered HTTP 503"}, RetryAt: retryAt},
		{Entry: byHook[gone.ID], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}},
	}
	if err := s.FinishAttempts(ctx, outs); err != nil {
		t.Fatal(err)
	}
	if got := dueEntries(t, s, clock.Now()); len(got) != 0 {
		t.Fatalf("entries still due now: %+v", got)
	}
	later := dueEntries(t, s, retryAt)
	if len(later) != 1 || later[0].WebhookID != b.ID || later[0].Attempt != 1 || !later[0].Due.Equal(retryAt) {
		t.Fatalf("rescheduled entries %+v", later)
	}
	if e := byHook[b.ID]; e.Attempt != 1 || !e.Due.Equal(retryAt) {
		t.Fatalf("retried entry not updated in place: %+v", e)
	}
	for _, tc := range []struct {
		hook  *webhook.Registration
		state string
	}{{a, webhook.DeliveryDelivered}, {b, webhook.DeliveryRetrying}} {
		hist, err := s.Deliveries(ctx, "ptn_a", tc.hook.ID, 10)
		if err != nil || len(hist) != 1 || hist[0].State != tc.state || hist[0].Attempt != 1 || hist[0].ID != byHook[tc.hook.ID].DeliveryID {
			t.Fatalf("history of %s: %+v %v", tc.hook.ID, hist, err)
		}
	}
	if ok, err := s.has(deliveryKey(gone.ID, byHook[gone.ID].CreatedAt, byHook[gone.ID].DeliveryID)); err != nil || ok {
		t.Fatalf("deleted webhook got a history row (%v)", err)
	}
	if err := s.FinishAttempts(ctx, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
}

// TestDueDeliveriesFrom checks the lower bound: entries due before from are
// not read, those due at or after it are, up to now.
func TestDueDeliveriesFrom(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	s := openWebhookStore(t, t.TempDir(), clock)
	w := newHook("ptn_a", webhook.SwapCompleted)
	if err := s.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 4 {
		id, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		clock.Advance(time.Second)
	}
	tests := []struct {
		name      string
		from, now time.Time
		want      []string
	}{
		{"zero from reads all", time.Time{}, start.Add(time.Hour), ids},
		{"from is inclusive", start.Add(time.Second), start.Add(time.Hour), ids[1:]},
		{"between two entries", start.Add(1500 * time.Millisecond), start.Add(time.Hour), ids[2:]},
		{"bounded by now", start.Add(time.Second), start.Add(2 * time.Second), ids[1:3]},
		{"nothing from the future", start.Add(time.Hour), start.Add(2 * time.Hour), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := s.DueDeliveries(ctx, tc.from, tc.now, nil, func(e *webhook.OutboxEntry) bool { got = append(got, e.DeliveryID); return true }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
