package account

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

const (
	usdcArb = "0xaf88d065e77c8cc2239327c5edb3a432268e5831"
	walletA = "0x1111111111111111111111111111111111111111"
	walletB = "0x2222222222222222222222222222222222222222"
)

func pendingEarning(partner, id string, chain uint64, token, amount string, usd int64) *Activity {
	return &Activity{PartnerID: partner, ID: id, ToChain: chain, FeeMicroUSD: usd,
		CreatedAt: time.Unix(1_800_000_000, 0).UTC(),
		Earning:   &Earning{Ecosystem: EcosystemEVM, FeeToken: token, FeeAmount: amount, State: EarningPending}}
}

// TestPayoutPlanGroupsByPartnerChainAndToken holds the plan to its rules:
// one transfer per partner, chain and token (the token's case aside), the
// amounts summed exactly, a partner without a wallet kept, a settled entry
// forgotten, a chain the manager cannot sign on planned manual, and the
// records' earnings left pending (they settle with their transfer).
func TestPayoutPlanGroupsByPartnerChainAndToken(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	plan := NewPayoutPlan(EcosystemEVM, "stl_1", now, map[string]string{"a": walletA, "b": walletB},
		func(c uint64) bool { return c == 42161 || c == 8453 })
	settled := pendingEarning("a", "q9", 42161, usdcArb, "1", 1)
	settled.Earning.State = EarningSettled
	cases := []struct {
		rec  *Activity
		want Decision
	}{
		{pendingEarning("a", "q1", 42161, usdcArb, "1000000000000000000000", 10), Pay},
		{pendingEarning("a", "q2", 42161, "0xAF88d065e77c8cC2239327C5EDb3A432268e5831", "1", 5), Pay},
		{pendingEarning("a", "q3", 8453, nativeToken, "7", 1), Pay},
		{pendingEarning("b", "q4", 10, nativeToken, "3", 2), Pay},
		{pendingEarning("c", "q5", 42161, usdcArb, "3", 2), Keep},
		{settled, Forget},
	}
	for _, c := range cases {
		got, err := plan.Decide(c.rec)
		if err != nil || got != c.want {
			t.Fatalf("Decide(%s) = %v, %v, want %v", c.rec.ID, got, err, c.want)
		}
		if c.want == Pay && c.rec.Earning.State != EarningPending {
			t.Fatalf("Decide(%s) left the earning %s; it settles with its transfer", c.rec.ID, c.rec.Earning.State)
		}
	}
	ts := plan.Transfers()
	want := []struct {
		partner, token, amount, state string
		chain                         uint64
		rows                          int
		usd                           int64
	}{
		{"a", nativeToken, "7", TransferPlanned, 8453, 1, 1},
		{"a", usdcArb, "1000000000000000000001", TransferPlanned, 42161, 2, 15},
		{"b", nativeToken, "3", TransferManual, 10, 1, 2},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d transfers, want %d: %+v", len(ts), len(want), ts)
	}
	for i, w := range want {
		g := ts[i]
		if g.PartnerID != w.partner || g.ChainID != w.chain || g.Amount != w.amount || g.State != w.state ||
			g.RowCount != w.rows || g.TotalMicroUSD != w.usd || len(g.Earnings) != w.rows || !ValidTransferID(g.ID) || g.Batch != "stl_1" {
			t.Fatalf("transfer %d = %+v, want %+v", i, g, w)
		}
	}
	if ts[0].Wallet != walletA || ts[2].Wallet != walletB {
		t.Fatalf("wallets %s, %s", ts[0].Wallet, ts[2].Wallet)
	}
	b := plan.Batch(false)
	if b.ID != "stl_1" || len(b.Transfers) != 3 || len(b.Skipped) != 1 || b.Skipped[0].PartnerID != "c" {
		t.Fatalf("batch = %+v", b)
	}
	if d := plan.Batch(true); d.ID != "" || len(d.Transfers) != 3 {
		t.Fatalf("dry batch = %+v", d)
	}
	again := NewPayoutPlan(EcosystemEVM, "stl_1", now, map[string]string{"a": walletA}, nil)
	if _, err := again.Decide(pendingEarning("a", "q1", 42161, usdcArb, "1", 1)); err != nil {
		t.Fatal(err)
	}
	if id := again.Transfers()[0].ID; id != ts[1].ID {
		t.Fatalf("the same run's transfer is %s, then %s", ts[1].ID, id)
	}
	if _, err := plan.Decide(pendingEarning("a", "bad", 42161, usdcArb, "-1", 1)); err == nil {
		t.Fatal("a negative fee amount was summed")
	}
}

