package storecontract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// TxIntents is the transaction manager's intents and nonces (txm.Store)
// and the operator's sealed key. Every write is durable when it returns:
// an intent before it is signed, its signed bytes before they are sent.
type TxIntents interface {
	txm.Store
	OperatorKey(ctx context.Context, name string) ([]byte, error)
	CreateOperatorKey(ctx context.Context, name string, key []byte) ([]byte, bool, error)
}

const txAccount = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"

func newTxIntent(i int, key string, chainID uint64, now time.Time) *txintent.Intent {
	return &txintent.Intent{ID: fmt.Sprintf("tx_%04d", i), Purpose: "payout", Key: key, ChainID: chainID,
		From: txAccount, To: "0x000000000000000000000000000000000000dEaD", Data: []byte{0xa9, 0x05},
		Value: "1000", GasLimit: 65_000, State: txintent.Queued, CreatedAt: now, UpdatedAt: now}
}

// RunTxIntents holds a TxIntents implementation to its contract.
func RunTxIntents(t *testing.T, open Factory[TxIntents]) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()

	t.Run("one intent per key, ever", func(t *testing.T) {
		s := open(t).Store
		got, created, err := s.PutTxIntent(ctx, newTxIntent(1, "payout/a", 42161, now))
		mustNil(t, "put", err)
		if !created || got.ID != "tx_0001" || got.Version == 0 {
			t.Fatalf("first put: created %v, %+v", created, got)
		}
		again, created, err := s.PutTxIntent(ctx, newTxIntent(2, "payout/a", 10, now))
		mustNil(t, "second put", err)
		if created || again.ID != "tx_0001" || again.ChainID != 42161 {
			t.Fatalf("a second put with the key made or changed an intent: created %v, %+v", created, again)
		}
		if _, err := s.TxIntent(ctx, "tx_0002"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the second put's intent: %v", err)
		}
		byKey, err := s.TxIntentByKey(ctx, "payout/a")
		mustNil(t, "by key", err)
		if byKey.ID != "tx_0001" || !bytes.Equal(byKey.Data, []byte{0xa9, 0x05}) || byKey.Value != "1000" || !byKey.CreatedAt.Equal(now) {
			t.Fatalf("by key: %+v", byKey)
		}
		if _, err := s.TxIntentByKey(ctx, "payout/b"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown key: %v", err)
		}
	})

	t.Run("concurrent puts of one key make one intent", func(t *testing.T) {
		s := open(t).Store
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, _, err := s.PutTxIntent(ctx, newTxIntent(10+i, "same", 1, now))
				if err == nil {
					ids[i] = got.ID
				}
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] || id == "" {
				t.Fatalf("concurrent puts of one key answered %v", ids)
			}
		}
	})

	t.Run("updates compare and set, allocate the nonce and survive a crash", func(t *testing.T) {
		h := open(t)
		s := h.Store
		a, _, err := s.PutTxIntent(ctx, newTxIntent(1, "k1", 42161, now))
		mustNil(t, "put a", err)
		b, _, err := s.PutTxIntent(ctx, newTxIntent(2, "k2", 42161, now))
		mustNil(t, "put b", err)
		stale := a.Clone()
		for i, in := range []*txintent.Intent{a, b} {
			mustNil(t, "sign", in.AddTx(txintent.Tx{Hash: fmt.Sprintf("0x%064x", i+1), Nonce: uint64(7 + i), MaxFeePerGas: "200", MaxPriorityFeePerGas: "2", Raw: []byte{byte(i), 1}}))
			mustNil(t, "move", in.Move(txintent.Signed, now))
		}
		v := a.Version
		mustNil(t, "update", s.UpdateTxIntents(ctx, []*txintent.Intent{a, b}))
		if a.Version != v+1 {
			t.Fatalf("version after an update: %d, want %d", a.Version, v+1)
		}
		stale.State = txintent.Failed
		if err := s.UpdateTxIntents(ctx, []*txintent.Intent{stale}); !errors.Is(err, store.ErrStale) {
			t.Fatalf("a stale write: %v", err)
		}
		// A batch with one stale intent writes none of them.
		b2 := b.Clone()
		mustNil(t, "sent", b2.Move(txintent.Sent, now))
		if err := s.UpdateTxIntents(ctx, []*txintent.Intent{b2, stale}); !errors.Is(err, store.ErrStale) {
			t.Fatalf("a batch with a stale write: %v", err)
		}
		if h.Crash != nil {
			s = h.Crash(t)
		}
		got, err := s.TxIntent(ctx, b.ID)
		mustNil(t, "read b", err)
		if got.State != txintent.Signed || got.Nonce == nil || *got.Nonce != 8 || len(got.Txs) != 1 || !bytes.Equal(got.Txs[0].Raw, []byte{1, 1}) || got.Version != b.Version {
			t.Fatalf("after the crash b is %+v", got)
		}
		n, err := s.NextNonce(ctx, 42161, txAccount)
		mustNil(t, "next nonce", err)
		if n != 9 {
			t.Fatalf("next nonce %d, want 9 (the highest stored nonce + 1)", n)
		}
		if n, _ := s.NextNonce(ctx, 10, txAccount); n != 0 {
			t.Fatalf("another chain's nonce: %d", n)
		}
		// A nonce below the account's next is another writer's: allocating
		// it again is refused, and nothing of the batch is written.
		c, _, err := s.PutTxIntent(ctx, newTxIntent(3, "k3", 42161, now))
		mustNil(t, "put c", err)
		mustNil(t, "sign c", c.AddTx(txintent.Tx{Hash: fmt.Sprintf("0x%064x", 3), Nonce: 8, MaxFeePerGas: "200", MaxPriorityFeePerGas: "2", Raw: []byte{3}}))
		mustNil(t, "move c", c.Move(txintent.Signed, now))
		if err := s.UpdateTxIntents(ctx, []*txintent.Intent{c}); !errors.Is(err, store.ErrStale) {
			t.Fatalf("a nonce allocated twice: %v", err)
		}
		if got, _ := s.TxIntent(ctx, c.ID); got.State != txintent.Queued || got.Nonce != nil {
			t.Fatalf("the refused allocation was written: %+v", got)
		}
		if n, err := s.RaiseNonce(ctx, 42161, txAccount, 5); err != nil || n != 9 {
			t.Fatalf("a lower raise: %d %v", n, err)
		}
		if n, err := s.RaiseNonce(ctx, 42161, txAccount, 20); err != nil || n != 20 {
			t.Fatalf("a higher raise: %d %v", n, err)
		}
		if h.Crash != nil {
			s = h.Crash(t)
		}
		if n, _ := s.NextNonce(ctx, 42161, txAccount); n != 20 {
			t.Fatalf("the raised nonce after a crash: %d", n)
		}
	})

	t.Run("lists open and unhandled intents until marked handled", func(t *testing.T) {
		h := open(t)
		s := h.Store
		var ins []*txintent.Intent
		for i, chain := range []uint64{1, 10, 1, 42161} {
			in, _, err := s.PutTxIntent(ctx, newTxIntent(i, fmt.Sprintf("key%d", i), chain, now))
			mustNil(t, "put", err)
			ins = append(ins, in)
		}
		mustNil(t, "fail", ins[1].Fail("execution reverted: no", now))
		mustNil(t, "update", s.UpdateTxIntents(ctx, ins[1:2]))
		if err := s.MarkTxIntentHandled(ctx, ins[0].ID); err == nil {
			t.Fatal("a queued intent was marked handled")
		}
		ids := func(q txintent.Query) string {
			got, err := s.ListTxIntents(ctx, q)
			mustNil(t, "list", err)
			var out []string
			for _, in := range got {
				out = append(out, in.ID)
			}
			return fmt.Sprint(out)
		}
		for _, c := range []struct {
			q    txintent.Query
			want string
		}{
			{txintent.Query{}, "[tx_0000 tx_0001 tx_0002 tx_0003]"},
			{txintent.Query{ChainID: 1}, "[tx_0000 tx_0002]"},
			{txintent.Query{State: txintent.Failed}, "[tx_0001]"},
			{txintent.Query{Open: true}, "[tx_0000 tx_0002 tx_0003]"},
			{txintent.Query{Unhandled: true}, "[tx_0001]"},
			{txintent.Query{Open: true, Unhandled: true}, "[tx_0000 tx_0001 tx_0002 tx_0003]"},
			{txintent.Query{After: "tx_0001", Limit: 1}, "[tx_0002]"},
			{txintent.Query{Purpose: "other"}, "[]"},
		} {
			if got := ids(c.q); got != c.want {
				t.Errorf("list %+v: %s, want %s", c.q, got, c.want)
			}
		}
		mustNil(t, "mark", s.MarkTxIntentHandled(ctx, ins[1].ID))
		mustNil(t, "mark again", s.MarkTxIntentHandled(ctx, ins[1].ID))
		if h.Crash != nil {
			s = h.Crash(t)
		}
		if got := ids(txintent.Query{Unhandled: true}); got != "[]" {
			t.Errorf("unhandled after the mark: %s", got)
		}
		got, err := s.TxIntent(ctx, ins[1].ID)
		mustNil(t, "read", err)
		if !got.Handled || got.Reason != "execution reverted: no" {
			t.Fatalf("the handled intent: %+v", got)
		}
	})

	t.Run("the operator key is created once and sealed", func(t *testing.T) {
		h := open(t)
		s := h.Store
		if _, err := s.OperatorKey(ctx, "evm"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no key yet: %v", err)
		}
		k1 := bytes.Repeat([]byte{1}, 32)
		got, created, err := s.CreateOperatorKey(ctx, "evm", k1)
		mustNil(t, "create", err)
		if !created || !bytes.Equal(got, k1) {
			t.Fatalf("create: %v %x", created, got)
		}
		got, created, err = s.CreateOperatorKey(ctx, "evm", bytes.Repeat([]byte{2}, 32))
		mustNil(t, "create again", err)
		if created || !bytes.Equal(got, k1) {
			t.Fatalf("a second create replaced the key: %v %x", created, got)
		}
		if h.Crash != nil {
			s = h.Crash(t)
		}
		got, err = s.OperatorKey(ctx, "evm")
		mustNil(t, "read", err)
		if !bytes.Equal(got, k1) {
			t.Fatalf("the key after a crash: %x", got)
		}
	})
}
