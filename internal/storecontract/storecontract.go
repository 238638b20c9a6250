// Package storecontract holds the contract test suites of the store's
// aggregates: one exported Run function per kind of state, run by every
// backend's tests against a factory of its stores, so that Pebble and any
// other backend are held to the same promises.
//
// Each suite takes the interface its consumers declare (the actors' and
// the edge's own small interfaces, embedded here, plus the few methods the
// suite needs to set up or observe state), never a concrete store. A
// backend runs them from its tests with a Factory that hands each case a
// fresh, empty store (store/pebble/contract_test.go does so for Pebble):
//
//	func TestContractFeeWallets(t *testing.T) {
//		storecontract.RunFeeWallets(t, func(t *testing.T) storecontract.Handle[storecontract.FeeWallets] {
//			s := openEmpty(t) // closed by t.Cleanup
//			return storecontract.Handle[storecontract.FeeWallets]{Store: s,
//				Crash:  func(t *testing.T) storecontract.FeeWallets { return crashAndReopen(t, s) },
//				Reopen: func(t *testing.T) storecontract.FeeWallets { return closeAndReopen(t, s) }}
//		})
//	}
//
// Where an interface promises durability (an acknowledged write survives
// a crash; nothing half-written is ever visible), the suite interrupts
// writes in two ways: a context cancelled at each of the write's looks at
// it in turn (Interrupt), and a crash after the acknowledgement (the
// Handle's Crash), after which every acknowledged write must be there.
//
// This package is imported only by tests; it imports the consumers'
// packages for their interfaces (and the settlement run, admin.Settle),
// which a backend does not. That is why it lives here and not under
// store/: beside the store, it would lift the store above the actors and
// the edge in the import graph.
package storecontract

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Handle is one store under test and the ways a suite may stop it.
type Handle[S any] struct {
	// Store is the open store, empty when the factory hands it out.
	Store S
	// Crash stops the store as a crash of the process and of its machine
	// would: anything not yet durable is lost. It returns the store
	// opened again on what survived; the old one is not used again. Nil
	// when the backend cannot simulate one: the durability cases then
	// check only what a running store shows.
	Crash func(t *testing.T) S
	// Reopen closes the store cleanly and opens it again on the same
	// data, returning the store opened; the old one is not used again.
	// Nil when the backend has no data of its own to reopen on.
	Reopen func(t *testing.T) S
}

// Factory opens a fresh, empty store of one backend for one test; it
// registers the store's closing with t.Cleanup.
type Factory[S any] func(t *testing.T) Handle[S]

// Interrupt runs write against h's store under contexts cancelled at the
// write's k-th look at them (k = 0, 1, 2, … : Err, Done and Deadline
// calls all count), until one run succeeds. After each failed run the
// store must show the write not at all (unchanged holds): a write that
// reported failure was not made, neither half nor whole, so that the
// caller's retry, its client's error and every reader agree. (A backend
// that sent a commit before the context ended must wait for its answer
// and report it: PostgreSQL's does, store/postgres/definite.go.)
// After the successful run the store is crashed, when the
// backend can simulate one, and changed must hold: an acknowledged write
// is durable. It returns the store to go on with (the one reopened after
// the crash, or h.Store).
func Interrupt[S any](t *testing.T, h *Handle[S], write func(ctx context.Context, s S) error, unchanged, changed func(t testing.TB, s S)) S {
	t.Helper()
	const maxLooks = 10_000
	for k := 0; k < maxLooks; k++ {
		ctx := newCountdownCtx(k)
		err := write(ctx, h.Store)
		ctx.stop()
		if err == nil {
			// The crash comes straight after the acknowledgement: a read
			// first might make the write durable (a backend may sync
			// before it answers one) and hide a write that was not.
			if h.Crash != nil {
				h.Store = h.Crash(t)
			}
			changed(t, h.Store)
			return h.Store
		}
		if k > 0 && !ctx.fired() {
			t.Fatalf("the write failed with its context intact: %v", err)
		}
		if ok, _ := holds(t, unchanged, h.Store); ok {
			continue
		}
		if ok, _ := holds(t, changed, h.Store); ok {
			t.Errorf("the write interrupted at look %d reported failure (%v) but was applied: a caller told it failed retries it, or tells its client so", k, err)
			return h.Store
		}
		t.Errorf("the write interrupted at look %d (%v) is half-written: neither the state before it nor the one after it", k, err)
		unchanged(t, h.Store)
		return h.Store
	}
	t.Fatalf("the write did not succeed within %d looks at its context", maxLooks)
	return h.Store
}

// holds runs check on s and reports whether it passed, with its message
// when it did not, without failing t.
func holds[S any](t testing.TB, check func(t testing.TB, s S), s S) (bool, string) {
	p := &probe{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(p, s)
	}()
	<-done
	return !p.failed, p.msg
}

// probe is a testing.TB whose failures are recorded rather than reported:
// a fatal one ends the check's goroutine, as it would a test's.
type probe struct {
	testing.TB
	failed bool
	msg    string
}

func (p *probe) Helper()                   {}
func (p *probe) Error(args ...any)         { p.record(fmt.Sprint(args...)) }
func (p *probe) Errorf(f string, a ...any) { p.record(fmt.Sprintf(f, a...)) }
func (p *probe) Fatal(args ...any)         { p.record(fmt.Sprint(args...)); runtime.Goexit() }
func (p *probe) Fatalf(f string, a ...any) { p.record(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (p *probe) Failed() bool              { return p.failed }

func (p *probe) record(msg string) {
	if !p.failed {
		p.failed, p.msg = true, msg
	}
}

// countdownCtx is a context that is cancelled at its k-th look: each call
// of Err, Done or Deadline counts one, and the k-th and every later one
// sees it cancelled. A backend that checks its context before writing
// anything, between steps and not after committing is interrupted at each
// of those points in turn.
type countdownCtx struct {
	context.Context
	mu    sync.Mutex
	left  int
	done  chan struct{}
	fire  sync.Once
	shot  bool
	close func()
}

func newCountdownCtx(k int) *countdownCtx {
	base, cancel := context.WithCancel(context.Background())
	c := &countdownCtx{Context: base, left: k, done: make(chan struct{}), close: cancel}
	if k == 0 {
		c.cancel()
	}
	return c
}

// look counts one look and reports whether the context is cancelled.
func (c *countdownCtx) look() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shot {
		return true
	}
	c.left--
	if c.left <= 0 {
		c.shot = true
		c.fire.Do(func() { close(c.done) })
	}
	return c.shot
}

func (c *countdownCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shot = true
	c.fire.Do(func() { close(c.done) })
}

func (c *countdownCtx) fired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shot
}

func (c *countdownCtx) stop() { c.close() }

func (c *countdownCtx) Done() <-chan struct{} {
	c.look()
	return c.done
}

func (c *countdownCtx) Err() error {
	if c.look() {
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Deadline() (time.Time, bool) {
	c.look()
	return time.Time{}, false
}
