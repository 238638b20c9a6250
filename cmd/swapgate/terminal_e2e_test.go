package main

import (
	"math/big"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// The deposits after a quote that end badly, through the real server: the
// sandbox chain executes the deposit, the tracker or the inbound runner
// carries it to its end, and the partner whose key made the quote hears of
// it at an HTTPS receiver that refuses any delivery whose HMAC signature
// does not verify (signedReceiver), so every event counted here was signed
// correctly. The happy endings are in flows_e2e_test.go.

// depositEvents waits until the receiver holds a deposit's two events and
// returns them by name, failing unless they are exactly one
// deposit.received and one deposit.failed. Deliveries run in parallel, so
// the order of arrival is not the order of publishing; the payloads'
// timestamps and statuses show that order instead.
func depositEvents(t *testing.T, rc *signedReceiver) (received, failed map[string]any) {
	t.Helper()
	waitUntil(t, "two webhooks", func() bool { return rc.count() >= 2 })
	events := rc.events(t)
	byName := map[string]webhook.Payload{}
	for _, p := range events {
		byName[p.Event] = p
	}
	r, okR := byName[webhook.DepositReceived]
	f, okF := byName[webhook.DepositFailed]
	if len(events) != 2 || !okR || !okF {
		t.Fatalf("events %v, want %s and %s", eventNames(events), webhook.DepositReceived, webhook.DepositFailed)
	}
	if r.Timestamp > f.Timestamp {
		t.Fatalf("%s published at %d, after %s at %d", r.Event, r.Timestamp, f.Event, f.Timestamp)
	}
	return r.Data.(map[string]any), f.Data.(map[string]any)
}

// An intents deposit that does not succeed ends REFUNDED (the transfer
// arrived, the bridge failed, the input is paid back on the source chain)
// or FAILED (the deposit transfer itself reverted, so nothing left the
// wallet). Either way the status endpoints say so in both vocabularies,
// the partner hears deposit.received then deposit.failed, and the
// partner's transaction record of the quote follows the swap.
func TestIntentsDepositEndsRefundedOrFailed(t *testing.T) {
	tests := []struct {
		name string
		// mutate sets how the sandbox bridges behave.
		mutate func(*app.Config)
		// fromAmount is the deposit; the wallet starts with 1,000 USDC on
		// Ethereum, so 2,000 cannot be transferred.
		fromAmount string
		// transfer is the deposit transfer's receipt status.
		transfer string
		// deposit, status and substatus are where it ends, in the intents
		// provider's vocabulary and in LI.FI's.
		deposit, status, substatus string
		// receivedStatus is the deposit status deposit.received carries: a
		// deposit seen under way is PROCESSING, one whose first sighting is
		// already its end publishes both events at once, with that end.
		receivedStatus string
		// refunded is what the wallet gets back on Ethereum.
		refunded int64
	}{
		{
			name: "the bridge fails: refunded on the source chain",
			mutate: func(c *app.Config) {
				c.SandboxBridgeFailureRate = 1
				// The quoted 120 s take 3 s, so the deposit is first seen
				// under way and deposit.received goes out before the end.
				c.SandboxBridgeScale = 0.025
			},
			fromAmount: "300000000", transfer: "success",
			deposit: swap.DepositRefunded, status: swap.StatusDone, substatus: swap.Refunded,
			receivedStatus: swap.DepositProcessing, refunded: 300_000_000,
		},
		{
			name:       "the deposit transfer reverts: failed",
			fromAmount: "2000000000", transfer: "reverted",
			deposit: swap.DepositFailed, status: swap.StatusFailed, substatus: swap.InsufficientBalance,
			receivedStatus: swap.DepositFailed, refunded: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newSignedReceiver(t)
			ts := flowServer(t, rc, tt.mutate)
			key := partnerWithHooks(t, ts, rc)
			var q anyQuote
			ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
				"fromAmount", tt.fromAmount, "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"), withKey(key)).decode(t, &q)
			if q.Provider != "intents" || q.Quote.DepositAddress == "" {
				t.Fatalf("intents quote %+v", q)
			}
			before := ts.balance(t, 1, wallet, usdcEth)
			b := ts.broadcast(t, 1, wallet, q.tx(t))
			if b.Status != tt.transfer {
				t.Fatalf("deposit transfer %+v, want %s", b, tt.transfer)
			}
			afterSend := ts.balance(t, 1, wallet, usdcEth)

			type depositStatus struct {
				Status, QuoteID, TxHash, Message string
				SwapDetails                      struct {
					AmountIn, RefundReason   string
					OriginChainTxHashes      []string
					DestinationChainTxHashes []string
				}
			}
			var st depositStatus
			ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &st)
			if st.Status != swap.DepositKnownTx || st.QuoteID != q.Quote.ID {
				t.Fatalf("submitted %+v", st)
			}
			waitUntil(t, "the deposit ends "+tt.deposit, func() bool {
				ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
				return st.Status == tt.deposit
			})
			if st.TxHash != b.TxHash || st.SwapDetails.AmountIn != tt.fromAmount || st.SwapDetails.RefundReason == "" ||
				len(st.SwapDetails.OriginChainTxHashes) != 1 || st.SwapDetails.OriginChainTxHashes[0] != b.TxHash {
				t.Fatalf("final deposit status %+v", st)
			}
			var sw statusBody
			ts.get("/v1/status?txHash="+b.TxHash).decode(t, &sw)
			if sw.Status != tt.status || sw.Substatus != tt.substatus || sw.QuoteID != q.Quote.ID {
				t.Fatalf("swap status %+v, want %s/%s", sw, tt.status, tt.substatus)
			}

			// The wallet: a refund pays the whole input back on Ethereum,
			// in a transaction of its own; a reverted transfer moved nothing.
			if got := new(big.Int).Sub(ts.balance(t, 1, wallet, usdcEth), afterSend); got.Int64() != tt.refunded {
				t.Fatalf("the wallet got %s back, want %d", got, tt.refunded)
			}
			if tt.refunded > 0 {
				if sw.Receiving.ChainID != 1 || sw.Receiving.Amount != tt.fromAmount || len(st.SwapDetails.DestinationChainTxHashes) != 1 ||
					st.SwapDetails.DestinationChainTxHashes[0] != sw.Receiving.TxHash {
					t.Fatalf("refund leg %+v, deposit %+v", sw.Receiving, st.SwapDetails)
				}
				if r := ts.receipt(t, sw.Receiving.TxHash); r.Status != "success" || r.ChainID != 1 {
					t.Fatalf("refund receipt %+v", r)
				}
			} else if afterSend.Cmp(before) != 0 || len(st.SwapDetails.DestinationChainTxHashes) != 0 {
				t.Fatalf("a reverted transfer moved %s → %s, destination %v", before, afterSend, st.SwapDetails.DestinationChainTxHashes)
			}

			received, failed := depositEvents(t, rc)
			for _, d := range []map[string]any{received, failed} {
				if d["transactionId"] != q.Quote.ID || d["depositAddress"] != q.Quote.DepositAddress ||
					d["depositTxHash"] != b.TxHash || d["fromAmount"] != tt.fromAmount {
					t.Fatalf("event data %v", d)
				}
			}
			if received["status"] != tt.receivedStatus {
				t.Fatalf("%s data %v, want status %s", webhook.DepositReceived, received, tt.receivedStatus)
			}
			if failed["status"] != tt.deposit || failed["reason"] != st.SwapDetails.RefundReason {
				t.Fatalf("%s data %v, want status %s and reason %q", webhook.DepositFailed, failed, tt.deposit, st.SwapDetails.RefundReason)
			}

			// The partner's record of the quote became a swap with its end.
			var txs struct {
				Transactions []struct{ ID, Kind, Status string }
			}
			ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
			if len(txs.Transactions) != 1 || txs.Transactions[0].ID != q.Quote.ID ||
				txs.Transactions[0].Kind != "swap" || txs.Transactions[0].Status != tt.status {
				t.Fatalf("transactions %+v, want the quote as a swap %s", txs, tt.status)
			}
		})
	}
}

