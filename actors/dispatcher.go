package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// WarmDispatcher runs actor mailboxes on a fixed set of long-lived
// goroutines. protoactor's default dispatcher starts a new goroutine every
// time a mailbox has work; on the quote path, whose actors run deep call
// stacks (ABI packing, Pebble commits), each new goroutine then spends a
// large share of its time growing its stack. Warm goroutines keep the
// stacks they grew. Schedule never blocks: when every warm goroutine is busy
// (a worker waiting on a slow upstream, say) the mailbox runs on a fresh
// goroutine, as with the default dispatcher.
type WarmDispatcher struct {
	work       chan func()
	done       chan struct{}
	throughput int
	wg         sync.WaitGroup
	once       sync.Once
}

var _ actor.Dispatcher = (*WarmDispatcher)(nil)

// NewWarmDispatcher starts size goroutines; throughput is how many messages
// a mailbox processes before yielding its goroutine.
func NewWarmDispatcher(size, throughput int) *WarmDispatcher {
	d := &WarmDispatcher{work: make(chan func()), done: make(chan struct{}), throughput: throughput}
	d.wg.Add(size)
	for i := 0; i < size; i++ {
		go func() {
			defer d.wg.Done()
			for {
				select {
				case fn := <-d.work:
					fn()
				case <-d.done:
					return
				}
			}
		}()
	}
	return d
}

// Schedule runs fn on an idle warm goroutine, or on a new one if none is idle.
func (d *WarmDispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn:
	default:
		go fn()
	}
}

// Throughput is the mailbox batch size.
func (d *WarmDispatcher) Throughput() int { return d.throughput }

// Close stops the warm goroutines once they finish what they run. The work
// channel is never closed: protoactor may still schedule a stopped actor's
// last system messages, and those then run on fresh goroutines.
func (d *WarmDispatcher) Close() {
	d.once.Do(func() { close(d.done) })
	d.wg.Wait()
}
