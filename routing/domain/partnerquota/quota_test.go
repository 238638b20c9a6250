package partnerquota

import (
	"testing"
	"time"
)

func TestBlock(t *testing.T) {
	tests := []struct {
		name                        string
		want, remaining, requesters int
		block                       int
	}{
		{"nothing wanted", 0, 300, 3, 0},
		{"negative want", -5, 300, 3, 0},
		{"nothing remains", 50, 0, 3, 0},
		{"negative remainder", 50, -1, 3, 0},
		{"three nodes, a full window", 300, 300, 3, 50},
		{"one node takes half", 300, 300, 1, 150},
		{"no requester counted is one", 300, 300, 0, 150},
		{"want below the cap", 10, 300, 3, 10},
		{"shrinks with the remainder", 300, 60, 3, 10},
		{"one while little remains", 300, 5, 3, 1},
		{"the last one", 300, 1, 3, 1},
		{"want of one", 1, 300, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Block(tt.want, tt.remaining, tt.requesters); got != tt.block {
				t.Fatalf("Block(%d, %d, %d) = %d, want %d", tt.want, tt.remaining, tt.requesters, got, tt.block)
			}
		})
	}
}

func TestAcquire(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		s           State
		now         time.Time
		limit, want int
		next        State
		granted     int
	}{
		{"first acquire opens a window", State{}, t0, 300, 300, State{t0, 150}, 150},
		{"lease refresh opens none", State{}, t0, 300, 0, State{}, 0},
		{"inside the window", State{t0, 150}, t0.Add(30 * time.Second), 300, 300, State{t0, 225}, 75},
		{"refresh inside the window keeps it", State{t0, 150}, t0.Add(time.Second), 300, 0, State{t0, 150}, 0},
		{"full window grants nothing", State{t0, 300}, t0.Add(59 * time.Second), 300, 10, State{t0, 300}, 0},
		{"a lowered limit grants nothing", State{t0, 200}, t0.Add(time.Second), 100, 10, State{t0, 200}, 0},
		{"an ended window is replaced", State{t0, 300}, t0.Add(Window), 300, 300, State{t0.Add(Window), 150}, 150},
		{"a clock behind the start is inside", State{t0, 10}, t0.Add(-time.Second), 300, 2, State{t0, 12}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, g := Acquire(tt.s, tt.now, tt.limit, tt.want, 1)
			if g != tt.granted || !next.Start.Equal(tt.next.Start) || next.Granted != tt.next.Granted {
				t.Fatalf("Acquire = %+v, %d; want %+v, %d", next, g, tt.next, tt.granted)
			}
		})
	}
}

// TestBlocksAdmitAtLeast99Percent plays a window through the grant rule:
// nodes each spend their block and ask again, every node offering more
// than the limit; the window grants exactly the limit, and no node is left
// holding more than one block unspent when its offered traffic stops.
func TestBlocksAdmitAtLeast99Percent(t *testing.T) {
	for _, tc := range []struct{ limit, nodes int }{{300, 3}, {2000, 3}, {60, 3}, {1000, 1}, {1000, 5}} {
		var s State
		t0 := time.Unix(0, 0)
		granted, acquires := 0, 0
		largest := 0
		for turn := 0; ; turn++ {
			next, g := Acquire(s, t0, tc.limit, tc.limit, tc.nodes)
			if g == 0 {
				break
			}
			s = next
			granted += g
			acquires++
			largest = max(largest, g)
		}
		if granted != tc.limit {
			t.Errorf("L=%d over %d nodes: granted %d", tc.limit, tc.nodes, granted)
		}
		// The first blocks are the largest: what each node may hold
		// unspent when the window is full shrinks to single admissions.
		if largest > tc.limit/(2*tc.nodes)+1 {
			t.Errorf("L=%d: a block of %d", tc.limit, largest)
		}
		t.Logf("L=%d over %d nodes: %d acquires", tc.limit, tc.nodes, acquires)
	}
}