// TestTransferStates holds the transfer's moves: open states settle or
// fail once; a second identical move is a no-op; a final state refuses
// the other move.
func TestTransferStates(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	for _, c := range []struct {
		from, move, arg, stored string
		changed                 bool
		err                     error
		want                    string
	}{
		{TransferPlanned, "settle", "0xaa", "", true, nil, TransferSettled},
		{TransferManual, "settle", "0xaa", "", true, nil, TransferSettled},
		{TransferSettled, "settle", "0xAA", "0xaa", false, nil, TransferSettled},
		{TransferSettled, "settle", "0xbb", "0xaa", false, ErrTransferState, TransferSettled},
		{TransferPlanned, "fail", "reverted", "", true, nil, TransferFailed},
		{TransferFailed, "fail", "again", "", false, nil, TransferFailed},
		{TransferSettled, "fail", "late", "0xaa", false, ErrTransferState, TransferSettled},
		{TransferFailed, "settle", "0xaa", "", false, ErrTransferState, TransferFailed},
	} {
		tr := &Transfer{ID: "pay_x", State: c.from, TxHash: c.stored}
		var changed bool
		var err error
		if c.move == "settle" {
			changed, err = tr.Settle(c.arg, now)
		} else {
			changed, err = tr.Fail(c.arg, now)
		}
		if changed != c.changed || !errors.Is(err, c.err) || tr.State != c.want {
			t.Errorf("%s %s(%s) = %v, %v, state %s; want %v, %v, %s", c.from, c.move, c.arg, changed, err, tr.State, c.changed, c.err, c.want)
		}
	}
}

// TestTransferCall holds the transaction a transfer is: the coin as value,
// an ERC-20 as transfer(wallet, amount) calldata to the token.
func TestTransferCall(t *testing.T) {
	to, data, value, gas, err := (&Transfer{Wallet: walletA, Token: nativeToken, Amount: "5"}).Call()
	if err != nil || to.Hex() != "0x1111111111111111111111111111111111111111" || len(data) != 0 || value.Int64() != 5 || gas != NativeTransferGas {
		t.Fatalf("native: %s %x %v %d %v", to.Hex(), data, value, gas, err)
	}
	to, data, value, gas, err = (&Transfer{Wallet: walletB, Token: usdcArb, Amount: "258"}).Call()
	want := "a9059cbb" + "0000000000000000000000002222222222222222222222222222222222222222" +
		"0000000000000000000000000000000000000000000000000000000000000102"
	if err != nil || hex.EncodeToString(data) != want || value.Sign() != 0 || gas != TokenTransferGas ||
		to.Hex() != "0xaf88d065e77c8cC2239327C5EDb3A432268e5831" {
		t.Fatalf("erc20: %s %x %v %d %v", to.Hex(), data, value, gas, err)
	}
	for _, bad := range []Transfer{
		{Wallet: "bc1q", Token: nativeToken, Amount: "1"},
		{Wallet: walletA, Token: "So11111111111111111111111111111111111111112", Amount: "1"},
		{Wallet: walletA, Token: nativeToken, Amount: "0"},
		{Wallet: walletA, Token: nativeToken, Amount: "x"},
	} {
		if _, _, _, _, err := bad.Call(); err == nil {
			t.Errorf("Call(%+v) built a transaction", bad)
		}
	}
}
