package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/internal/metricstest"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/store"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// row is a partner quote that carried a fee.
func row(partner, quote string, at time.Time) *account.Activity {
	return &account.Activity{PartnerID: partner, ID: quote, Kind: account.ActivityQuote, Status: account.ActivityQuoted,
		Provider: "aggregator", Tool: "sbx-arcbridge", FromChain: 42161, ToChain: 8453,
		FromAmount: "1000000000", ToAmount: "996000000", FeeMicroUSD: 3000, CreatedAt: at,
		Earning: &account.Earning{Ecosystem: "evm", FeeAmount: "3000", State: account.EarningPending}}
}

// eachRow calls fn for each of a partner's records that carry an earning.
func eachRow(store *pebblestore.Store, partner string, fn func(*account.Activity)) error {
	return store.EachActivity(context.Background(), partner, time.Time{}, time.Time{}, func(a *account.Activity) bool {
		if a.Earning != nil {
			fn(a)
		}
		return true
	})
}

func TestGroupCommitDurableAndIdempotent(t *testing.T) {
	dir := t.TempDir()
	store, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem()
	l, err := Start(sys, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	at := time.Unix(1_750_000_000, 0)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs <- l.Record(ctx, row("ptn_a", fmt.Sprintf("q%03d", i), at.Add(time.Duration(i)*time.Millisecond)))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if l.Rows() != n {
		t.Fatalf("committed %d rows, want %d", l.Rows(), n)
	}
	if l.Commits() >= n {
		t.Fatalf("%d commits for %d concurrent rows: no group commit", l.Commits(), n)
	}
	t.Logf("%d rows in %d commits", l.Rows(), l.Commits())
	// The same quote again (a retry: same id, issued at the same time) is
	// not counted twice.
	if err := l.Record(context.Background(), row("ptn_a", "q007", at.Add(7*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	l.Stop()
	sys.Shutdown()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: every acknowledged row is there, once.
	store, err = pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	seen := map[string]int{}
	err = eachRow(store, "ptn_a", func(r *account.Activity) {
		seen[r.ID]++
		if r.Earning.State != account.EarningPending {
			t.Errorf("row %+v", r)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("reopened store has %d rows, want %d", len(seen), n)
	}
	// Each row is pending once in its ecosystem's index.
	prefix := pebblestore.LedgerEcosystemPrefix("evm")
	it, err := store.DB().NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: append(prefix[:len(prefix):len(prefix)], 0xff)})
	if err != nil {
		t.Fatal(err)
	}
	pending := 0
	for ok := it.First(); ok; ok = it.Next() {
		pending++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if pending != n {
		t.Fatalf("%d pending index entries for %d rows", pending, n)
	}
	for q, c := range seen {
		if c != 1 {
			t.Fatalf("quote %s counted %d times", q, c)
		}
	}
	var other int
	_ = eachRow(store, "ptn_b", func(*account.Activity) { other++ })
	if other != 0 {
		t.Fatalf("another partner sees %d rows", other)
	}
}

// commitLog is an Appender that notes when each commit started and how
// many rows it carried; each commit takes the given time, as a sync would.
type commitLog struct {
	took   time.Duration
	mu     sync.Mutex
	starts []time.Time
	sizes  []int
	synced []store.Durability
}

func (c *commitLog) RecordQuotes(_ context.Context, recs []store.EncodedQuote, d store.Durability) ([]bool, error) {
	c.mu.Lock()
	c.starts = append(c.starts, time.Now())
	c.sizes = append(c.sizes, len(recs))
	c.synced = append(c.synced, d)
	c.mu.Unlock()
	time.Sleep(c.took)
	return make([]bool, len(recs)), nil
}

func (c *commitLog) snapshot() ([]time.Time, []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.starts...), append([]int(nil), c.sizes...)
}

var _ Appender = (*commitLog)(nil)

// recordAll records n rows concurrently and waits for all of them.
func recordAll(t *testing.T, l *Ledger, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := l.Record(ctx, row("ptn_a", fmt.Sprintf("%s%d", prefix, i), time.Now())); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestSyncIntervalSpacesCommitsOnlyWhenBusy(t *testing.T) {
	const interval = 300 * time.Millisecond
	log := &commitLog{took: 50 * time.Millisecond}
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, log, Options{SyncInterval: interval, BusyBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()

	// One quote at a time never waits for the interval.
	for i := range 3 {
		begin := time.Now()
		recordAll(t, l, fmt.Sprintf("lone%d-", i), 1)
		if took := time.Since(begin); took >= interval/2 {
			t.Fatalf("a lone row took %v (a commit takes %v, the interval is %v)", took, log.took, interval)
		}
	}
	// Bursts: rows that arrive during a commit gather into the next one;
	// after a commit of BusyBatch rows or more the next waits out the
	// interval, and every row that arrives meanwhile joins it.
	for i := range 4 {
		recordAll(t, l, fmt.Sprintf("burst%d-", i), 12)
	}
	starts, sizes := log.snapshot()
	spaced := 0
	for i := 1; i < len(sizes); i++ {
		if sizes[i-1] < 4 {
			continue
		}
		spaced++
		if gap := starts[i].Sub(starts[i-1]); gap < interval-10*time.Millisecond {
			t.Fatalf("commit %d started %v after a busy commit of %d rows, want at least %v (sizes %v)", i, gap, sizes[i-1], interval, sizes)
		}
	}
	if spaced == 0 {
		t.Fatalf("no busy commit in %v", sizes)
	}
}

func TestFullBatchDoesNotWaitForTheInterval(t *testing.T) {
	log := &commitLog{took: time.Millisecond}
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, log, Options{SyncInterval: time.Hour, MaxBatch: 4, BusyBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	recordAll(t, l, "first", 1)
	done := make(chan struct{})
	go func() { recordAll(t, l, "full", 4); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a full batch waited for the interval")
	}
	if _, sizes := log.snapshot(); len(sizes) != 2 || sizes[1] != 4 {
		t.Fatalf("commit sizes %v, want [1 4]", sizes)
	}
}

// BenchmarkRecordParallel measures durable quote records per second from
// many concurrent quotes, and how many share a commit, with commits back to
// back and spaced by the default interval.
func BenchmarkRecordParallel(b *testing.B) {
	for _, iv := range []time.Duration{0, DefaultSyncInterval} {
		b.Run("interval="+iv.String(), func(b *testing.B) { benchRecordParallel(b, iv) })
	}
}

func benchRecordParallel(b *testing.B, interval time.Duration) {
	store, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, store, Options{SyncInterval: interval})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Stop()
	var n atomic.Int64
	at := time.Unix(1_750_000_000, 0)
	b.ReportAllocs()
	b.SetParallelism(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			id := fmt.Sprintf("q%09d", i)
			if err := l.Record(context.Background(), row("ptn_bench", id, at.Add(time.Duration(i)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(l.Rows())/float64(max(l.Commits(), 1)), "rows/commit")
}

// feeFree is a partner quote's record without a fee: analytics only.
func feeFree(partner, quote string, at time.Time) *account.Activity {
	a := row(partner, quote, at)
	a.FeeMicroUSD, a.Earning = 0, nil
	return a
}

func (c *commitLog) durabilities() ([]int, []store.Durability) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.sizes...), append([]store.Durability(nil), c.synced...)
}

// waitCommits waits until the n-th commit has started.
func waitCommits(t *testing.T, log *commitLog, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if sizes, _ := log.durabilities(); len(sizes) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit %d never started", n)
		}
	}
}

// TestFeeFreeRecordsNeitherWaitNorSync: a fee-free quote's record is
// queued and Record returns before any commit ends; a commit of such
// records alone is unsynced, and one that carries a record a quote waits
// for is synced whatever else it carries.
func TestFeeFreeRecordsNeitherWaitNorSync(t *testing.T) {
	log := &commitLog{took: 200 * time.Millisecond}
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, log, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A record with a fee starts the first commit, which takes 200 ms.
	first := make(chan error, 1)
	go func() { first <- l.Record(ctx, row("ptn_a", "q_fee1", time.Now())) }()
	waitCommits(t, log, 1)
	// While it runs, fee-free records return at once and gather.
	began := time.Now()
	for i := range 5 {
		if err := l.Record(ctx, feeFree("ptn_a", fmt.Sprintf("q_free%d", i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(began); took > 150*time.Millisecond {
		t.Fatalf("five fee-free records took %v to record: they waited for a commit", took)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The second commit carries them alone: unsynced.
	for deadline := time.Now().Add(10 * time.Second); l.Queued() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d fee-free records never committed", l.Queued())
		}
	}
	// While a third commit runs, a fee-free record and one with a fee
	// gather into the fourth, which is synced.
	go func() { first <- l.Record(ctx, row("ptn_a", "q_fee2", time.Now())) }()
	waitCommits(t, log, 3)
	if err := l.Record(ctx, feeFree("ptn_a", "q_free9", time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, row("ptn_a", "q_fee3", time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	sizes, synced := log.durabilities()
	total := 0
	for i, n := range sizes {
		total += n
		if i == 1 && (n != 5 || synced[i] != store.Unsynced) {
			t.Fatalf("commit 2 carried %d rows, durability %v; want the 5 fee-free rows unsynced (sizes %v, %v)", n, synced[i], sizes, synced)
		}
		if i != 1 && synced[i] != store.Synced {
			t.Fatalf("commit %d carried a record with a fee and was not synced (sizes %v, %v)", i+1, sizes, synced)
		}
	}
	if len(sizes) != 4 || sizes[3] != 2 || total != 9 || l.Rows() != 9 {
		t.Fatalf("commits of %v rows (%d counted), want [1 5 1 2]", sizes, l.Rows())
	}
	v := metricstest.Values(t, l.Collector())
	for k, want := range map[string]float64{
		"swapgate_ledger_batch_rows_count": 4, "swapgate_ledger_batch_rows_sum": 9,
		`swapgate_ledger_batch_rows_bucket{le="1"}`: 2, `swapgate_ledger_batch_rows_bucket{le="2"}`: 3,
		`swapgate_ledger_batch_rows_bucket{le="8"}`:                   4,
		`swapgate_ledger_commit_seconds_count{durability="synced"}`:   3,
		`swapgate_ledger_commit_seconds_count{durability="unsynced"}`: 1,
		"swapgate_ledger_commits_total":                               4, "swapgate_ledger_rows_total": 9,
		"swapgate_ledger_commit_failures_total": 0, "swapgate_ledger_queued_rows": 0,
	} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v", k, v[k], want)
		}
	}
	// Each commit took the log's 200 ms.
	if s := v[`swapgate_ledger_commit_seconds_sum{durability="synced"}`]; s < 0.6 || s > 6 {
		t.Errorf("synced commits took %vs in all, want about 0.6", s)
	}
}

// failingAppender refuses every commit.
type failingAppender struct{}

func (failingAppender) RecordQuotes(context.Context, []store.EncodedQuote, store.Durability) ([]bool, error) {
	return nil, errors.New("disk full")
}

// TestFailedCommitsAreCounted: a failed commit is answered to its quote
// and counted as a failure, not as a commit or rows.
func TestFailedCommitsAreCounted(t *testing.T) {
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, failingAppender{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), row("ptn_a", "q1", time.Now())); err == nil {
		t.Fatal("a failed commit was answered as a success")
	}
	v := metricstest.Values(t, l.Collector())
	if v["swapgate_ledger_commit_failures_total"] != 1 || v["swapgate_ledger_commits_total"] != 0 || v["swapgate_ledger_rows_total"] != 0 {
		t.Fatalf("after a failed commit: %v", v)
	}
}

// TestFeeFreeRecordsWaitPastTheBound: once MaxUnsynced fee-free records
// are queued, the next one waits for its commit, so a slow store slows
// quotes down instead of growing the queue.
func TestFeeFreeRecordsWaitPastTheBound(t *testing.T) {
	log := &commitLog{took: 300 * time.Millisecond}
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, log, Options{MaxUnsynced: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	go func() { _ = l.Record(ctx, row("ptn_a", "q_fee", time.Now())) }()
	waitCommits(t, log, 1)
	began := time.Now()
	for i := range 2 {
		if err := l.Record(ctx, feeFree("ptn_a", fmt.Sprintf("q_free%d", i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(began); took > 200*time.Millisecond {
		t.Fatalf("two fee-free records within the bound took %v", took)
	}
	if err := l.Record(ctx, feeFree("ptn_a", "q_free2", time.Now())); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 200*time.Millisecond {
		t.Fatalf("the record past the bound returned after %v, before the commit it joined", took)
	}
	l.Stop()
	if l.Queued() != 0 || l.Rows() != 4 {
		t.Fatalf("after Stop: %d queued, %d rows committed; want 0 and 4", l.Queued(), l.Rows())
	}
}

// gatedAppender holds every commit until the test opens its gate, and
// counts the rows committed.
type gatedAppender struct {
	gate chan struct{}
	rows atomic.Int64
}

func (g *gatedAppender) RecordQuotes(_ context.Context, recs []store.EncodedQuote, _ store.Durability) ([]bool, error) {
	<-g.gate
	g.rows.Add(int64(len(recs)))
	return make([]bool, len(recs)), nil
}

// TestRecordedWaitsForTheRecordsSentBefore: fee-free records return before
// they are committed; Recorded returns only once every record sent before
// it is in the store (a tracked swap then finds its quote's activity line),
// and at once when nothing is queued.
func TestRecordedWaitsForTheRecordsSentBefore(t *testing.T) {
	g := &gatedAppender{gate: make(chan struct{})}
	sys := actors.NewSystem()
	defer sys.Shutdown()
	l, err := Start(sys, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if err := l.Record(ctx, feeFree("ptn_a", fmt.Sprintf("q_free%d", i), time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan int64, 1)
	go func() {
		if err := l.Recorded(ctx); err != nil {
			t.Error(err)
		}
		done <- g.rows.Load()
	}()
	select {
	case n := <-done:
		t.Fatalf("Recorded returned with %d of 3 rows committed, the commit still held", n)
	case <-time.After(100 * time.Millisecond):
	}
	close(g.gate)
	if n := <-done; n != 3 {
		t.Fatalf("Recorded returned with %d rows committed, want 3", n)
	}
	if err := l.Recorded(ctx); err != nil {
		t.Fatalf("Recorded with nothing queued: %v", err)
	}
}
