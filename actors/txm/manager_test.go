package txm_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// Many intents of one account are in flight at once: submitted together,
// they get consecutive nonces, are sent in nonce order and each is mined
// once; a second submit of a key returns the first intent.
func TestManagerPipelinesManyIntents(t *testing.T) {
	e := newEnv(t)
	m := e.start(e.options(e.node, e.store))
	const n = 120
	keys := make([]string, n)
	var wg sync.WaitGroup
	for i := range keys {
		keys[i] = fmt.Sprintf("payout/%03d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Submit(e.ctx, pay(keys[i], int64(i+1))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ins := e.waitFinal(keys...)
	e.minedOnce(ins)
	if got, want := e.balance(), int64(n*(n+1)/2); got != want {
		t.Fatalf("the recipient got %d wei, want %d", got, want)
	}
	nonces := map[uint64]bool{}
	for _, in := range ins {
		nonces[*in.Nonce] = true
	}
	for i := uint64(0); i < n; i++ {
		if !nonces[i] {
			t.Fatalf("nonce %d unused: %v", i, nonces)
		}
	}
	again, err := m.Submit(e.ctx, pay(keys[0], 999))
	if err != nil || again.ID != ins[0].ID || again.Value != "1" {
		t.Fatalf("a second submit of a key: %+v %v", again, err)
	}
	if e.balance() != int64(n*(n+1)/2) {
		t.Fatal("a second submit of a key paid again")
	}
}

// A transaction stuck under a raised base fee is replaced (same nonce,
// both fees at least 12.5% higher, the replacement stored before it is
// sent) and the replacement is mined; the hook runs once it is confirmed.
func TestManagerReplacesAStuckTransaction(t *testing.T) {
	e := newEnv(t)
	raise := &raisingNode{Node: e.node, raise: func() {
		if err := e.chains.SetBaseFee(e.ctx, chainID, big.NewInt(500_000_000_000)); err != nil {
			t.Error(err)
		}
	}}
	o := e.options(raise, e.store)
	o.BumpAfter = 50 * time.Millisecond
	m, err := txm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	hooked := make(chan *txintent.Intent, 4)
	m.OnFinal("payout", func(_ context.Context, in *txintent.Intent) error { hooked <- in; return nil })
	if err := m.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if _, err := m.Submit(e.ctx, pay("stuck", 7)); err != nil {
		t.Fatal(err)
	}
	ins := e.waitFinal("stuck")
	e.minedOnce(ins)
	in := ins[0]
	if len(in.Txs) < 2 || in.MinedTx() == &in.Txs[0] || in.MinedTx().Hash == in.Txs[0].Hash {
		t.Fatalf("the stuck transaction was not replaced: %+v", in.Txs)
	}
	first, second := in.Txs[0], in.Txs[1]
	if first.Nonce != second.Nonce {
		t.Fatalf("the replacement has nonce %d, the first %d", second.Nonce, first.Nonce)
	}
	if m.Stats().Bumps == 0 {
		t.Fatal("no bump counted")
	}
	select {
	case h := <-hooked:
		if h.ID != in.ID || h.State != txintent.Confirmed {
			t.Fatalf("the hook got %+v", h)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hook was not called")
	}
	if e.balance() != 7 {
		t.Fatalf("the recipient got %d", e.balance())
	}
}

// A reverted transaction fails its intent with the node's reason and is
// not sent again; the next intent's nonce follows it.
func TestManagerFailsARevertedTransaction(t *testing.T) {
	e := newEnv(t)
	m := e.start(e.options(e.node, e.store))
	reg, _ := loadRegistry()
	usdc, ok := reg.TokenBySymbol(chainID, "USDC")
	if !ok {
		t.Fatal("no USDC on the chain")
	}
	data, err := simchain.ERC20ABI().Pack("transfer", recipient, new(big.Int).Lsh(big.NewInt(1), 200))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Submit(e.ctx, txintent.Request{Purpose: "payout", Key: "broke", ChainID: chainID,
		To: common.HexToAddress(usdc.Address), Data: data, GasLimit: 100_000}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Submit(e.ctx, pay("after", 3)); err != nil {
		t.Fatal(err)
	}
	ins := e.waitFinal("broke", "after")
	if ins[0].State != txintent.Failed || !strings.Contains(ins[0].Reason, "revert") || len(ins[0].Txs) != 1 {
		t.Fatalf("the reverted intent: %s %q %d txs", ins[0].State, ins[0].Reason, len(ins[0].Txs))
	}
	if ins[1].State != txintent.Confirmed || *ins[1].Nonce != *ins[0].Nonce+1 {
		t.Fatalf("the next intent: %+v", ins[1])
	}
}

// A request the manager cannot take is refused before anything is stored.
func TestManagerRefusesBadRequests(t *testing.T) {
	e := newEnv(t)
	m := e.start(e.options(e.node, e.store))
	for _, c := range []struct {
		r    txintent.Request
		want string
	}{
		{txintent.Request{Purpose: "payout", ChainID: chainID, To: recipient, GasLimit: 21_000}, "key"},
		{txintent.Request{Purpose: "payout", Key: "k", ChainID: 1, To: recipient, GasLimit: 21_000}, "no node"},
		{txintent.Request{Purpose: "payout", Key: "k", ChainID: chainID, GasLimit: 21_000}, "to"},
		{txintent.Request{Purpose: "payout", Key: "k", ChainID: chainID, To: recipient}, "gasLimit"},
		{txintent.Request{Purpose: "payout", Key: "k", ChainID: chainID, To: recipient, GasLimit: 21_000, Value: big.NewInt(-1)}, "negative"},
	} {
		if _, err := m.Submit(e.ctx, c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Submit(%+v) = %v, want an error naming %s", c.r, err, c.want)
		}
	}
	if ins, _ := e.store.ListTxIntents(e.ctx, txintent.Query{}); len(ins) != 0 {
		t.Fatalf("refused requests stored %d intents", len(ins))
	}
}

// The account's balance is read for the metrics, and a balance under
// MinBalance is reported low.
func TestManagerReportsALowBalance(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		min *big.Int
		low bool
	}{{big.NewInt(1), false}, {new(big.Int).Lsh(big.NewInt(1), 100), true}} {
		o := e.options(e.node, e.store)
		o.MinBalance = c.min
		m := e.start(o)
		deadline := time.Now().Add(10 * time.Second)
		for m.Stats().Balance[chainID] == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		st := m.Stats()
		if st.Balance[chainID] == nil || st.Balance[chainID].Sign() <= 0 || st.Low[chainID] != c.low {
			t.Errorf("min %s: balance %v, low %v", c.min, st.Balance[chainID], st.Low[chainID])
		}
		m.Stop()
	}
}
