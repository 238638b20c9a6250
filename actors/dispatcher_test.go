package actors

import (
	"sync"
	"testing"
)

// TestWarmDispatcherAfterClose checks that work scheduled after Close still
// runs (on a fresh goroutine) instead of sending on a closed channel.
func TestWarmDispatcherAfterClose(t *testing.T) {
	d := NewWarmDispatcher(2, 10)
	var wg sync.WaitGroup
	wg.Add(2)
	d.Schedule(wg.Done)
	d.Close()
	d.Schedule(wg.Done)
	wg.Wait()
	d.Close()
}
