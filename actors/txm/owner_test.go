package txm_test

import (
	"sync/atomic"
	"testing"
)

// switchOwner names the node that owns every account; a test moves it.
type switchOwner struct {
	cur  *atomic.Value
	name string
}

func (o switchOwner) Owns(string) bool { return o.cur.Load() == o.name }

// In a cluster each account is worked by its owner: intents submitted on
// another node are read from the store by the owner, and when the account
// moves the new owner resumes what the old one left, every intent mined
// once.
func TestManagerWorksOnlyOwnedAccounts(t *testing.T) {
	e := newEnv(t)
	cur := new(atomic.Value)
	cur.Store("a")
	oa, ob := e.options(e.node, e.store), e.options(e.node, e.store)
	oa.Owner, ob.Owner = switchOwner{cur, "a"}, switchOwner{cur, "b"}
	a, b := e.start(oa), e.start(ob)
	for i, key := range []string{"1", "2", "3"} {
		if _, err := b.Submit(e.ctx, pay(key, int64(1)<<i)); err != nil {
			t.Fatal(err)
		}
	}
	first := e.waitFinal("1", "2", "3")
	cur.Store("b")
	for i, key := range []string{"4", "5", "6"} {
		if _, err := a.Submit(e.ctx, pay(key, int64(1)<<(i+3))); err != nil {
			t.Fatal(err)
		}
	}
	second := e.waitFinal("4", "5", "6")
	e.minedOnce(append(first, second...))
	if got := e.balance(); got != 63 {
		t.Fatalf("the recipient got %d wei, want 63", got)
	}
	if a.Stats().InFlight[chainID] != 0 {
		t.Fatal("the old owner still holds intents in flight")
	}
}
