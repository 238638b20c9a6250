package pebblestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

func openWebhookStore(t *testing.T, dir string, clock *fakeClock) *Store {
	t.Helper()
	s, err := Open(dir, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openStoreWithHook opens a webhook store on a fake clock holding one
// webhook of ptn_a (newHook), created at the clock's start.
func openStoreWithHook(t *testing.T, events ...string) (*Store, *fakeClock, *webhook.Registration) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openWebhookStore(t, t.TempDir(), clock)
	w := newHook("ptn_a", events...)
	if err := s.CreateWebhook(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return s, clock, w
}

func newHook(partnerID string, events ...string) *webhook.Registration {
	return &webhook.Registration{PartnerID: partnerID, URL: "https://example.com/hook", Events: events,
		Secret: "0123456789abcdef", Active: true}
}

func TestWebhookLifecycle(t *testing.T) {
	ctx := context.Background()
	s, clock, a := openStoreWithHook(t, webhook.SwapCompleted)
	if len(a.ID) != 27 || a.ID[:3] != "wh_" || !a.CreatedAt.Equal(clock.Now()) {
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
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Secret != a.Secret {
		t.Fatalf("list %+v", list)
	}
	if got, err := s.WebhookByID(ctx, other.ID); err != nil || got.PartnerID != "ptn_ab" {
		t.Fatalf("by id: %+v %v", got, err)
	}
	if _, err := s.Webhook(ctx, "ptn_a", other.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another partner's webhook: %v", err)
	}
	if err := s.DeleteWebhook(ctx, "ptn_a", other.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete another partner's webhook: %v", err)
	}
	if _, err := s.Deliveries(ctx, "ptn_a", other.ID, 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deliveries of another partner's webhook: %v", err)
	}

	if _, err := s.PublishTo(ctx, a, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()}); err != nil {
		t.Fatal(err)
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
	if n := countPrefix(t, s, deliveryWebhookPrefix(a.ID)); n != 0 {
		t.Fatalf("history of deleted webhook: %d rows", n)
	}
}

func countPrefix(t *testing.T, s *Store, prefix string) int {
	t.Helper()
	it, err := s.DB().NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.SeekGE([]byte(prefix)); ok && len(it.Key()) >= len(prefix) && string(it.Key()[:len(prefix)]) == prefix; ok = it.Next() {
		n++
	}
	return n
}

func TestWebhookLimit(t *testing.T) {
	ctx := context.Background()
	s := openWebhookStore(t, t.TempDir(), &fakeClock{t: time.Now()})
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

// TestOutboxFanOutAndDurability enqueues an event in a caller's batch,
// reopens the store and finds the entries, then walks one delivery through a
// retry and its completion.
func TestOutboxFanOutAndDurability(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, err := Open(dir, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	subscribed := newHook("ptn_a", webhook.SwapCompleted, webhook.SwapFailed)
	unsubscribed := newHook("ptn_a", webhook.DepositReceived)
	inactive := newHook("ptn_a", webhook.SwapCompleted)
	inactive.Active = false
	otherPartner := newHook("ptn_b", webhook.SwapCompleted)
	for _, w := range []*webhook.Registration{subscribed, unsubscribed, inactive, otherPartner} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	b := s.DB().NewBatch()
	if err := b.Set([]byte("seq/test-state-change"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	ev := webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now(), Data: webhook.SwapData{TransactionID: "tx1"}}
	if err := s.EnqueueEvent(b, "ptn_a", ev); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(nil); err != nil { // Close below flushes; sync is the caller's choice.
		t.Fatal(err)
	}
	_ = b.Close()
	if err := s.EnqueueEvent(s.DB().NewBatch(), "ptn_a", webhook.Event{Name: "swap.done", Time: clock.Now()}); err == nil {
		t.Fatal("unknown event enqueued")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openWebhookStore(t, dir, clock)
	due := dueEntries(t, s, clock.Now())
	if len(due) != 1 || due[0].WebhookID != subscribed.ID || due[0].Attempt != 0 || due[0].Event != webhook.SwapCompleted {
		t.Fatalf("due after reopen: %+v", due)
	}
	want, _ := ev.Body()
	if string(due[0].Body) != string(want) {
		t.Fatalf("body %s, want %s", due[0].Body, want)
	}
	hist, err := s.Deliveries(ctx, "ptn_a", subscribed.ID, 100)
	if err != nil || len(hist) != 1 || hist[0].State != webhook.DeliveryPending || hist[0].ID != due[0].DeliveryID {
		t.Fatalf("history %+v %v", hist, err)
	}

	e := due[0]
	id := e.DeliveryID
	if err := finishAttempt(ctx, s, e, &webhook.DeliveryRecord{Attempt: 1, StatusCode: 500, State: webhook.DeliveryRetrying, Error: "status 500"}, clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := dueEntries(t, s, clock.Now()); len(got) != 0 {
		t.Fatalf("retry due too early: %+v", got)
	}
	clock.Advance(time.Minute)
	due = dueEntries(t, s, clock.Now())
	if len(due) != 1 || due[0].DeliveryID != id || due[0].Attempt != 1 {
		t.Fatalf("retry entry %+v", due)
	}
	var skipped []string
	if err := s.DueDeliveries(ctx, time.Time{}, clock.Now(), func(_ time.Time, d, w []byte) bool {
		skipped = append(skipped, string(d)+" "+string(w))
		return string(d) == id
	}, func(*webhook.OutboxEntry) bool {
		t.Fatal("skipped entry decoded")
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if want := id + " " + subscribed.ID; len(skipped) != 1 || skipped[0] != want {
		t.Fatalf("skip saw %q, want %q", skipped, want)
	}
	if err := finishAttempt(ctx, s, due[0], &webhook.DeliveryRecord{Attempt: 2, StatusCode: 204, LatencyMs: 3, State: webhook.DeliveryDelivered}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := dueEntries(t, s, clock.Now().Add(time.Hour)); len(got) != 0 {
		t.Fatalf("delivered entry still queued: %+v", got)
	}
	hist, _ = s.Deliveries(ctx, "ptn_a", subscribed.ID, 100)
	if len(hist) != 1 || hist[0].State != webhook.DeliveryDelivered || hist[0].Attempt != 2 || hist[0].StatusCode != 204 || hist[0].Event != webhook.SwapCompleted {
		t.Fatalf("history after delivery %+v", hist[0])
	}
}

// finishAttempt records the outcome of one attempt of e, alone in its batch.
func finishAttempt(ctx context.Context, s *Store, e *webhook.OutboxEntry, rec *webhook.DeliveryRecord, retryAt time.Time) error {
	return s.FinishAttempts(ctx, []webhook.AttemptOutcome{{Entry: e, Record: rec, RetryAt: retryAt}})
}

func dueEntries(t *testing.T, s *Store, now time.Time) []*webhook.OutboxEntry {
	t.Helper()
	var out []*webhook.OutboxEntry
	if err := s.DueDeliveries(context.Background(), time.Time{}, now, nil, func(e *webhook.OutboxEntry) bool { out = append(out, e); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeliveriesNewestFirstAndLimited(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapPending)
	var ids []string
	for i := range 5 {
		clock.Advance(time.Second)
		id, err := publishTo(ctx, s, w, webhook.Event{Name: webhook.SwapPending, Time: clock.Now(), Data: map[string]int{"n": i}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, err := s.Deliveries(ctx, "ptn_a", w.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != ids[4] || got[2].ID != ids[2] {
		t.Fatalf("got %v, want newest three of %v", fmt.Sprint(got[0].ID, got[1].ID, got[2].ID), ids)
	}
	if _, err := s.Publish(ctx, "ptn_nobody", webhook.Event{Name: webhook.SwapPending, Time: clock.Now()}); err != nil {
		t.Fatalf("publishing with no subscriber: %v", err)
	}
}

// TestWebhookRecordEncodings pins the stored bytes of the three webhook
// record families, so that a change to the model's JSON field names in
// routing/domain/webhook cannot silently change what is on disk.
func TestWebhookRecordEncodings(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	reg := webhook.Registration{ID: "wh_1", PartnerID: "ptn_a", URL: "https://example.com/hook",
		Events: []string{webhook.SwapCompleted}, Secret: "0123456789abcdef", Active: true, CreatedAt: at, UpdatedAt: at}
	entry := webhook.OutboxEntry{DeliveryID: "dlv_1", WebhookID: "wh_1", PartnerID: "ptn_a", Event: webhook.SwapCompleted,
		Body: []byte(`{}`), Attempt: 2, CreatedAt: at, Due: at}
	rec := webhook.DeliveryRecord{ID: "dlv_1", WebhookID: "wh_1", Event: webhook.SwapCompleted, Attempt: 2, StatusCode: 503,
		LatencyMs: 7, Error: "receiver answered HTTP 503", State: webhook.DeliveryRetrying, CreatedAt: at, UpdatedAt: at,
		Attempts: []webhook.Attempt{
			{Attempt: 1, StatusCode: 0, LatencyMs: 5000, Error: "timeout: no answer within 5s", At: at.Add(-time.Minute)},
			{Attempt: 2, StatusCode: 503, LatencyMs: 7, Error: "receiver answered HTTP 503", At: at},
		}}
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"webhook", webhookRecord{V: 2, Registration: withoutSecret(reg), SealedSecret: []byte("sealed")},
			`{"v":2,"id":"wh_1","partnerId":"ptn_a","url":"https://example.com/hook","events":["swap.completed"],"active":true,"createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:00:00Z","sealedSecret":"c2VhbGVk"}`},
		{"webhook version 1 (read by the migration alone)", webhookRecord{V: 1, Registration: withoutSecret(reg), Secret: reg.Secret},
			`{"v":1,"id":"wh_1","partnerId":"ptn_a","url":"https://example.com/hook","events":["swap.completed"],"active":true,"createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:00:00Z","secret":"0123456789abcdef"}`},
		{"outbox", outboxRecord{V: 1, OutboxEntry: entry},
			`{"v":1,"deliveryId":"dlv_1","webhookId":"wh_1","partnerId":"ptn_a","event":"swap.completed","body":"e30=","attempt":2,"createdAt":"2026-03-01T12:00:00Z","due":"2026-03-01T12:00:00Z"}`},
		{"delivery", deliveryRecord{V: deliveryVersion, DeliveryRecord: rec},
			`{"v":2,"id":"dlv_1","webhookId":"wh_1","event":"swap.completed","attempt":2,"statusCode":503,"latencyMs":7,"error":"receiver answered HTTP 503","state":"retrying","createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:00:00Z",` +
				`"attempts":[{"attempt":1,"statusCode":0,"latencyMs":5000,"error":"timeout: no answer within 5s","at":"2026-03-01T11:59:00Z"},{"attempt":2,"statusCode":503,"latencyMs":7,"error":"receiver answered HTTP 503","at":"2026-03-01T12:00:00Z"}]}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s record\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Both delivery versions read: version 1, from before the attempt log,
	// with its latest attempt as the log; a version it does not know, not.
	for _, tc := range []struct {
		raw      string
		attempts int
	}{
		{`{"v":2,"id":"dlv_1","attempt":2,"statusCode":503,"attempts":[{"attempt":1},{"attempt":2,"statusCode":503}]}`, 2},
		{`{"v":2,"id":"dlv_1","state":"pending"}`, 0},
		{`{"v":1,"id":"dlv_1","attempt":2,"statusCode":503,"updatedAt":"2026-03-01T12:00:00Z"}`, 1},
		{`{"v":1,"id":"dlv_1","state":"pending"}`, 0},
	} {
		d, err := decodeDelivery([]byte(tc.raw))
		if err != nil || len(d.Attempts) != tc.attempts || (tc.attempts > 0 && d.Attempts[len(d.Attempts)-1].StatusCode != 503) {
			t.Fatalf("decodeDelivery(%s) = %+v, %v", tc.raw, d, err)
		}
	}
	if _, err := decodeDelivery([]byte(`{"v":3,"id":"dlv_1"}`)); err == nil {
		t.Fatal("a delivery record of an unknown version was read")
	}
	// A version 2 record reads with its secret opened; a version 1 record
	// (a clear secret the migration missed) is refused, not read.
	s := openWebhookStore(t, t.TempDir(), &fakeClock{t: at})
	val, err := s.encodeWebhook(&reg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.decodeWebhook(val)
	if err != nil || w.ID != reg.ID || w.Secret != reg.Secret || !w.Subscribes(webhook.SwapCompleted) || !w.CreatedAt.Equal(at) {
		t.Fatalf("decoded %+v %v", w, err)
	}
	if w, err := s.decodeWebhook([]byte(`{"v":1,"id":"wh_1","partnerId":"ptn_a","url":"https://example.com/hook","events":["swap.completed"],"secret":"0123456789abcdef","active":true,"createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:00:00Z"}`)); err == nil {
		t.Fatalf("a version 1 webhook record was read: %+v", w)
	}
}

func withoutSecret(r webhook.Registration) webhook.Registration {
	r.Secret = ""
	return r
}

// TestCountOutbox counts owed deliveries as due or scheduled by their next
// attempt's time, stops at the limit, and counts none once delivered.
func TestCountOutbox(t *testing.T) {
	ctx := context.Background()
	s, clock, _ := openStoreWithHook(t, webhook.SwapCompleted)
	for i := range 3 {
		ev := webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now(), Data: webhook.SwapData{TransactionID: fmt.Sprintf("tx%d", i)}}
		if _, err := s.Publish(ctx, "ptn_a", ev); err != nil {
			t.Fatal(err)
		}
	}
	count := func(now time.Time, limit int) (int, int) {
		t.Helper()
		due, scheduled, err := s.CountOutbox(ctx, now, limit)
		if err != nil {
			t.Fatal(err)
		}
		return due, scheduled
	}
	if due, scheduled := count(clock.Now(), 100); due != 3 || scheduled != 0 {
		t.Fatalf("after three events: %d due, %d scheduled", due, scheduled)
	}
	entries := dueEntries(t, s, clock.Now())
	if err := finishAttempt(ctx, s, entries[0], &webhook.DeliveryRecord{Attempt: 1, StatusCode: 500, State: webhook.DeliveryRetrying}, clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := finishAttempt(ctx, s, entries[1], &webhook.DeliveryRecord{Attempt: 1, StatusCode: 204, State: webhook.DeliveryDelivered}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if due, scheduled := count(clock.Now(), 100); due != 1 || scheduled != 1 {
		t.Fatalf("after a retry and a delivery: %d due, %d scheduled; want 1 and 1", due, scheduled)
	}
	if due, scheduled := count(clock.Now().Add(time.Minute), 100); due != 2 || scheduled != 0 {
		t.Fatalf("once the retry is due: %d due, %d scheduled; want 2 and 0", due, scheduled)
	}
	if due, scheduled := count(clock.Now().Add(time.Minute), 1); due+scheduled != 1 {
		t.Fatalf("limit 1 counted %d", due+scheduled)
	}
}

// TestWebhookCache reads a registration through the cache, both ways, and
// expects a delete to reach every later read, a cached copy to be the
// caller's own, and another partner's ID to stay hidden.
func TestWebhookCache(t *testing.T) {
	ctx := context.Background()
	s, _, w := openStoreWithHook(t, webhook.SwapCompleted)
	for range 3 {
		got, err := s.WebhookByID(ctx, w.ID)
		if err != nil || got.PartnerID != "ptn_a" || got.Secret != w.Secret {
			t.Fatalf("by id %+v %v", got, err)
		}
		got.Secret = "changed by a caller"
		if got, err := s.Webhook(ctx, "ptn_a", w.ID); err != nil || got.Secret != w.Secret || got.URL != w.URL {
			t.Fatalf("webhook %+v %v", got, err)
		}
	}
	if _, err := s.Webhook(ctx, "ptn_b", w.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another partner's webhook: %v", err)
	}
	stats := map[string][2]uint64{}
	s.CacheStats(func(c string, h, m uint64) { stats[c] = [2]uint64{h, m} })
	if got := stats["webhook"]; got[1] != 1 || got[0] != 6 {
		t.Fatalf("webhook cache hits and misses %v, want 6 and 1", got)
	}
	if err := s.DeleteWebhook(ctx, "ptn_a", w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebhookByID(ctx, w.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted webhook by id: %v", err)
	}
	if _, err := s.Webhook(ctx, "ptn_a", w.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted webhook: %v", err)
	}
}
