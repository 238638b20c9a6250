package txintent

import (
	"errors"
	"math/big"
	"testing"
	"time"
)

func TestTransitions(t *testing.T) {
	ok := map[[2]State]bool{
		{Queued, Signed}: true, {Queued, Failed}: true,
		{Signed, Signed}: true, {Signed, Sent}: true, {Signed, Mined}: true, {Signed, Failed}: true,
		{Sent, Sent}: true, {Sent, Mined}: true, {Sent, Failed}: true,
		{Mined, Confirmed}: true, {Mined, Sent}: true, {Mined, Failed}: true,
	}
	for _, from := range States {
		for _, to := range States {
			if got := CanMove(from, to); got != ok[[2]State{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
	}
	for _, s := range States {
		if s.Final() != (s == Confirmed || s == Failed) || !s.Valid() {
			t.Errorf("state %s: final %v valid %v", s, s.Final(), s.Valid())
		}
	}
	if State("lost").Valid() {
		t.Error("an unknown state is valid")
	}
	in := &Intent{ID: "tx_1", State: Confirmed}
	if err := in.Fail("late", time.Now()); !errors.Is(err, ErrTransition) || in.State != Confirmed || in.Reason != "" {
		t.Fatalf("failing a confirmed intent: %v %+v", err, in)
	}
}

func TestAddTxKeepsTheNonceAndRaisesTheFees(t *testing.T) {
	in := &Intent{ID: "tx_1", State: Queued}
	if err := in.AddTx(Tx{Hash: "0x1", Nonce: 4, MaxFeePerGas: "100", MaxPriorityFeePerGas: "8"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tx   Tx
		fail bool
	}{
		{Tx{Hash: "0x2", Nonce: 5, MaxFeePerGas: "200", MaxPriorityFeePerGas: "20"}, true}, // another nonce
		{Tx{Hash: "0x2", Nonce: 4, MaxFeePerGas: "112", MaxPriorityFeePerGas: "20"}, true}, // fee cap +12%
		{Tx{Hash: "0x2", Nonce: 4, MaxFeePerGas: "200", MaxPriorityFeePerGas: "8"}, true},  // tip unchanged
		{Tx{Hash: "0x2", Nonce: 4, MaxFeePerGas: "113", MaxPriorityFeePerGas: "9"}, false}, // both ≥ 12.5%, rounded up
	} {
		if err := in.AddTx(c.tx); (err != nil) != c.fail {
			t.Errorf("AddTx(%+v): %v", c.tx, err)
		}
	}
	if len(in.Txs) != 2 || *in.Nonce != 4 || in.Last().Hash != "0x2" {
		t.Fatalf("%+v", in)
	}
}

func TestFees(t *testing.T) {
	b := func(n int64) *big.Int { return big.NewInt(n) }
	for _, c := range []struct{ old, want int64 }{{0, 1}, {1, 2}, {8, 9}, {100, 113}, {1_000_000_000, 1_125_000_000}} {
		if got := MinBump(b(c.old)); got.Int64() != c.want {
			t.Errorf("MinBump(%d) = %s, want %d", c.old, got, c.want)
		}
	}
	f, capped := Initial(b(10), b(2), nil)
	if f.MaxFeePerGas.Int64() != 22 || f.MaxPriorityFeePerGas.Int64() != 2 || capped {
		t.Errorf("Initial: %+v %v", f, capped)
	}
	if f, capped = Initial(b(10), b(2), b(15)); f.MaxFeePerGas.Int64() != 15 || !capped {
		t.Errorf("Initial under a cap: %+v %v", f, capped)
	}
	for _, c := range []struct {
		name               string
		fee, tip, base, cp int64
		max, wantTip       int64
		ok                 bool
	}{
		{"both up 12.5%", 100, 10, 0, 0, 113, 12, true},
		{"the fee cap follows a risen base fee", 100, 10, 300, 0, 612, 12, true},
		{"held at the cap", 100, 10, 300, 150, 150, 12, true},
		{"a cap leaving no valid replacement", 100, 10, 0, 110, 0, 0, false},
	} {
		got, ok := Bump(Fees{b(c.fee), b(c.tip)}, b(c.base), b(c.cp))
		if ok != c.ok || (ok && (got.MaxFeePerGas.Int64() != c.max || got.MaxPriorityFeePerGas.Int64() != c.wantTip)) {
			t.Errorf("%s: Bump = %+v %v", c.name, got, ok)
		}
	}
}
