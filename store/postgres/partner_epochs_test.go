package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/partnerquota"
	"github.com/swapgate/swapgate/store"
)

// Two activations of one partner's grain, on two nodes sharing the
// database: once the second has bumped the epoch, the first one's grant
// and ledger batch write nothing and say so, the second's are written; a
// retried grant is written once.
func TestPartnerEpochFencesGrantsAndLedger(t *testing.T) {
	for _, d := range []store.Durability{store.Synced, store.Unsynced} {
		t.Run(fmt.Sprint("synced=", bool(d)), func(t *testing.T) {
			ctx := context.Background()
			db := newTestDB(t)
			a, b := db.open(t, Options{}), db.open(t, Options{})
			t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			grant := func(id string, n int) partnerquota.Grant {
				return partnerquota.Grant{Bucket: "heavy", RequestID: id, Requester: "node-a", WindowStart: t0, Granted: n}
			}
			oldEpoch, err := a.BumpPartnerEpoch(ctx, "ptn_a")
			if err != nil || oldEpoch != 1 {
				t.Fatalf("first activation's epoch %d, %v; want 1", oldEpoch, err)
			}
			if _, err := a.RecordPartnerGrant(ctx, "ptn_a", oldEpoch, grant("r1", 50)); err != nil {
				t.Fatalf("fresh grant: %v", err)
			}
			// Retried: the same request id is written once.
			if _, err := a.RecordPartnerGrant(ctx, "ptn_a", oldEpoch, grant("r1", 50)); err != nil {
				t.Fatalf("retried grant: %v", err)
			}
			newEpoch, err := b.BumpPartnerEpoch(ctx, "ptn_a")
			if err != nil || newEpoch != 2 {
				t.Fatalf("second activation's epoch %d, %v; want 2", newEpoch, err)
			}
			if e, err := a.PartnerEpoch(ctx, "ptn_a"); err != nil || e != newEpoch {
				t.Fatalf("epoch read back %d, %v; want %d", e, err, newEpoch)
			}
			if e, err := a.PartnerEpoch(ctx, "ptn_nobody"); err != nil || e != 0 {
				t.Fatalf("epoch of a partner without one %d, %v; want 0", e, err)
			}
			if _, err := a.RecordPartnerGrant(ctx, "ptn_a", oldEpoch, grant("r2", 40)); !errors.Is(err, partnerquota.ErrStaleEpoch) {
				t.Fatalf("stale grant: %v, want ErrStaleEpoch", err)
			}
			if _, err := b.RecordPartnerGrant(ctx, "ptn_a", newEpoch, grant("r3", 25)); err != nil {
				t.Fatalf("fresh grant after the bump: %v", err)
			}
			if _, err := b.RecordPartnerGrant(ctx, "ptn_nobody", 1, grant("r4", 1)); !errors.Is(err, partnerquota.ErrStaleEpoch) {
				t.Fatalf("grant for a partner without an epoch: %v, want ErrStaleEpoch", err)
			}
			gs, err := b.PartnerGrants(ctx, "ptn_a", t0.Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			total := 0
			for _, g := range gs {
				ids = append(ids, g.RequestID)
				total += g.Granted
				if !g.WindowStart.Equal(t0) || g.Bucket != "heavy" || g.Requester != "node-a" {
					t.Errorf("grant read back as %+v", g)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, []string{"r1", "r3"}) || total != 75 {
				t.Fatalf("grants %v totalling %d; want r1 and r3, 75", ids, total)
			}

			// The ledger: the stale epoch's rows are refused, partner by
			// partner; the fresh epoch's are written, once.
			if _, err := a.BumpPartnerEpoch(ctx, "ptn_b"); err != nil {
				t.Fatal(err)
			}
			enc := func(as ...*account.Activity) []store.EncodedQuote {
				out := make([]store.EncodedQuote, len(as))
				for i, x := range as {
					var err error
					if out[i], err = store.EncodeQuote(x); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			batch := enc(feeQuote("ptn_a", "q1", "evm", 10, t0), feeQuote("ptn_b", "q2", "evm", 10, t0),
				feeQuote("ptn_a", "q3", "evm", 10, t0.Add(time.Second)))
			written, stale, err := a.RecordQuotesFenced(ctx, batch, map[string]int64{"ptn_a": oldEpoch, "ptn_b": 1}, d)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(written, []bool{false, true, false}) || !slices.Equal(stale, []string{"ptn_a"}) {
				t.Fatalf("stale batch: written %v, stale %v; want ptn_b's row alone and ptn_a stale", written, stale)
			}
			if n := len(rowsOf(t, a, "ptn_a")); n != 0 {
				t.Fatalf("the stale epoch wrote %d rows", n)
			}
			// Refreshed, the node sends the whole batch again: ptn_a's rows
			// are written, ptn_b's is not written twice.
			written, stale, err = a.RecordQuotesFenced(ctx, batch, map[string]int64{"ptn_a": newEpoch, "ptn_b": 1}, d)
			if err != nil || len(stale) != 0 || !slices.Equal(written, []bool{true, false, true}) {
				t.Fatalf("fresh batch: written %v, stale %v, %v", written, stale, err)
			}
			if n, m := len(rowsOf(t, a, "ptn_a")), len(rowsOf(t, a, "ptn_b")); n != 2 || m != 1 {
				t.Fatalf("rows: ptn_a %d, ptn_b %d; want 2 and 1", n, m)
			}
			if _, _, err := a.RecordQuotesFenced(ctx, batch, map[string]int64{"ptn_a": newEpoch}, d); err == nil {
				t.Fatal("a batch with a partner without an epoch was taken")
			}
		})
	}
}

// A bump racing a stream of grants: every grant the old epoch was told
// succeeded is read back after the bump (nothing acknowledged is missed by
// the new activation), and none it was refused is.
func TestPartnerEpochBumpSeesEveryAcknowledgedGrant(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	t0 := time.Now().UTC()
	epoch, err := a.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				_, err := a.RecordPartnerGrant(ctx, "ptn_a", epoch, partnerquota.Grant{Bucket: "heavy", RequestID: id, Requester: "a", WindowStart: t0, Granted: 1})
				if errors.Is(err, partnerquota.ErrStaleEpoch) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := b.BumpPartnerEpoch(ctx, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	gs, err := b.PartnerGrants(ctx, "ptn_a", t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, g := range gs {
		seen[g.RequestID] = true
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range acked {
		if !seen[id] {
			t.Errorf("grant %s acknowledged under the old epoch but not read after the bump", id)
		}
	}
	if len(seen) != len(acked) {
		t.Errorf("read %d grants after the bump, %d acknowledged", len(seen), len(acked))
	}
	if len(acked) == 0 {
		t.Error("no grant was acknowledged before the bump")
	}
}

// A sweep deletes a partner's ended windows' rows, and no other's.
func TestSweepPartnerGrants(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	epoch, err := s.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	for i, start := range []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute)} {
		if _, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, partnerquota.Grant{Bucket: "read", RequestID: fmt.Sprint("r", i),
			Requester: "n", WindowStart: start, Granted: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SweepPartnerGrants(ctx, "ptn_a", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.SweepPartnerGrants(ctx, "ptn_other", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	gs, err := s.PartnerGrants(ctx, "ptn_a", t0.Add(-time.Hour))
	if err != nil || len(gs) != 1 || gs[0].RequestID != "r2" {
		t.Fatalf("grants after the second window: %+v, %v", gs, err)
	}
	if n := countRows(t, s, "partner_grants"); n != 1 {
		t.Fatalf("%d grant rows left, want 1", n)
	}
	if _, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, partnerquota.Grant{Bucket: "read", RequestID: "r9", WindowStart: t0}); err == nil {
		t.Fatal("an empty grant was taken")
	}
}

// Ledger batches racing a bump: every row a batch under the old epoch was
// told it wrote is there when the bump returns (none commits after it),
// and once a batch is told its partner is stale, that worker's later
// batches under the old epoch write nothing.
func TestRecordQuotesFencedRacingABump(t *testing.T) {
	ctx := context.Background()
	db := newTestDB(t)
	a, b := db.open(t, Options{}), db.open(t, Options{})
	epoch, err := a.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("qt_w%d_%d", w, i)
				rec, err := store.EncodeQuote(feeQuote("ptn_a", id, "evm", 10, t0.Add(time.Duration(i)*time.Millisecond)))
				if err != nil {
					t.Error(err)
					return
				}
				written, stale, err := a.RecordQuotesFenced(ctx, []store.EncodedQuote{rec}, map[string]int64{"ptn_a": epoch}, store.Synced)
				if err != nil {
					t.Error(err)
					return
				}
				if len(stale) > 0 {
					if written[0] {
						t.Errorf("%s written and stale", id)
					}
					return
				}
				mu.Lock()
				acked[id] = written[0]
				mu.Unlock()
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := b.BumpPartnerEpoch(ctx, "ptn_a"); err != nil {
		t.Fatal(err)
	}
	atBump := map[string]bool{}
	for _, r := range rowsOf(t, b, "ptn_a") {
		atBump[r.ID] = true
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for id, w := range acked {
		if w && !atBump[id] {
			t.Errorf("%s written under the old epoch after the bump", id)
		}
	}
	if n := len(rowsOf(t, b, "ptn_a")); n != len(atBump) || n != len(acked) || n == 0 {
		t.Errorf("%d rows now, %d at the bump, %d acknowledged", n, len(atBump), len(acked))
	}
}

// A grant retried under a request id already stored, in the same window or
// a later one, or by a later activation, writes nothing and answers the
// first grant as stored: the retry is counted where the first was, and a
// new activation that loads the grants counts what the nodes were told.
func TestPartnerGrantRetriedAnswersTheFirst(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	epoch, err := s.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	first := partnerquota.Grant{Bucket: "heavy", RequestID: "r1", Requester: "node-a", WindowStart: t0, Granted: 50}
	if got, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, first); err != nil || got != first {
		t.Fatalf("first grant: %+v, %v; want it stored as given", got, err)
	}
	later, err := s.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		epoch int64
		retry partnerquota.Grant
	}{
		{"the same window", later, first},
		{"a later window, another block", later, partnerquota.Grant{Bucket: "heavy", RequestID: "r1", Requester: "node-a", WindowStart: t0.Add(61 * time.Second), Granted: 30}},
	}
	for _, tt := range tests {
		got, err := s.RecordPartnerGrant(ctx, "ptn_a", tt.epoch, tt.retry)
		if err != nil || got.RequestID != first.RequestID || !got.WindowStart.Equal(first.WindowStart) || got.Granted != first.Granted ||
			got.Bucket != first.Bucket || got.Requester != first.Requester {
			t.Errorf("%s: retried grant answered %+v, %v; want the first, %+v", tt.name, got, err, first)
		}
	}
	gs, err := s.PartnerGrants(ctx, "ptn_a", t0.Add(-time.Hour))
	if err != nil || len(gs) != 1 || gs[0].Granted != 50 || !gs[0].WindowStart.Equal(t0) {
		t.Fatalf("grants stored: %+v, %v; want the first alone", gs, err)
	}
	// A stale epoch is refused before anything is read back.
	if _, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, first); !errors.Is(err, partnerquota.ErrStaleEpoch) {
		t.Fatalf("a retry under a stale epoch: %v, want ErrStaleEpoch", err)
	}
}

// What a node gives back of a block is stored with the grants, so that a
// later activation counts the window's grants less its give-backs; a row
// grants, gives back, or both, never a negative amount nor nothing.
func TestPartnerGrantsKeepGiveBacks(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	epoch, err := s.BumpPartnerEpoch(ctx, "ptn_a")
	if err != nil {
		t.Fatal(err)
	}
	row := func(id string, granted, returned int) partnerquota.Grant {
		return partnerquota.Grant{Bucket: "heavy", RequestID: id, Requester: "node-a", WindowStart: t0, Granted: granted, Returned: returned}
	}
	for _, g := range []partnerquota.Grant{row("take", 50, 0), row("back", 0, 30), row("again", 20, 10)} {
		if got, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, g); err != nil || got != g {
			t.Fatalf("record %+v: %+v, %v", g, got, err)
		}
	}
	for _, g := range []partnerquota.Grant{row("nothing", 0, 0), row("negative", -1, 2), row("negative-back", 2, -1)} {
		if _, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, g); err == nil {
			t.Errorf("record %+v: accepted", g)
		}
	}
	grants, err := s.PartnerGrants(ctx, "ptn_a", t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	net := 0
	for _, g := range grants {
		net += g.Granted - g.Returned
	}
	if len(grants) != 3 || net != 30 {
		t.Fatalf("read back %+v: %d rows, %d granted net; want 3 rows and 30 (50 + 20 granted, 30 + 10 given back)", grants, len(grants), net)
	}
	// A retried give-back answers the first row.
	if got, err := s.RecordPartnerGrant(ctx, "ptn_a", epoch, row("back", 0, 7)); err != nil || got.Returned != 30 {
		t.Fatalf("retried give-back: %+v, %v; want the first (30 given back)", got, err)
	}
}
