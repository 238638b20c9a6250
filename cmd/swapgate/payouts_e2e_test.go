package main

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestSettlePayoutsOnChainE2E: `swapgate settle --ecosystem evm` against a
// sandbox server pays two partners on two chains through the transaction
// manager: a dry run lists the transfers and writes nothing; the run plans
// one transfer per partner, chain and token; once each is confirmed the
// partner's fee wallet holds the amount (GET /v1/balances) and the
// earnings answer's settled item names its chainId and txHash; a second
// run pays nothing more; a transfer that reverts (a native payout to a
// contract that takes no coin) leaves its earning pending, and the next
// run lists it as failed with the reason. Before: settle marked earnings
// settled without any transfer, and the earnings answer had no chainId or
// txHash.
func TestSettlePayoutsOnChainE2E(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000 })
	_, keyA := ts.createPartner("Acme", "--swap-fee-bps", "30")
	_, keyB := ts.createPartner("Beta", "--swap-fee-bps", "50")
	_, keyC := ts.createPartner("Gamma", "--swap-fee-bps", "40")
	walletA, walletB := "0x1111111111111111111111111111111111111a11", "0x1111111111111111111111111111111111111b11"
	for _, w := range []struct{ key, addr string }{{keyA, walletA}, {keyB, walletB}, {keyC, walletA}} {
		if env := ts.putWallet(w.key, "evm", w.addr); env.Status != 200 {
			t.Fatalf("put wallet: %s", env.Raw)
		}
	}
	// A's fee is USDC on Base, B's USDC on Arbitrum.
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "200000000", "fromAddress", wallet, "toAddress", receiverAddr), withKey(keyA)).decode(t, &q)
	ts.get(quotePath("fromChain", "8453", "toChain", "42161", "fromToken", usdcBase, "toToken", usdcArb,
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", receiverAddr), withKey(keyB)).decode(t, &q)
	// C's fee is Base's coin, and its wallet the sandbox router, which
	// takes no coin: its transfer reverts.
	var qc anyQuote
	ts.get(quotePath("fromChain", "8453", "toChain", "8453", "fromToken", usdcBase, "toToken", "0x0000000000000000000000000000000000000000",
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", receiverAddr), withKey(keyC)).decode(t, &qc)
	var tx struct{ To string }
	if err := json.Unmarshal(qc.Quote.TransactionRequest, &tx); err != nil || tx.To == "" {
		t.Fatalf("C's quote has no transaction: %s %v", qc.Quote.TransactionRequest, err)
	}
	// Settlement pays the wallet registered at the run.
	if env := ts.putWallet(keyC, "evm", tx.To); env.Status != 200 {
		t.Fatalf("put wallet: %s", env.Raw)
	}
	beforeA, beforeB := ts.balance(t, 8453, walletA, usdcBase), ts.balance(t, 42161, walletB, usdcArb)

	var dry settleOut
	cli(t, &dry, "settle", "--data", ts.dir, "--ecosystem", "evm", "--dry-run")
	if !dry.DryRun || dry.ID != "" || len(dry.Transfers) != 3 {
		t.Fatalf("dry run: %+v", dry)
	}
	var out settleOut
	cli(t, &out, "settle", "--data", ts.dir, "--ecosystem", "evm")
	if out.ID == "" || len(out.Transfers) != 3 {
		t.Fatalf("settle: %+v", out)
	}
	byWallet := map[string]transferOut{}
	for _, tr := range out.Transfers {
		if tr.State != "planned" || tr.RowCount != 1 {
			t.Fatalf("transfer %+v", tr)
		}
		byWallet[strings.ToLower(tr.Wallet)] = tr
	}
	trA, trB := byWallet[strings.ToLower(walletA)], byWallet[strings.ToLower(walletB)]
	if trA.ChainID != 8453 || !strings.EqualFold(trA.Token, usdcBase) || trB.ChainID != 42161 || !strings.EqualFold(trB.Token, usdcArb) {
		t.Fatalf("transfers %+v %+v", trA, trB)
	}

	settledItem := func(key string) (e earningsView) {
		ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &e)
		return e
	}
	for _, c := range []struct {
		key   string
		tr    transferOut
		chain uint64
		addr  string
		token string
		was   *big.Int
	}{{keyA, trA, 8453, walletA, usdcBase, beforeA}, {keyB, trB, 42161, walletB, usdcArb, beforeB}} {
		var e earningsView
		waitUntil(t, "the payout to "+c.addr+" confirmed", func() bool {
			e = settledItem(c.key)
			return len(e.Settled) == 1
		})
		if s := e.Settled[0]; s.ChainID != c.chain || len(s.TxHash) != 66 || len(e.Pending) != 0 {
			t.Fatalf("earnings after the payout: %+v", e)
		}
		got := new(big.Int).Sub(ts.balance(t, c.chain, c.addr, c.token), c.was)
		if got.String() != c.tr.Amount {
			t.Fatalf("%s received %s, the transfer pays %s", c.addr, got, c.tr.Amount)
		}
	}

	// C's transfer reverts: its earning is pending again, and the next
	// run plans it anew and reports the failure with its reason.
	var again settleOut
	waitUntil(t, "C's transfer failed", func() bool {
		cli(t, &again, "settle", "--data", ts.dir, "--ecosystem", "evm", "--dry-run")
		return len(again.Failed) == 1
	})
	if again.Failed[0].Reason == "" || !strings.EqualFold(again.Failed[0].Wallet, tx.To) || len(again.Transfers) != 1 {
		t.Fatalf("the report after C's failure: %+v", again)
	}
	if e := settledItem(keyC); len(e.Settled) != 0 || len(e.Pending) != 1 {
		t.Fatalf("C's earnings after the failure: %+v", e)
	}
	// D's fee is USDC on Solana (an Ethereum to Solana quote settles in
	// evm): the manager cannot sign there, so the run lists a manual
	// transfer, settled once the operator records the transaction.
	_, keyD := ts.createPartner("Delta", "--swap-fee-bps", "20")
	if env := ts.putWallet(keyD, "evm", walletB); env.Status != 200 {
		t.Fatalf("put wallet: %s", env.Raw)
	}
	ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"), withKey(keyD)).decode(t, &q)
	var manual settleOut
	cli(t, &manual, "settle", "--data", ts.dir, "--ecosystem", "evm")
	var md *transferOut
	for i, tr := range manual.Transfers {
		if tr.ChainID == 1151111081099710 {
			md = &manual.Transfers[i]
		}
	}
	if md == nil || md.State != "manual" {
		t.Fatalf("D's transfer: %+v", manual.Transfers)
	}
	var stderr strings.Builder
	if code := run(withStore(ts.dir, "settle", "record", "--data", ts.dir, "--payout", md.ID, "--tx", "not-a-hash"), &strings.Builder{}, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--tx") {
		t.Fatalf("record with a bad hash: exit %d %s", code, stderr.String())
	}
	hash := "0x" + strings.Repeat("d4", 32)
	var rec transferOut
	cli(t, &rec, "settle", "record", "--data", ts.dir, "--payout", md.ID, "--tx", hash)
	if e := settledItem(keyD); rec.State != "settled" || len(e.Settled) != 1 || e.Settled[0].TxHash != hash || e.Settled[0].ChainID != 1151111081099710 {
		t.Fatalf("D after the record: %+v %+v", rec, e)
	}

	// A and B are paid once: a run finds nothing of theirs.
	if e := settledItem(keyA); len(e.Settled) != 1 || len(e.Pending) != 0 {
		t.Fatalf("A after the second run: %+v", e)
	}
}

// withStore is args with the --store of dir's database in the suite's
// PostgreSQL pass, as cli adds it, for a command run to read its refusal.
func withStore(dir string, args ...string) []string {
	if dsn, ok := suiteStores.Load(dir); ok {
		return append(args, "--store", dsn.(string))
	}
	return args
}

// TestSettleRecordFlags: settle record refuses, naming the flag, a
// missing or malformed payout id and a missing hash, before it opens any
// store.
func TestSettleRecordFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--tx", "0x1"}, "--payout"},
		{[]string{"--payout", "pay_x", "--tx", "0x1"}, "--payout"},
		{[]string{"--payout", "pay_" + strings.Repeat("0", 24)}, "--tx"},
		{[]string{"--payout", "pay_" + strings.Repeat("0", 24), "--tx", "0x1", "extra"}, "unexpected"},
	} {
		var stderr strings.Builder
		code := run(append([]string{"settle", "record", "--data", dir}, c.args...), &strings.Builder{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.flag) {
			t.Errorf("settle record %v: exit %d %s, want 2 naming %s", c.args, code, stderr.String(), c.flag)
		}
	}
}
