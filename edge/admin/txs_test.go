package admin

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// fakeIntents serves fixed intents as the store would: selected by the
// query, in ID order, continued after After, at most Limit.
type fakeIntents struct {
	list  []*txintent.Intent
	asked []txintent.Query
}

func (f *fakeIntents) TxIntent(_ context.Context, id string) (*txintent.Intent, error) {
	for _, in := range f.list {
		if in.ID == id {
			return in.Clone(), nil
		}
	}
	return nil, account.ErrNotFound
}

func (f *fakeIntents) ListTxIntents(_ context.Context, q txintent.Query) ([]*txintent.Intent, error) {
	f.asked = append(f.asked, q)
	var out []*txintent.Intent
	for _, in := range f.list {
		if q.Matches(in) && in.ID > q.After && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, in.Clone())
		}
	}
	return out, nil
}

func u64(v uint64) *uint64 { return &v }

// testIntents: a payout replaced once and mined, an inbound bridge signed
// and not yet sent, and a payout that reverted.
func testIntents() []*txintent.Intent {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return []*txintent.Intent{
		{ID: "txi_01", Purpose: "payout", Key: "payout:b1:p1:42161", ChainID: 42161, From: "0xaa", To: "0xbb", Value: "0",
			Data: []byte{0xa9, 0x05, 0x9c, 0xbb}, GasLimit: 65000, State: txintent.Confirmed, Nonce: u64(4), CreatedAt: at, UpdatedAt: at,
			Txs: []txintent.Tx{
				{Hash: "0x01", Nonce: 4, MaxFeePerGas: "100", MaxPriorityFeePerGas: "10", Raw: []byte{1}, SentAt: at},
				{Hash: "0x02", Nonce: 4, MaxFeePerGas: "113", MaxPriorityFeePerGas: "12", Raw: []byte{2}, SentAt: at.Add(30 * time.Second),
					BlockNumber: 77, BlockHash: "0xb77", Status: 1},
			}},
		{ID: "txi_02", Purpose: "inbound.bridge", Key: "inbound:d1", ChainID: 369, From: "0xaa", To: "0xcc", Value: "5",
			GasLimit: 21000, State: txintent.Signed, Nonce: u64(0), CreatedAt: at, UpdatedAt: at,
			Txs: []txintent.Tx{{Hash: "0x03", Nonce: 0, MaxFeePerGas: "50", MaxPriorityFeePerGas: "1", Raw: []byte{3}}}},
		{ID: "txi_03", Purpose: "payout", Key: "payout:b1:p2:42161", ChainID: 42161, From: "0xaa", To: "0xdd",
			GasLimit: 65000, State: txintent.Failed, Reason: "execution reverted: ERC20: transfer amount exceeds balance", Nonce: u64(5),
			CreatedAt: at, UpdatedAt: at,
			Txs: []txintent.Tx{{Hash: "0x04", Nonce: 5, MaxFeePerGas: "100", MaxPriorityFeePerGas: "10", Raw: []byte{4}, SentAt: at, BlockNumber: 78, BlockHash: "0xb78"}}},
		{ID: "txi_04", Purpose: "payout", Key: "payout:b2:p1:42161", ChainID: 42161, From: "0xaa", To: "0xbb", Value: "1",
			GasLimit: 21000, State: txintent.Sent, Nonce: u64(6), CreatedAt: at, UpdatedAt: at,
			Txs: []txintent.Tx{
				{Hash: "0x05", Nonce: 6, MaxFeePerGas: "100", MaxPriorityFeePerGas: "10", Raw: []byte{5}, SentAt: at},
				{Hash: "0x06", Nonce: 6, MaxFeePerGas: "113", MaxPriorityFeePerGas: "12", Raw: []byte{6}, SentAt: at},
			}},
	}
}

