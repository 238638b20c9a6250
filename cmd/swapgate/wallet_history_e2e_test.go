package main

import (
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// walletTx is what the wallet-history test reads of a transaction.
type walletTx struct {
	ID, Kind, Status                                       string
	FromAddress, ToAddress, SendingTxHash, ReceivingTxHash *string
}

// A wallet's history through the real server, in sandbox mode: swaps
// quoted, broadcast on the sandbox chains and reported with execute, by
// different wallets, listed by GET /v1/partner/transactions?wallet= where
// the wallet sent or received them (an EVM address in any case), newest
// first a page at a time, combined with the other filters, each with its
// addresses and transactions; a quote never executed and another
// partner's swap of the same wallet are not listed; an invalid wallet is
// refused naming wallet.
func TestWalletHistoryTransactionsE2E(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0
	})
	_, key := ts.createPartner("Wallets", "--swap-fee-bps", "0")
	_, other := ts.createPartner("Other", "--swap-fee-bps", "0")
	// wallet (EIP-55 mixed case) and a second sender; receiverAddr is the
	// third wallet.
	const second = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

	// swapOf quotes from → to with key, approves when asked, broadcasts
	// from the sender and reports it; it returns the quote id and hash.
	swapOf := func(key, from, to string, approve bool) (string, string) {
		t.Helper()
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "200000000", "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
		if approve {
			ts.approve(t, 42161, from, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(200000000))
		}
		b := ts.broadcast(t, 42161, from, q.tx(t))
		var ex struct{ Status *statusBody }
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key)).decode(t, &ex)
		return q.Quote.ID, b.TxHash
	}
	q1, h1 := swapOf(key, wallet, receiverAddr, true) // delivered: DONE
	q2, _ := swapOf(key, second, wallet, false)       // unapproved: FAILED
	q3, _ := swapOf(key, second, receiverAddr, false)
	q9, _ := swapOf(other, wallet, receiverAddr, false) // another partner's
	var never anyQuote                                  // quoted from wallet, never executed
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", wallet, "toAddress", wallet), withKey(key)).decode(t, &never)

	page := func(key, query string) ([]walletTx, *string) {
		t.Helper()
		var p struct {
			Transactions []walletTx
			NextCursor   *string
		}
		ts.get("/v1/partner/transactions?"+query, withKey(key)).decode(t, &p)
		return p.Transactions, p.NextCursor
	}
	// history follows the cursor through every page and lists the ids.
	history := func(key, query string) string {
		t.Helper()
		var ids []string
		q := query
		for range 10 {
			txs, next := page(key, q)
			for _, tx := range txs {
				ids = append(ids, tx.ID)
			}
			if next == nil {
				return strings.Join(ids, " ")
			}
			q = query + "&cursor=" + url.QueryEscape(*next)
		}
		t.Fatalf("%s: the cursor never ends: %v", query, ids)
		return ""
	}
	var st statusBody
	waitUntil(t, "the swaps end and their lines follow", func() bool {
		ts.get("/v1/status?txHash="+h1).decode(t, &st)
		txs, _ := page(key, "limit=10")
		ended := 0
		for _, tx := range txs {
			if tx.Kind == "swap" && (tx.Status == swap.StatusDone || tx.Status == swap.StatusFailed) {
				ended++
			}
		}
		return st.Status == swap.StatusDone && ended == 3
	})

	want := func(ids ...string) string { return strings.Join(ids, " ") }
	upper := "0x" + strings.ToUpper(wallet[2:])
	for _, tc := range []struct{ key, query, want string }{
		{key, "wallet=" + wallet, want(q2, q1)},                  // sender of q1, receiver of q2
		{key, "wallet=" + strings.ToLower(wallet), want(q2, q1)}, // any case
		{key, "wallet=" + upper + "&limit=1", want(q2, q1)},      // a page at a time
		{key, "wallet=" + wallet + "&status=DONE", want(q1)},
		{key, "wallet=" + wallet + "&chain=8453&limit=1", want(q2, q1)},
		{key, "wallet=" + strings.ToLower(second) + "&limit=1", want(q3, q2)},
		{key, "wallet=" + receiverAddr, want(q3, q1)},
		{key, "wallet=+" + wallet + "+", want(q2, q1)}, // spaces around it trimmed, as every filter's
		{key, "wallet=" + solAddress, ""},              // a Solana wallet without swaps
		{other, "wallet=" + wallet, want(q9)},
	} {
		if got := history(tc.key, tc.query); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.query, got, tc.want)
		}
	}

	// Every line carries its addresses and transactions, null until known.
	all, _ := page(key, "limit=10")
	byID := map[string]walletTx{}
	for _, tx := range all {
		byID[tx.ID] = tx
	}
	if tx := byID[q1]; deref(tx.FromAddress) != wallet || deref(tx.ToAddress) != receiverAddr || deref(tx.SendingTxHash) != h1 ||
		tx.ReceivingTxHash == nil || *tx.ReceivingTxHash != st.Receiving.TxHash || st.Receiving.TxHash == "" {
		t.Errorf("the delivered swap %+v, its status %+v", tx, st)
	}
	if tx := byID[q2]; deref(tx.FromAddress) != second || deref(tx.ToAddress) != wallet || tx.SendingTxHash == nil || tx.ReceivingTxHash != nil {
		t.Errorf("the failed swap %+v", tx)
	}
	if tx, ok := byID[never.Quote.ID]; !ok || tx.Kind != "quote" || tx.FromAddress != nil || tx.SendingTxHash != nil {
		t.Errorf("the quote never executed %+v (listed %v)", tx, ok)
	}

	for _, bad := range []string{
		"0x8Ba1f109551bD432803012645Ac136ddd64DBA72", // EIP-55 checksum broken
		"0x" + strings.Repeat("ab", 32) + "c",        // 65 hex digits: no family's account
		"no-wallet!",                                 // (not-a-wallet would be a NEAR account)
		"",
	} {
		t.Logf("wallet %q", bad)
		ts.get("/v1/partner/transactions?wallet="+url.QueryEscape(bad), withKey(key)).wantError(t, 400, "INVALID_PARAMS", "wallet")
	}
}

// deref is *p, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
