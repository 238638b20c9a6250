package tickets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/store"
)

// plainIssue is a quote without a deposit target (an aggregator quote).
func plainIssue(now time.Time) *quote.Issued {
	is := issue(now)
	is.Route = &quote.Route{Tool: "t"}
	is.Provider = "aggregator"
	return is
}

// TestSharedKeeperFindsAPeersTicket: two keepers over one store, as two
// nodes of a cluster: node B's lookup of a quote node A issued a moment
// ago, still in A's buffer, waits for A's commit; a lookup that cannot be
// another node's pending ticket answers at once; a keeper that is not
// shared never waits.
func TestSharedKeeperFindsAPeersTicket(t *testing.T) {
	const lag = 300 * time.Millisecond
	cases := []struct {
		name string
		// shared makes B a Shared keeper.
		shared bool
		// issuedAgo is how long before the lookup A issued the quote.
		issuedAgo time.Duration
		// releaseAfter lets A commit that long after the lookup starts.
		releaseAfter time.Duration
		found        bool
		// minWait is a lower bound of the lookup's time (a miss waits out
		// the lag); maxWait an upper bound far above what it should take.
		minWait, maxWait time.Duration
	}{
		{name: "committed while B waits", shared: true, releaseAfter: 50 * time.Millisecond, found: true, maxWait: 10 * time.Second},
		{name: "never committed: B waits out the lag", shared: true, releaseAfter: time.Hour, minWait: lag, maxWait: 10 * time.Second},
		{name: "issued long ago: no wait", shared: true, issuedAgo: time.Minute, releaseAfter: time.Hour, maxWait: lag},
		{name: "not shared: no wait", shared: false, releaseAfter: 50 * time.Millisecond, maxWait: lag},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			log := openStore(t)
			gateA := &gatedStore{TicketLog: log, gate: make(chan struct{})}
			a := Start(gateA, Options{Shared: true, SharedLag: lag})
			b := Start(log, Options{Shared: tc.shared, SharedLag: lag})
			var releaseOnce sync.Once
			release := func() { releaseOnce.Do(func() { close(gateA.gate) }) }
			t.Cleanup(func() {
				release()
				a.Close()
				b.Close()
			})
			is := plainIssue(time.Now().Add(-tc.issuedAgo))
			if err := a.Keep(ctx, is); err != nil {
				t.Fatal(err)
			}
			if tc.releaseAfter < time.Hour {
				time.AfterFunc(tc.releaseAfter, release)
			}
			start := time.Now()
			tk, err := b.Ticket(ctx, is.ID)
			took := time.Since(start)
			switch {
			case tc.found && (err != nil || tk.ID != is.ID):
				t.Fatalf("B's lookup: %v, %v; want A's ticket", tk, err)
			case !tc.found && !errors.Is(err, store.ErrNotFound):
				t.Fatalf("B's lookup: %v, %v; want not found", tk, err)
			case took < tc.minWait || took > tc.maxWait:
				t.Fatalf("B's lookup took %s, want between %s and %s", took, tc.minWait, tc.maxWait)
			}
		})
	}
}

// TestSharedKeeperCommitsDepositTicketsBeforeAnswering: a Shared keeper's
// Keep of a quote with a deposit target returns only once its ticket is
// committed (a deposit on another node finds it by target alone), with
// the commit's failure, or with its context's end; a quote without one
// does not wait.
func TestSharedKeeperCommitsDepositTicketsBeforeAnswering(t *testing.T) {
	boom := errors.New("store down")
	cases := []struct {
		name    string
		issue   func(time.Time) *quote.Issued
		fail    error
		cancel  bool
		waits   bool
		wantErr error
	}{
		{name: "deposit target: waits for its commit", issue: issue, waits: true},
		{name: "deposit target: the commit's failure", issue: issue, fail: boom, waits: true, wantErr: boom},
		{name: "deposit target: the caller gives up", issue: issue, cancel: true, waits: true, wantErr: context.Canceled},
		{name: "no deposit target: no wait", issue: plainIssue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := openStore(t)
			g := &gatedStore{TicketLog: log, gate: make(chan struct{}), fail: tc.fail}
			k := Start(g, Options{Shared: true})
			var releaseOnce sync.Once
			release := func() { releaseOnce.Do(func() { close(g.gate) }) }
			t.Cleanup(func() {
				g.mu.Lock()
				g.fail = nil
				g.mu.Unlock()
				release()
				k.Close()
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			is := tc.issue(time.Now())
			done := make(chan error, 1)
			go func() { done <- k.Keep(ctx, is) }()
			select {
			case err := <-done:
				if tc.waits {
					t.Fatalf("Keep returned %v before the commit", err)
				}
				if err != nil {
					t.Fatal(err)
				}
				return
			case <-time.After(100 * time.Millisecond):
				if !tc.waits {
					t.Fatal("Keep waits for the commit of a ticket without a deposit target")
				}
			}
			if tc.cancel {
				cancel()
			} else {
				release()
			}
			err := <-done
			if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
				t.Fatalf("Keep: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			id, err := log.QuoteByDeposit(context.Background(), "0xdep", "")
			if err != nil || id != is.ID {
				t.Fatalf("the store's deposit index: %q, %v; want %s committed", id, err, is.ID)
			}
		})
	}
}