// txAdmins is TxLocal over the fake, and the Client through a listener
// serving the same fake.
func txAdmins(t *testing.T) map[string]TxAdmin {
	t.Helper()
	local := NewTxLocal(&fakeIntents{list: testIntents()})
	store, dir := openStore(t)
	s, err := New(dir, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterTxs(s, &fakeIntents{list: testIntents()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServer(t, s) })
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return map[string]TxAdmin{"local": local, "client": c}
}

func ids(list []IntentView) []string {
	out := []string{}
	for _, v := range list {
		out = append(out, v.ID)
	}
	return out
}

// TestTxListAndShow: both implementations select by state, purpose and
// chain, page with after and limit, and show every transaction of an
// intent with its own state; the signed bytes never appear.
func TestTxListAndShow(t *testing.T) {
	for name, ta := range txAdmins(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, tc := range []struct {
				f    TxFilter
				want []string
			}{
				{TxFilter{}, []string{"txi_01", "txi_02", "txi_03", "txi_04"}},
				{TxFilter{State: "confirmed"}, []string{"txi_01"}},
				{TxFilter{Purpose: "payout"}, []string{"txi_01", "txi_03", "txi_04"}},
				{TxFilter{ChainID: 369}, []string{"txi_02"}},
				{TxFilter{Purpose: "payout", ChainID: 42161, State: "failed"}, []string{"txi_03"}},
				{TxFilter{After: "txi_01", Limit: 2}, []string{"txi_02", "txi_03"}},
			} {
				list, err := ta.ListTxs(ctx, tc.f)
				if err != nil {
					t.Fatalf("%+v: %v", tc.f, err)
				}
				if got := ids(list); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%+v: listed %v, want %v", tc.f, got, tc.want)
				}
			}

			v, err := ta.ShowTx(ctx, "txi_01")
			if err != nil {
				t.Fatal(err)
			}
			if v.State != "confirmed" || v.Nonce == nil || *v.Nonce != 4 || v.Data != "0xa9059cbb" || len(v.Txs) != 2 {
				t.Fatalf("show txi_01 = %+v", v)
			}
			if a, b := v.Txs[0], v.Txs[1]; a.State != TxReplaced || a.MaxFeePerGas != "100" || a.SentAt == nil ||
				b.State != TxMined || b.BlockNumber != 77 || b.BlockHash != "0xb77" || b.MaxPriorityFeePerGas != "12" {
				t.Errorf("txi_01's transactions = %+v", v.Txs)
			}
			states := map[string][]string{"txi_02": {TxSigned}, "txi_03": {TxReverted}, "txi_04": {TxReplaced, TxPending}}
			for id, want := range states {
				v, err := ta.ShowTx(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, tx := range v.Txs {
					got = append(got, tx.State)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: transactions %v, want %v", id, got, want)
				}
				if id == "txi_03" && !strings.Contains(v.Reason, "exceeds balance") {
					t.Errorf("txi_03's reason = %q", v.Reason)
				}
			}
			if _, err := ta.ShowTx(ctx, "txi_99"); !errors.Is(err, account.ErrNotFound) {
				t.Errorf("unknown intent: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestTxListRefusesBadFilters: a bad filter is ErrInvalid naming the
// field, through either implementation.
func TestTxListRefusesBadFilters(t *testing.T) {
	for name, ta := range txAdmins(t) {
		for _, tc := range []struct {
			f    TxFilter
			word string
		}{
			{TxFilter{State: "pending"}, "state"},
			{TxFilter{Limit: MaxTxLimit + 1}, "limit"},
			{TxFilter{Limit: -1}, "limit"},
			{TxFilter{After: "a b"}, "after"},
			{TxFilter{Purpose: strings.Repeat("p", 65)}, "purpose"},
		} {
			_, err := ta.ListTxs(context.Background(), tc.f)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.word) {
				t.Errorf("%s %+v: %v, want ErrInvalid naming %s", name, tc.f, err, tc.word)
			}
		}
		for _, id := range []string{"", strings.Repeat("x", maxIntentID+1), "txi\n1"} {
			if _, err := ta.ShowTx(context.Background(), id); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s show %q: %v, want ErrInvalid", name, id, err)
			}
		}
	}
}

// TestTxListDefaultLimit: a listing without a limit asks the store for
// DefaultTxLimit.
func TestTxListDefaultLimit(t *testing.T) {
	f := &fakeIntents{list: testIntents()}
	if _, err := NewTxLocal(f).ListTxs(context.Background(), TxFilter{}); err != nil {
		t.Fatal(err)
	}
	if len(f.asked) != 1 || f.asked[0].Limit != DefaultTxLimit {
		t.Errorf("asked %+v", f.asked)
	}
}
