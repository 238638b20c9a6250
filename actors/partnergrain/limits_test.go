package partnergrain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/partnerquota"
	"github.com/swapgate/swapgate/store"
)

func receive(t *testing.T, h interface {
	Receive(context.Context, string, []byte) ([]byte, error)
}, r AcquireRequest) AcquireAnswer {
	t.Helper()
	out, err := h.Receive(context.Background(), MethodAcquire, acquireBody(t, r))
	if err != nil {
		t.Fatal(err)
	}
	var a AcquireAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// A request retried after its window ended, on the activation that first
// answered it or on a later one, gets its first answer (a block of a window
// that ended, which no node spends), and the new window grants it nothing:
// the window's count stays what the store holds.
func TestGrainRetriedAcrossAWindowGetsItsFirstAnswer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		failover bool
	}{{"the same activation", false}, {"a later activation", true}} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			cfg := GrainConfig{Store: st, Peers: func() int { return 1 }, Now: clk.Now, Metrics: NewMetrics(), StoreTimeout: time.Second}
			g, err := activate(ctx, cfg, "ptn_a")
			if err != nil {
				t.Fatal(err)
			}
			req := AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n1", RequestID: "r1"}
			first := receive(t, g, req)
			if first.Granted != 50 {
				t.Fatalf("first answer %+v", first)
			}
			clk.Advance(partnerquota.Window + time.Second)
			if tc.failover {
				if g, err = activate(ctx, cfg, "ptn_a"); err != nil {
					t.Fatal(err)
				}
			}
			again := receive(t, g, req)
			if again.Granted != first.Granted || again.WindowStart != first.WindowStart || again.ResetIn > 0 {
				t.Fatalf("retried across the window's end: %+v; want the first answer %+v (its window ended)", again, first)
			}
			next := receive(t, g, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n1", RequestID: "r2"})
			if next.Granted != 50 || next.Remaining != 50 {
				t.Fatalf("the new window's first block: %+v; want 50 of 100, nothing taken by the retry", next)
			}
			if n := st.granted("ptn_a"); n != 100 {
				t.Fatalf("the store holds %d granted; want 100 (50 per window)", n)
			}
		})
	}
}

// A changed limit (the operator's set-limits, which each node reads with the
// partner) is decided under at once on every node: a node holding a block
// of the old limit gives it back and answers the new limit's figures, and a
// node refused under the old one is admitted under the new one.
func TestLimiterFollowsALimitChange(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 3 }, Now: clk.Now})
	n0 := NewLimiter(LimiterConfig{Caller: lc, Self: "n0", Now: clk.Now})
	n1 := NewLimiter(LimiterConfig{Caller: lc, Self: "n1", Now: clk.Now})
	// n0 holds a block of 10 of a limit of 60 and spent one; n1 spends the
	// rest of the window and is refused.
	if a, err := n0.Admit(ctx, "ptn_a", "heavy", 60, clk.Now()); err != nil || !a.Allowed {
		t.Fatalf("n0: %+v, %v", a, err)
	}
	admitted := 0
	for range 100 {
		a, err := n1.Admit(ctx, "ptn_a", "heavy", 60, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if a.Allowed {
			admitted++
		}
	}
	if admitted != 50 {
		t.Fatalf("n1 admitted %d under 60, want 50", admitted)
	}
	tests := []struct {
		name string
		l    *Limiter
	}{{"a node holding a block of the old limit", n0}, {"a node refused under the old limit", n1}}
	for _, tt := range tests {
		a, err := tt.l.Admit(ctx, "ptn_a", "heavy", 600, clk.Now())
		// 600 less what the window granted (at most 60 and the new block).
		if err != nil || !a.Allowed || a.Limit != 600 || a.Remaining < 400 {
			t.Errorf("%s: %+v, %v; want admitted under 600, with the new limit's remaining", tt.name, a, err)
		}
	}
}

