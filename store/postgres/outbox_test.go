package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// The Pebble store's outbox tests (store/pebble/outbox_test.go and
// store/pebble/webhook_test.go), run against PostgreSQL, and the leases
// that let several nodes deliver from one outbox.

// openStoreWithHook opens a store on a fake clock holding one webhook of
// ptn_a, created at the clock's start.
func openStoreWithHook(t *testing.T, events ...string) (*Store, *fakeClock, *webhook.Registration) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	w := newHook("ptn_a", events...)
	if err := s.CreateWebhook(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return s, clock, w
}

// finishAttempt records the outcome of one attempt of e, alone.
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

func deliveryIDs(es []*webhook.OutboxEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.DeliveryID)
	}
	return out
}

// TestFinishAttemptsOneBatch records a delivery, a retry and the outcome of a
// deleted webhook's delivery together, and checks each as recording it alone
// would leave it.
func TestFinishAttemptsOneBatch(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := openTest(t, Options{Now: clock.Now})
	a, b, gone := newHook("ptn_a", webhook.SwapCompleted), newHook("ptn_a", webhook.SwapCompleted), newHook("ptn_b", webhook.SwapCompleted)
	for _, w := range []*webhook.Registration{a, b, gone} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	ev := webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now(), Data: webhook.SwapData{TransactionID: "tx1"}}
	for _, p := range []string{"ptn_a", "ptn_b"} {
		if _, err := s.Publish(ctx, p, ev); err != nil {
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
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE webhook_id = $1`, gone.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("deleted webhook has %d history rows (%v)", n, err)
	}
	if err := s.FinishAttempts(ctx, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
}

// TestDueDeliveriesFrom checks the lower bound: entries due before from are
// not read, those due at or after it are, up to now.
func TestDueDeliveriesFrom(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapCompleted)
	start := clock.Now()
	var ids []string
	for range 4 {
		e, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.DeliveryID)
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
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDueDeliveriesManyChunks: a scan longer than one claim reads every
// entry once, in due order.
func TestDueDeliveriesManyChunks(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapCompleted)
	var ids []string
	for range 2*claimChunk + 5 {
		e, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.DeliveryID)
		clock.Advance(time.Millisecond)
	}
	if got := deliveryIDs(dueEntries(t, s, clock.Now())); !slices.Equal(got, ids) {
		t.Fatalf("read %d entries, want %d in order", len(got), len(ids))
	}
}

// TestFinishAttemptsLogsEveryAttempt records a delivery's attempts one by
// one and checks the attempt log after each, including the bound on its
// length.
func TestFinishAttemptsLogsEveryAttempt(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapCompleted)
	start := clock.Now()
	if _, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	due := dueEntries(t, s, clock.Now())
	if len(due) != 1 {
		t.Fatalf("%d entries due", len(due))
	}
	e := due[0]
	history := func() *webhook.DeliveryRecord {
		t.Helper()
		hist, err := s.Deliveries(ctx, "ptn_a", w.ID, 10)
		if err != nil || len(hist) != 1 {
			t.Fatalf("history %+v, %v", hist, err)
		}
		return hist[0]
	}
	if rec := history(); rec.State != webhook.DeliveryPending || len(rec.Attempts) != 0 {
		t.Fatalf("pending row %+v", rec)
	}
	attempt := func(n, status int, errText string, retry bool) {
		t.Helper()
		sent := start.Add(time.Duration(n) * time.Minute)
		clock.t = sent.Add(time.Second)
		rec := &webhook.DeliveryRecord{Attempt: n, StatusCode: status, LatencyMs: int64(n), Error: errText, State: webhook.DeliveryDelivered}
		out := webhook.AttemptOutcome{Entry: e, Record: rec, At: sent}
		if retry {
			rec.State, out.RetryAt = webhook.DeliveryRetrying, sent.Add(time.Minute)
		}
		if err := s.FinishAttempts(ctx, []webhook.AttemptOutcome{out}); err != nil {
			t.Fatal(err)
		}
		if rec.Attempts != nil || rec.ID != "" {
			t.Fatalf("FinishAttempts modified the outcome's record: %+v", rec)
		}
	}
	attempt(1, 500, "receiver answered HTTP 500", true)
	attempt(2, 0, "timeout: no answer within 5s", true)
	attempt(3, 200, "", false)
	got := history()
	want := []webhook.Attempt{
		{Attempt: 1, StatusCode: 500, LatencyMs: 1, Error: "receiver answered HTTP 500", At: start.Add(time.Minute)},
		{Attempt: 2, StatusCode: 0, LatencyMs: 2, Error: "timeout: no answer within 5s", At: start.Add(2 * time.Minute)},
		{Attempt: 3, StatusCode: 200, LatencyMs: 3, At: start.Add(3 * time.Minute)},
	}
	if got.Attempt != 3 || got.StatusCode != 200 || got.State != webhook.DeliveryDelivered || !sameAttempts(got.Attempts, want) {
		t.Fatalf("row %+v\nwant attempts %+v", got, want)
	}
	// The delivered entry is gone: a longer schedule needs it back.
	if _, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if due = dueEntries(t, s, clock.Now()); len(due) != 1 {
		t.Fatalf("%d entries due", len(due))
	}
	e = due[0]
	for n := 1; n <= webhook.MaxAttemptsKept+5; n++ {
		attempt(n, 503, "receiver answered HTTP 503", true)
	}
	hist, err := s.Deliveries(ctx, "ptn_a", w.ID, 1)
	if err != nil || len(hist) != 1 {
		t.Fatal(hist, err)
	}
	got = hist[0]
	if len(got.Attempts) != webhook.MaxAttemptsKept || got.Attempts[0].Attempt != 6 || got.Attempts[len(got.Attempts)-1].Attempt != webhook.MaxAttemptsKept+5 || got.Attempt != webhook.MaxAttemptsKept+5 {
		t.Fatalf("%d attempts kept, %d to %d (row attempt %d)", len(got.Attempts), got.Attempts[0].Attempt, got.Attempts[len(got.Attempts)-1].Attempt, got.Attempt)
	}
}

func sameAttempts(a, b []webhook.Attempt) bool {
	return slices.EqualFunc(a, b, func(x, y webhook.Attempt) bool {
		return x.Attempt == y.Attempt && x.StatusCode == y.StatusCode && x.LatencyMs == y.LatencyMs && x.Error == y.Error && x.At.Equal(y.At)
	})
}

// outboxEntry reads one entry by its key through OutboxEntries.
func outboxEntry(t *testing.T, s *Store, due time.Time, id string) *webhook.OutboxEntry {
	t.Helper()
	var got *webhook.OutboxEntry
	calls := 0
	if err := s.OutboxEntries(context.Background(), []store.OutboxKey{{Due: due, DeliveryID: id}}, func(i int, e *webhook.OutboxEntry) {
		calls++
		got = e
	}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("%d calls for one key", calls)
	}
	return got
}

// TestOutboxEntriesAndNextDue reads entries again by the keys a scan saw,
// and finds the next retry coming due.
func TestOutboxEntriesAndNextDue(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapCompleted)
	start := clock.Now()
	if _, ok, err := s.NextDue(ctx, start); err != nil || ok {
		t.Fatalf("next due in an empty outbox: %v %v", ok, err)
	}
	var keys []store.OutboxKey
	for range 3 {
		e, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, store.OutboxKey{Due: e.Due, DeliveryID: e.DeliveryID})
		clock.Advance(time.Millisecond)
	}
	asked := []store.OutboxKey{keys[0], {Due: keys[1].Due.Add(time.Nanosecond), DeliveryID: keys[1].DeliveryID}, keys[2]}
	var got []string
	if err := s.OutboxEntries(ctx, asked, func(i int, e *webhook.OutboxEntry) {
		id := "-"
		if e != nil {
			id = e.DeliveryID
			if e.WebhookID != w.ID || !e.Due.Equal(asked[i].Due) {
				t.Errorf("entry %d: %+v", i, e)
			}
		}
		got = append(got, id)
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{keys[0].DeliveryID, "-", keys[2].DeliveryID}; !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if _, ok, err := s.NextDue(ctx, keys[2].Due); err != nil || ok {
		t.Fatalf("next due after the last entry's due time: %v %v", ok, err)
	}
	if next, ok, err := s.NextDue(ctx, start.Add(-time.Nanosecond)); err != nil || !ok || !next.Equal(start) {
		t.Fatalf("next due %v %v %v", next, ok, err)
	}
	e := outboxEntry(t, s, keys[0].Due, keys[0].DeliveryID)
	retryAt := start.Add(90 * time.Second)
	if err := finishAttempt(ctx, s, e, &webhook.DeliveryRecord{Attempt: 1, StatusCode: 500, State: webhook.DeliveryRetrying, Error: "status 500"}, retryAt); err != nil {
		t.Fatal(err)
	}
	if got := outboxEntry(t, s, keys[0].Due, keys[0].DeliveryID); got != nil {
		t.Fatalf("entry at its old key after the retry was scheduled: %+v", got)
	}
	if next, ok, err := s.NextDue(ctx, keys[2].Due); err != nil || !ok || !next.Equal(retryAt) {
		t.Fatalf("next due %v %v %v, want %v", next, ok, err, retryAt)
	}
	if got := outboxEntry(t, s, retryAt, keys[0].DeliveryID); got == nil || got.Attempt != 1 {
		t.Fatalf("retry entry %+v", got)
	}
	if err := s.OutboxEntries(ctx, nil, func(int, *webhook.OutboxEntry) { t.Fatal("called") }); err != nil {
		t.Fatal(err)
	}
}

// TestOutboxFanOutAndDurability publishes an event, opens the database
// again (another node) and finds the entries, then walks one delivery
// through a retry, a skip and its completion.
func TestOutboxFanOutAndDurability(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := db.open(t, Options{Now: clock.Now})
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
	ev := webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now(), Data: webhook.SwapData{TransactionID: "tx1"}}
	if es, err := s.Publish(ctx, "ptn_a", ev); err != nil || len(es) != 1 || es[0].WebhookID != subscribed.ID {
		t.Fatalf("Publish = %+v, %v", es, err)
	}
	if _, err := s.Publish(ctx, "ptn_a", webhook.Event{Name: "swap.done", Time: clock.Now()}); err == nil {
		t.Fatal("unknown event published")
	}
	if es, err := s.Publish(ctx, "ptn_none", ev); err != nil || es != nil {
		t.Fatalf("Publish with no subscriber = %+v, %v", es, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = db.open(t, Options{Now: clock.Now})
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
	if _, err := s.Deliveries(ctx, "ptn_b", subscribed.ID, 10); err == nil {
		t.Fatal("another partner read the history")
	}
}

func TestDeliveriesNewestFirstAndLimited(t *testing.T) {
	ctx := context.Background()
	s, clock, w := openStoreWithHook(t, webhook.SwapPending)
	var ids []string
	for i := range 5 {
		clock.Advance(time.Second)
		e, err := s.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapPending, Time: clock.Now(), Data: map[string]int{"n": i}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.DeliveryID)
	}
	got, err := s.Deliveries(ctx, "ptn_a", w.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != ids[4] || got[1].ID != ids[3] || got[2].ID != ids[2] {
		t.Fatalf("got %d rows, want the newest three of %v", len(got), ids)
	}
	if got, err := s.Deliveries(ctx, "ptn_a", w.ID, 0); err != nil || len(got) != 0 {
		t.Fatalf("limit 0: %v %v", got, err)
	}
	if err := s.DeleteWebhook(ctx, "ptn_a", w.ID); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "deliveries"); n != 0 {
		t.Fatalf("%d history rows left after the webhook's delete", n)
	}
}

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
	if err := s.DropDelivery(ctx, entries[2]); err != nil {
		t.Fatal(err)
	}
	if due, scheduled := count(clock.Now().Add(time.Minute), 100); due != 1 || scheduled != 0 {
		t.Fatalf("after a drop: %d due, %d scheduled; want 1 and 0", due, scheduled)
	}
}

// TestOutboxLeases: what one node claims, another does not read until the
// first gives it back or its lease lapses; then the second takes it over,
// and the first's late outcome is not recorded over the second's.
func TestOutboxLeases(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	const lease = 2 * time.Second
	a := db.open(t, Options{Now: clock.Now, OutboxLease: lease})
	b := db.open(t, Options{Now: clock.Now, OutboxLease: lease})
	w := newHook("ptn_a", webhook.SwapCompleted)
	if err := a.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	var all []*webhook.OutboxEntry
	for range 4 {
		e, err := a.PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
		clock.Advance(time.Millisecond)
	}
	now := clock.Now()
	ids := deliveryIDs(all)

	// a takes the first entry, skips the second (its lease given back), and
	// stops after the third (the fourth given back).
	var took []*webhook.OutboxEntry
	if err := a.DueDeliveries(ctx, time.Time{}, now, func(_ time.Time, id, _ []byte) bool {
		return string(id) == ids[1]
	}, func(e *webhook.OutboxEntry) bool {
		took = append(took, e)
		return len(took) < 2
	}); err != nil {
		t.Fatal(err)
	}
	if got := deliveryIDs(took); !slices.Equal(got, []string{ids[0], ids[2]}) {
		t.Fatalf("a took %v, want %v", got, []string{ids[0], ids[2]})
	}
	if got := deliveryIDs(dueEntries(t, b, now)); !slices.Equal(got, []string{ids[1], ids[3]}) {
		t.Fatalf("b reads %v, want what a gave back %v", got, []string{ids[1], ids[3]})
	}
	// Read by key, an entry a holds is not b's.
	if e := outboxEntry(t, b, all[0].Due, ids[0]); e != nil {
		t.Fatalf("b read by key the entry a holds: %+v", e)
	}
	// a's own rescans read what it holds (and renew the lease).
	if got := deliveryIDs(dueEntries(t, a, now)); !slices.Equal(got, []string{ids[0], ids[2]}) {
		t.Fatalf("a's rescan reads %v", got)
	}

	// a stalls past its lease: b takes the entries over and finishes one.
	time.Sleep(lease + 500*time.Millisecond)
	over := dueEntries(t, b, now)
	if got := deliveryIDs(over); !slices.Equal(got, ids) {
		t.Fatalf("after the lease lapsed b reads %v, want %v", got, ids)
	}
	if err := finishAttempt(ctx, b, over[0], &webhook.DeliveryRecord{Attempt: 1, StatusCode: 503, State: webhook.DeliveryRetrying}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// a's late outcomes: of the entry b rescheduled (no longer at its key)
	// and of the one b holds now; neither is recorded.
	late := []webhook.AttemptOutcome{
		{Entry: took[0], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}},
		{Entry: took[1], Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}},
	}
	if err := a.FinishAttempts(ctx, late); err != nil {
		t.Fatal(err)
	}
	if took[0].Attempt != 0 || took[1].Attempt != 0 {
		t.Fatalf("outcomes not recorded updated their entries: %+v %+v", took[0], took[1])
	}
	hist, err := a.Deliveries(ctx, "ptn_a", w.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, h := range hist {
		states[h.ID] = h.State
	}
	if states[ids[0]] != webhook.DeliveryRetrying || states[ids[2]] != webhook.DeliveryPending {
		t.Fatalf("history after a's late outcomes: %v", states)
	}
	if e := outboxEntry(t, b, all[2].Due, ids[2]); e == nil {
		t.Fatal("the entry b holds is gone")
	}
}

// TestOutboxNodesNeverShareAnEntry: nodes scanning one outbox at once,
// each delivering (finishing) what it claims, deliver every entry exactly
// once.
func TestOutboxNodesNeverShareAnEntry(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	nodes := []*Store{db.open(t, Options{Now: clock.Now}), db.open(t, Options{Now: clock.Now}), db.open(t, Options{Now: clock.Now})}
	w := newHook("ptn_a", webhook.SwapCompleted)
	if err := nodes[0].CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	const entries = 300
	for range entries {
		if _, err := nodes[0].PublishTo(ctx, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		delivered = map[string]int{}
	)
	for _, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// A small batch a scan, as a busy pool would take.
				var batch []webhook.AttemptOutcome
				if err := s.DueDeliveries(ctx, time.Time{}, clock.Now(), nil, func(e *webhook.OutboxEntry) bool {
					batch = append(batch, webhook.AttemptOutcome{Entry: e, Record: &webhook.DeliveryRecord{Attempt: 1, StatusCode: 200, State: webhook.DeliveryDelivered}})
					return len(batch) < 10
				}); err != nil {
					t.Error(err)
					return
				}
				if len(batch) == 0 {
					return
				}
				mu.Lock()
				for _, o := range batch {
					delivered[o.Entry.DeliveryID]++
				}
				mu.Unlock()
				if err := s.FinishAttempts(ctx, batch); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(delivered) != entries {
		t.Fatalf("%d entries delivered, want %d", len(delivered), entries)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	if n := countRows(t, nodes[0], "outbox"); n != 0 {
		t.Fatalf("%d entries left", n)
	}
}
