package pebblestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
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
	s, clock, w := openStoreWithHook(t, webhook.SwapCompleted)
	start := clock.Now()
	var ids []string
	for range 4 {
		id, err := publishTo(ctx, s, w, webhook.Event{Name: webhook.SwapCompleted, Time: clock.Now()})
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

// TestFinishAttemptsLogsEveryAttempt records a delivery's attempts one by
// one and checks the attempt log after each, including the bound on its
// length and a row written before attempts were logged.
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

	// A longer schedule keeps the newest MaxAttemptsKept.
	for n := 4; n <= webhook.MaxAttemptsKept+5; n++ {
		attempt(n, 503, "receiver answered HTTP 503", true)
	}
	got = history()
	if len(got.Attempts) != webhook.MaxAttemptsKept || got.Attempts[0].Attempt != 6 || got.Attempts[len(got.Attempts)-1].Attempt != webhook.MaxAttemptsKept+5 || got.Attempt != webhook.MaxAttemptsKept+5 {
		t.Fatalf("%d attempts kept, %d to %d (row attempt %d)", len(got.Attempts), got.Attempts[0].Attempt, got.Attempts[len(got.Attempts)-1].Attempt, got.Attempt)
	}

	// A row written before attempts were logged (version 1) starts its log
	// with its latest attempt.
	key := deliveryKey(w.ID, e.CreatedAt, e.DeliveryID)
	legacy := `{"v":1,"id":"` + e.DeliveryID + `","webhookId":"` + w.ID + `","event":"swap.completed","attempt":2,"statusCode":503,"latencyMs":7,"error":"receiver answered HTTP 503","state":"retrying","createdAt":"2026-03-01T12:00:00Z","updatedAt":"2026-03-01T12:05:00Z"}`
	if err := s.db.Set(key, []byte(legacy), nil); err != nil {
		t.Fatal(err)
	}
	legacyAttempt := webhook.Attempt{Attempt: 2, StatusCode: 503, LatencyMs: 7, Error: "receiver answered HTTP 503", At: start.Add(5 * time.Minute)}
	if got := history(); !sameAttempts(got.Attempts, []webhook.Attempt{legacyAttempt}) {
		t.Fatalf("legacy row read with attempts %+v", got.Attempts)
	}
	attempt(3, 200, "", false)
	if got := history(); !sameAttempts(got.Attempts, []webhook.Attempt{legacyAttempt, {Attempt: 3, StatusCode: 200, LatencyMs: 3, At: start.Add(3 * time.Minute)}}) {
		t.Fatalf("legacy row after an attempt: %+v", got.Attempts)
	}
}

func sameAttempts(a, b []webhook.Attempt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Attempt != y.Attempt || x.StatusCode != y.StatusCode || x.LatencyMs != y.LatencyMs || x.Error != y.Error || !x.At.Equal(y.At) {
			return false
		}
	}
	return true
}

// publishTo is PublishTo for tests that want the delivery ID alone.
func publishTo(ctx context.Context, s *Store, w *webhook.Registration, ev webhook.Event) (string, error) {
	e, err := s.PublishTo(ctx, w, ev)
	if err != nil {
		return "", err
	}
	return e.DeliveryID, nil
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
	// The second key names no entry (another due time); the rest are read
	// in order.
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
	if want := []string{keys[0].DeliveryID, "-", keys[2].DeliveryID}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
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
}

// TestDueDeliveriesHandsOutOnlyDurableEntries: Pebble shows a committed
// batch to readers once it is applied, before its WAL record is synced, so
// the outbox entry of a state change whose synced commit is still under
// way can be read by the delivery pool. Delivered then, and lost with its
// change in a crash, it would tell a receiver of something the store
// never kept. An entry DueDeliveries hands out survives a crash that
// follows.
func TestDueDeliveriesHandsOutOnlyDurableEntries(t *testing.T) {
	ctx := context.Background()
	// Pebble's files in memory; the secret key file, which the store
	// keeps beside them on the operating system's file system, in dir.
	dir := t.TempDir()
	fs := vfs.NewCrashableMem()
	syncedMkdirAll(t, fs, dir)
	s, err := Open(dir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	w := newHook("ptn_a", webhook.SwapCompleted)
	if err := s.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	// A commit that does not wait for its sync stands for a synced one
	// whose sync has not finished: applied, visible, not yet on disk.
	b := s.DB().NewBatch()
	id, err := s.EnqueueDelivery(b, w, webhook.Event{Name: webhook.SwapCompleted, Time: time.Now(), Data: webhook.SwapData{TransactionID: "tx1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	handed := dueEntries(t, s, time.Now().Add(time.Hour))
	if len(handed) != 1 || handed[0].DeliveryID != id {
		t.Fatalf("handed out %+v, want %s", handed, id)
	}

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := Open(dir, Options{FS: crashed})
	if err != nil {
		t.Fatalf("open after the crash: %v", err)
	}
	defer after.Close()
	if owed := dueEntries(t, after, time.Now().Add(time.Hour)); len(owed) != 1 || owed[0].DeliveryID != id {
		t.Fatalf("after the crash the outbox holds %+v; the entry handed out for delivery, %s, was lost", owed, id)
	}
	if hist, err := after.Deliveries(ctx, "ptn_a", w.ID, 10); err != nil || len(hist) != 1 || hist[0].ID != id {
		t.Fatalf("after the crash the history holds %+v (%v), want %s", hist, err, id)
	}
}

// syncedMkdirAll makes dir and its parents on fs, syncing each parent so
// that a crash clone keeps them.
func syncedMkdirAll(t *testing.T, fs vfs.FS, dir string) {
	t.Helper()
	if parent := filepath.Dir(dir); parent != dir {
		syncedMkdirAll(t, fs, parent)
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := fs.OpenDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}