// str is a decoded JSON value as a string, "" when it is not one, so that a
// missing field fails a comparison instead of panicking.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// unpooled369 is a token the sandbox's PulseX on 369 has no pool for: a
// depositor who signs it as outputToken gets a DEX leg that cannot run.
const unpooled369 = "0x4444444444444444444444444444444444444444"

// A multi-step deposit that does not complete ends REFUNDED_USDCH (the DEX
// leg on 369 failed, so the bridged USDCh is paid to toAddress on 369
// instead) or FAILED (the sandbox's failing bridge: no transferRemote is
// sent, so nothing arrives there).
// The partner whose key made the quote hears deposit.received at
// registration, then deposit.failed, with fallback true after the
// fallback.
func TestMultiStepDepositEndsRefundedOrFailed(t *testing.T) {
	tests := []struct {
		name string
		// mutate sets how the sandbox bridges behave.
		mutate      func(*app.Config)
		outputToken string
		final       string
		fallback    bool
		// reason is how the deposit's reason starts.
		reason string
	}{
		{
			// A token with no pool: the DEX leg cannot run (a pool moved
			// past the quote's minimum is
			// TestMultiStepDepositFallbackWhenThePoolMoved).
			name:        "the DEX leg has no pool: the bridged USDCh goes to toAddress",
			outputToken: unpooled369, final: "REFUNDED_USDCH", fallback: true,
			reason: "DEX leg failed: ",
		},
		{
			name:        "the bridge to 369 fails",
			mutate:      func(c *app.Config) { c.SandboxBridgeFailureRate = 1 },
			outputToken: plsx369, final: "FAILED", fallback: false,
			reason: "the bridge to chain 369 could not be sent",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newSignedReceiver(t)
			ts := flowServer(t, rc, tt.mutate)
			key := partnerWithHooks(t, ts, rc)
			m := playStep1(t, ts, key, "swapgate/e2e/terminal/"+tt.name)
			usdchBefore := ts.balance(t, 369, m.from, usdch)
			plsxBefore := ts.balance(t, 369, m.from, plsx369)

			type deposit struct {
				Status, TxHash, QuoteID, AmountIn, AmountOut, DeliveredToken, BridgeTxHash, DestinationTxHash, Reason string
				Fallback                                                                                              bool
			}
			var d deposit
			ts.post("/v1/inbound-receiver/register", m.registration(t, tt.outputToken)).decode(t, &d)
			if d.Status != "RECEIVED" || d.QuoteID != m.q.Quote.ID || d.AmountIn == "" {
				t.Fatalf("registered %+v", d)
			}
			waitUntil(t, "the deposit ends "+tt.final, func() bool {
				ts.get("/v1/inbound-receiver/deposits/"+m.step1.TxHash).decode(t, &d)
				return d.Status == tt.final
			})
			if d.Fallback != tt.fallback || !strings.HasPrefix(d.Reason, tt.reason) || (d.BridgeTxHash == "") != (tt.final == "FAILED") {
				t.Fatalf("final %+v, want fallback %v and a reason starting %q", d, tt.fallback, tt.reason)
			}

			// What arrived on 369, read back with /v1/balances: the bridged
			// USDCh, all of it, after the fallback; nothing after a failed
			// bridge.
			usdchGot := new(big.Int).Sub(ts.balance(t, 369, m.from, usdch), usdchBefore)
			plsxGot := new(big.Int).Sub(ts.balance(t, 369, m.from, plsx369), plsxBefore)
			if plsxGot.Sign() != 0 {
				t.Fatalf("toAddress received %s PLSX", plsxGot)
			}
			if tt.fallback {
				if !strings.EqualFold(d.DeliveredToken, usdch) || d.AmountOut != d.AmountIn || usdchGot.String() != d.AmountIn || d.DestinationTxHash == "" {
					t.Fatalf("fallback %+v, toAddress received %s USDCh on 369", d, usdchGot)
				}
				if r := ts.receipt(t, d.DestinationTxHash); r.Status != "success" || r.ChainID != 369 {
					t.Fatalf("fallback transfer receipt %+v", r)
				}
			} else if usdchGot.Sign() != 0 || d.AmountOut != "" || d.DestinationTxHash != "" {
				t.Fatalf("failed deposit %+v, toAddress received %s USDCh on 369", d, usdchGot)
			}

			received, failed := depositEvents(t, rc)
			for _, e := range []map[string]any{received, failed} {
				if e["txHash"] != m.step1.TxHash || e["sourceChain"] != float64(42161) || e["destinationChain"] != float64(369) ||
					e["amountIn"] != d.AmountIn || !strings.EqualFold(str(e["outputToken"]), tt.outputToken) {
					t.Fatalf("event data %v, deposit %+v", e, d)
				}
			}
			if received["status"] != "RECEIVED" || received["fallback"] != false {
				t.Fatalf("%s data %v", webhook.DepositReceived, received)
			}
			if failed["status"] != tt.final || failed["fallback"] != tt.fallback || failed["reason"] != d.Reason {
				t.Fatalf("%s data %v, want status %s, fallback %v, reason %q", webhook.DepositFailed, failed, tt.final, tt.fallback, d.Reason)
			}
			if tt.fallback && (failed["amountOut"] != d.AmountIn || !strings.EqualFold(str(failed["deliveredToken"]), usdch)) {
				t.Fatalf("%s data %v: the fallback's USDCh is not in it", webhook.DepositFailed, failed)
			}
			// The event lists step 2's mined transactions, the fallback's
			// last (the paying one); a bridge never sent lists none.
			txs, _ := failed["transactions"].([]any)
			if tt.fallback {
				var last map[string]any
				if len(txs) > 0 {
					last, _ = txs[len(txs)-1].(map[string]any)
				}
				if len(txs) < 2 || last["step"] != "fallback" || last["txHash"] != d.DestinationTxHash || last["chainId"] != float64(369) {
					t.Fatalf("%s data's transactions %v, want the fallback's %s last", webhook.DepositFailed, txs, d.DestinationTxHash)
				}
			} else if len(txs) != 0 {
				t.Fatalf("%s data's transactions %v, want none", webhook.DepositFailed, txs)
			}
		})
	}
}
