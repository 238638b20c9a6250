package pebblestore

import (
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestWALSyncs checks that synced writes are counted (Pebble may cover
// two with one sync, never none) in cumulative buckets at round bounds, that unsynced ones are not, and that
// a closed store reports nothing. Pebble may also sync on its own (a
// flush's or the WAL's housekeeping) while a case runs, so each case's
// bound leaves room for one such sync.
func TestWALSyncs(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	before, ok := s.WALSyncs()
	if !ok {
		t.Fatal("an open store reports no WAL syncs")
	}
	wantBounds := []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005}
	if len(before.Bounds) < 12 || !slices.IsSorted(before.Bounds) {
		t.Fatalf("bounds %v: want a dozen or more, ascending", before.Bounds)
	}
	for i, want := range wantBounds {
		if got := before.Bounds[i]; got < want*(1-1e-9) || got > want*(1+1e-9) {
			t.Fatalf("bound %d = %v, want %v (Pebble's linear buckets)", i, got, want)
		}
	}
	if last := before.Bounds[len(before.Bounds)-1]; last < 5 {
		t.Fatalf("last bound %v s, want 5 s or more", last)
	}
	for _, tc := range []struct {
		name        string
		opts        *pebble.WriteOptions
		least, most uint64 // syncs for three writes
	}{
		{"unsynced", pebble.NoSync, 0, 1},
		{"synced", pebble.Sync, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, _ := s.WALSyncs()
			for range 3 {
				if err := s.db.Set([]byte("test/walsync"), []byte(tc.name), tc.opts); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := s.WALSyncs()
			if got := st.Count - from.Count; got < tc.least || got > tc.most {
				t.Fatalf("%d syncs counted for 3 %s writes, want %d to %d", got, tc.name, tc.least, tc.most)
			}
			if st.Seconds < from.Seconds || st.Count > 0 && st.Seconds <= 0 {
				t.Fatalf("total %v s after %v s for %d syncs", st.Seconds, from.Seconds, st.Count)
			}
			for i := range st.AtMost {
				if i > 0 && st.AtMost[i] < st.AtMost[i-1] || st.AtMost[i] > st.Count {
					t.Fatalf("bucket counts %v of %d syncs: want cumulative", st.AtMost, st.Count)
				}
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, ok := s.WALSyncs(); ok {
		t.Fatalf("closed store reports %+v", st)
	}
}