// A block a node stopped spending comes back to the window once its lease
// ends, and a node refused meanwhile asks again when the grain said it
// might grant: the window admits its whole limit.
func TestLimiterGivesBackAnUnspentBlock(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	lc := newLocal(GrainConfig{Store: st, Peers: func() int { return 3 }, Now: clk.Now})
	n0 := NewLimiter(LimiterConfig{Caller: lc, Self: "n0", Now: clk.Now})
	n1 := NewLimiter(LimiterConfig{Caller: lc, Self: "n1", Now: clk.Now})
	const limit = 60
	if a, err := n0.Admit(ctx, "ptn_a", "heavy", limit, clk.Now()); err != nil || !a.Allowed {
		t.Fatalf("n0: %+v, %v", a, err)
	}
	spend := func(l *Limiter) int {
		t.Helper()
		n := 0
		for range 2 * limit {
			a, err := l.Admit(ctx, "ptn_a", "heavy", limit, clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			if a.Allowed {
				n++
			}
		}
		return n
	}
	total := 1 + spend(n1)
	// Before the lease ends: n0 still holds its rest; n1's refusal is
	// kept without asking.
	calls := lc.calls.Load()
	n0.ReleaseExpired(ctx)
	if got := spend(n1); got != 0 || lc.calls.Load() != calls {
		t.Fatalf("before n0's lease ended: n1 admitted %d more after %d acquires", got, lc.calls.Load()-calls)
	}
	clk.Advance(DefaultBlockLease)
	n0.ReleaseExpired(ctx)
	clk.Advance(returnGrace)
	total += spend(n1)
	if total != limit || st.granted("ptn_a") > limit+9 {
		t.Fatalf("admitted %d in the window, want %d", total, limit)
	}
	// n0 spends nothing of what it gave back.
	if a, err := n0.Admit(ctx, "ptn_a", "heavy", limit, clk.Now()); err != nil || a.Allowed {
		t.Fatalf("n0 after giving its block back, the window spent: %+v, %v", a, err)
	}
}

// flakyLeases is a node's lease of a partner's grain while the grain moves:
// the lease it holds is stale, and its refresh fails a few times (no node
// answers for the grain yet) before the new activation answers.
type flakyLeases struct {
	st    *memStore
	held  int64
	fails int
}

func (f *flakyLeases) Epoch(context.Context, string) (int64, error) { return f.held, nil }

func (f *flakyLeases) Refresh(ctx context.Context, p string) (int64, error) {
	if f.fails > 0 {
		f.fails--
		return 0, errors.New("no member answers for the grain")
	}
	e, err := f.st.PartnerEpoch(ctx, p)
	f.held = e
	return e, err
}

// A ledger batch sent under an epoch another activation replaced is not
// written under it; the node renews its lease from the current activation
// (waiting while none answers yet) and sends it again: every row written
// exactly once, none lost, none doubled when sent once more.
func TestFencedAppenderStaleBatchWrittenOnce(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	if _, err := st.BumpPartnerEpoch(ctx, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.BumpPartnerEpoch(ctx, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	rec := func(id string) store.EncodedQuote {
		e, err := store.EncodeQuote(&account.Activity{PartnerID: "ptn_a", ID: id, Kind: account.ActivityQuote,
			Status: account.ActivityQuoted, CreatedAt: time.Unix(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, fails := range []int{0, 3} {
		t.Run(fmt.Sprint(fails, " failed refreshes"), func(t *testing.T) {
			fs := &fencedStore{st: st, written: map[string]bool{}}
			m := NewMetrics()
			app := &FencedAppender{Store: fs, Leases: &flakyLeases{st: st, held: 1, fails: fails}, Metrics: m, Timeout: 5 * time.Second}
			batch := []store.EncodedQuote{rec("q1"), rec("q2")}
			w, err := app.RecordQuotes(ctx, batch, store.Synced)
			if err != nil || !slices.Equal(w, []bool{true, true}) || len(fs.written) != 2 || m.ledgerStale.Load() != 1 {
				t.Fatalf("stale batch: written %v, %v; %d rows stored, %d stale", w, err, len(fs.written), m.ledgerStale.Load())
			}
			if w, err := app.RecordQuotes(ctx, batch, store.Synced); err != nil || !slices.Equal(w, []bool{false, false}) || len(fs.written) != 2 {
				t.Fatalf("sent again: written %v, %v; %d rows stored", w, err, len(fs.written))
			}
		})
	}
}

// Blocks given back are given back in the store too: a later activation
// (a failover) counts what the window granted less what came back, so that
// a node that takes and returns blocks over and over (traffic in bursts,
// each block's lease ending) never leaves the next activation a window
// spent on paper.
func TestGivenBackBlocksSurviveAFailover(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := GrainConfig{Store: st, Peers: func() int { return 1 }, Now: clk.Now, Metrics: NewMetrics(), StoreTimeout: time.Second}
	g, err := activate(ctx, cfg, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	var a AcquireAnswer
	for i := 0; i < 3; i++ {
		a = receive(t, g, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n1", RequestID: fmt.Sprint("take", i)})
		if a.Granted != 50 {
			t.Fatalf("block %d: %+v, want 50 of 100", i, a)
		}
		if i < 2 {
			clk.Advance(time.Second)
			receive(t, g, AcquireRequest{Bucket: "heavy", Limit: 100, Requester: "n1", RequestID: fmt.Sprint("back", i), Return: 50, ReturnWindow: a.WindowStart})
		}
	}
	if n := st.granted("ptn_a"); n != 50 {
		t.Fatalf("the store counts %d granted in the window; want 50 (three blocks of 50, two given back)", n)
	}
	if g, err = activate(ctx, cfg, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	b := receive(t, g, AcquireRequest{Bucket: "heavy", Limit: 100, Want: 100, Requester: "n2", RequestID: "after"})
	if b.Granted == 0 || b.Granted+b.Remaining != 50 {
		t.Fatalf("after the failover: %+v; want a block out of the 50 of 100 left (50 granted before)", b)
	}
	// A give-back retried is applied once.
	for i := 0; i < 2; i++ {
		receive(t, g, AcquireRequest{Bucket: "heavy", Limit: 100, Requester: "n2", RequestID: "back-after", Return: b.Granted, ReturnWindow: b.WindowStart})
	}
	if n := st.granted("ptn_a"); n != 50 {
		t.Fatalf("after a give-back retried: %d granted; want 50", n)
	}
}
