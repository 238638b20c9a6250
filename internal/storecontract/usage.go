package storecontract

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// Usage is partners' hourly request counts (edge.UsageStore): one row per
// partner, bucket and hour, to which every write adds, all of a write's
// counts or none, durable once acknowledged.
type Usage = edge.UsageStore

// usageRows reads partner's rows since since as a map by hour and bucket.
func usageRows(t testing.TB, s Usage, partner string, since time.Time) map[string][2]uint64 {
	t.Helper()
	rows, err := s.UsageSince(context.Background(), partner, since)
	mustNil(t, "usage since", err)
	out := map[string][2]uint64{}
	for _, r := range rows {
		if r.PartnerID != partner {
			t.Fatalf("a row of %s among %s's", r.PartnerID, partner)
		}
		k := r.Hour.UTC().Format(time.RFC3339) + " " + r.Bucket
		if _, dup := out[k]; dup {
			t.Fatalf("two rows for %s", k)
		}
		out[k] = [2]uint64{r.Admitted, r.Refused}
	}
	return out
}

// RunUsage holds a Usage implementation to its contract.
func RunUsage(t *testing.T, open Factory[Usage]) {
	ctx := context.Background()
	h0 := account.UsageHourOf(time.Now()).Add(-3 * time.Hour)
	h1, h2 := h0.Add(time.Hour), h0.Add(2*time.Hour)
	key := func(h time.Time, b string) string { return h.Format(time.RFC3339) + " " + b }
	tests := []struct {
		name string
		run  func(t *testing.T, h *Handle[Usage])
	}{
		{"counts add to their row, per partner, bucket and hour, and read back since an hour", func(t *testing.T, h *Handle[Usage]) {
			s := h.Store
			if got := usageRows(t, s, "ptn_a", h0); len(got) != 0 {
				t.Fatalf("rows before any write: %v", got)
			}
			mustNil(t, "add", s.AddUsage(ctx, []account.UsageCount{
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h0, Admitted: 5, Refused: 1},
				{PartnerID: "ptn_a", Bucket: account.UsageRead, Hour: h0, Admitted: 2},
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h1, Admitted: 7},
				{PartnerID: "ptn_b", Bucket: account.UsageHeavy, Hour: h1, Admitted: 100, Refused: 100},
			}))
			// A second flush (another node's, or the same node's later one)
			// adds; two counts of one row in one write add too.
			mustNil(t, "add again", s.AddUsage(ctx, []account.UsageCount{
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h0, Admitted: 3, Refused: 2},
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h1, Admitted: 1},
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h1, Refused: 4},
				{PartnerID: "ptn_a", Bucket: account.UsageRead, Hour: h2, Admitted: 9},
			}))
			want := map[string][2]uint64{
				key(h0, account.UsageHeavy): {8, 3}, key(h0, account.UsageRead): {2, 0},
				key(h1, account.UsageHeavy): {8, 4}, key(h2, account.UsageRead): {9, 0},
			}
			got := usageRows(t, s, "ptn_a", h0)
			if len(got) != len(want) {
				t.Fatalf("rows %v, want %v", got, want)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("row %s = %v, want %v", k, got[k], w)
				}
			}
			later := usageRows(t, s, "ptn_a", h1)
			keys := make([]string, 0, len(later))
			for k := range later {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) != 2 || keys[0] != key(h1, account.UsageHeavy) || keys[1] != key(h2, account.UsageRead) {
				t.Fatalf("rows since %s: %v", h1, later)
			}
			if b := usageRows(t, s, "ptn_b", h0); len(b) != 1 || b[key(h1, account.UsageHeavy)] != [2]uint64{100, 100} {
				t.Fatalf("ptn_b's rows %v", b)
			}
			if p := usageRows(t, s, "ptn_", h0); len(p) != 0 {
				t.Fatalf("a partner id's prefix sees rows: %v", p)
			}
		}},
		{"malformed counts are refused, and the write with them adds nothing", func(t *testing.T, h *Handle[Usage]) {
			good := account.UsageCount{PartnerID: "ptn_a", Bucket: account.UsageRead, Hour: h0, Admitted: 1}
			for _, bad := range []account.UsageCount{
				{PartnerID: "", Bucket: account.UsageHeavy, Hour: h0, Admitted: 1},
				{PartnerID: "ptn_a", Bucket: "write", Hour: h0, Admitted: 1},
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h0.Add(time.Minute), Admitted: 1},
			} {
				if err := h.Store.AddUsage(ctx, []account.UsageCount{good, bad}); err == nil {
					t.Errorf("add of %+v accepted", bad)
				}
			}
			if got := usageRows(t, h.Store, "ptn_a", h0); len(got) != 0 {
				t.Fatalf("a refused write left %v", got)
			}
		}},
		{"an interrupted write adds nothing, an acknowledged one survives a crash and a restart", func(t *testing.T, h *Handle[Usage]) {
			mustNil(t, "add", h.Store.AddUsage(ctx, []account.UsageCount{{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h0, Admitted: 1}}))
			batch := []account.UsageCount{
				{PartnerID: "ptn_a", Bucket: account.UsageHeavy, Hour: h0, Admitted: 2, Refused: 1},
				{PartnerID: "ptn_a", Bucket: account.UsageRead, Hour: h1, Admitted: 4},
			}
			s := Interrupt(t, h, func(ctx context.Context, s Usage) error {
				return s.AddUsage(ctx, batch)
			}, func(t testing.TB, s Usage) {
				if got := usageRows(t, s, "ptn_a", h0); len(got) != 1 || got[key(h0, account.UsageHeavy)] != [2]uint64{1, 0} {
					t.Fatalf("an interrupted write left %v", got)
				}
			}, func(t testing.TB, s Usage) {
				if got := usageRows(t, s, "ptn_a", h0); len(got) != 2 || got[key(h0, account.UsageHeavy)] != [2]uint64{3, 1} ||
					got[key(h1, account.UsageRead)] != [2]uint64{4, 0} {
					t.Fatalf("the acknowledged write shows %v", got)
				}
			})
			if h.Reopen != nil {
				h.Store = s
				s = h.Reopen(t)
				if got := usageRows(t, s, "ptn_a", h0); got[key(h0, account.UsageHeavy)] != [2]uint64{3, 1} {
					t.Fatalf("after a restart %v", got)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := open(t)
			tt.run(t, &h)
		})
	}
}
