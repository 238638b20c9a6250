package main

import (
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// statusOf asks GET /v1/status with the query kv.
func (ts *testServer) statusOf(t *testing.T, kv ...string) statusBody {
	t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	var st statusBody
	ts.get("/v1/status?"+q.Encode()).decode(t, &st)
	return st
}

// wantNotFound holds st to NOT_FOUND with a message saying why.
func wantNotFound(t *testing.T, what string, st statusBody, why string) {
	t.Helper()
	if st.Status != swap.StatusNotFound || !strings.Contains(st.SubstatusMessage, why) {
		t.Fatalf("%s: %+v, want NOT_FOUND saying %q", what, st, why)
	}
}

// TestStatusWithoutExecuteE2E: a wallet signs a quote's approval and its
// transaction and sends both to Arbitrum's sandbox node, and nobody calls
// execute. GET /v1/status?quoteId= says the quote is known but no
// transaction was reported; the hash alone is NOT_FOUND, naming fromChain;
// with fromChain the service reads the transaction back, matches it to the
// quote by its calldata, recipient, value and sender, tracks it to DONE
// and sends the quoting partner swap.pending and swap.completed, as
// execute would have; ?quoteId= answers the same swap after. A mined
// transaction of no quote (the approval), one reusing a quote's calldata
// from another wallet, and a hash no chain shows are NOT_FOUND with their
// reason; a reverted transaction of a quote is tracked and fails. Bad
// input is refused naming the parameter.
func TestStatusWithoutExecuteE2E(t *testing.T) {
	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
	})
	_, key := ts.createPartner("NoExecute", "--swap-fee-bps", "0")
	hook := ts.do("POST", "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook",
		[]string{webhook.SwapPending, webhook.SwapCompleted, webhook.SwapFailed}, e2eSecret), withKey(key))
	if hook.Status != 201 {
		t.Fatalf("webhook: %d %s", hook.Status, hook.Raw)
	}
	w := newNodeWallet(t, ts, 42161, "status without execute e2e wallet")
	ctx := w.ctx
	usdc := common.HexToAddress(usdcArb)
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": w.addr.Hex(), "token": usdcArb, "amount": "5000000000"}).decode(t, &struct{}{})

	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "200000000", "fromAddress", w.addr.Hex(), "toAddress", w.addr.Hex(), "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
	if q.Quote.ID == "" || q.Quote.Estimate.ApprovalAddress == nil {
		t.Fatalf("quote %+v", q.Quote)
	}
	wantNotFound(t, "the quote before its transaction", ts.statusOf(t, "quoteId", q.Quote.ID), "no transaction of it was reported")

	price, err := w.ec.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	approve := hexutil.MustDecode(approveData(*q.Quote.Estimate.ApprovalAddress, big.NewInt(200_000_000)))
	approval, err := w.send(&types.LegacyTx{Nonce: 0, GasPrice: price, Gas: 100_000, To: &usdc, Data: approve}, nil)
	if err != nil {
		t.Fatalf("send the approval: %v", err)
	}
	if r := w.mined(approval); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("approval receipt %+v", r)
	}
	swapTx, err := w.send(w.quoteTx(&q, 1, price), nil)
	if err != nil {
		t.Fatalf("send the swap: %v", err)
	}
	if r := w.mined(swapTx); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("swap receipt %+v", r)
	}
	h := swapTx.Hash().Hex()

	// Not reported: the hash alone is not followed; fromChain finds it.
	wantNotFound(t, "the hash without fromChain", ts.statusOf(t, "txHash", h), "give fromChain")
	wantNotFound(t, "the quote, its transaction still unreported", ts.statusOf(t, "quoteId", q.Quote.ID), "no transaction of it was reported")
	st := ts.statusOf(t, "txHash", h, "fromChain", "42161")
	if st.Status == swap.StatusNotFound || st.QuoteID != q.Quote.ID || !strings.EqualFold(st.Sending.TxHash, h) || st.Sending.ChainID != 42161 {
		t.Fatalf("status with fromChain %+v, want the quote's swap tracked", st)
	}
	waitUntil(t, "the swap found on chain is DONE", func() bool {
		st = ts.statusOf(t, "quoteId", q.Quote.ID)
		return st.Status == swap.StatusDone
	})
	if !strings.EqualFold(st.Sending.TxHash, h) || st.Receiving.TxHash == "" || st.TransactionID != q.Quote.ID {
		t.Fatalf("status by quote %+v", st)
	}
	if again := ts.statusOf(t, "txHash", h); again.Status != swap.StatusDone || again.QuoteID != q.Quote.ID {
		t.Fatalf("status by hash once tracked %+v", again)
	}
	waitUntil(t, "the partner receives swap.pending and swap.completed", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		seen := map[string]bool{}
		for i, hd := range rc.reqs {
			if strings.Contains(string(rc.body[i]), q.Quote.ID) {
				seen[hd.Get(webhook.HeaderEvent)] = true
			}
		}
		return seen[webhook.SwapPending] && seen[webhook.SwapCompleted]
	})

	// A mined transaction of no quote: the approval.
	wantNotFound(t, "the approval", ts.statusOf(t, "txHash", approval.Hash().Hex(), "fromChain", "42161"), "not the transaction of any quote")
	// A hash the chain does not show.
	wantNotFound(t, "an unknown hash", ts.statusOf(t, "txHash", "0x"+strings.Repeat("ab", 32), "fromChain", "42161"), "does not show this transaction")
	// The same hash asked on another chain is not there either.
	wantNotFound(t, "another chain", ts.statusOf(t, "txHash", approval.Hash().Hex(), "fromChain", "8453"), "does not show this transaction")

	// A second quote's calldata sent by another wallet is not its quote's
	// transaction; sent by its own wallet without an approval, it reverts,
	// and is still tracked, failing as a failed source does.
	var q2 anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "100000000", "fromAddress", receiverAddr, "toAddress", receiverAddr, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q2)
	f2 := q2.fields(t)
	other := ts.broadcast(t, 42161, w.addr.Hex(), map[string]string{"to": f2.To, "data": f2.Data, "value": cmpOr(f2.Value, "0x0")})
	wantNotFound(t, "a quote's calldata from another wallet", ts.statusOf(t, "txHash", other.TxHash, "fromChain", "42161"), "is sent from")
	reverted := ts.broadcast(t, 42161, receiverAddr, map[string]string{"to": f2.To, "data": f2.Data, "value": cmpOr(f2.Value, "0x0")})
	if reverted.Status == "success" {
		t.Fatalf("the unapproved swap succeeded: %+v", reverted)
	}
	if st := ts.statusOf(t, "txHash", reverted.TxHash, "fromChain", "42161"); st.Status == swap.StatusNotFound || st.QuoteID != q2.Quote.ID {
		t.Fatalf("a reverted transaction of a quote: %+v, want it tracked", st)
	}
	waitUntil(t, "the reverted swap fails", func() bool {
		return ts.statusOf(t, "quoteId", q2.Quote.ID).Status == swap.StatusFailed
	})

	// Quote ids the service cannot answer for.
	wantNotFound(t, "a quote never issued", ts.statusOf(t, "quoteId", quote.NewID(time.Now())), "was issued")
	wantNotFound(t, "a quote past its retention", ts.statusOf(t, "quoteId", quote.NewID(time.Now().Add(-48*time.Hour))), "no longer retained")

	// Bad input names the parameter.
	ts.get("/v1/status").wantError(t, 400, "INVALID_PARAMS", "txHash")
	ts.get("/v1/status?txHash="+h+"&quoteId="+q.Quote.ID).wantError(t, 400, "INVALID_PARAMS", "quoteId")
	ts.get("/v1/status?quoteId=qt_nope").wantError(t, 400, "INVALID_PARAMS", "quoteId")
	ts.get("/v1/status?quoteId="+q.Quote.ID+"&fromChain=42161").wantError(t, 400, "INVALID_PARAMS", "fromChain")
	ts.get("/v1/status?txHash="+h+"&fromChain=arbitrum").wantError(t, 400, "INVALID_PARAMS", "fromChain")
	ts.get("/v1/status?txHash="+h+"&fromChain=999999999").wantError(t, 400, "INVALID_PARAMS", "fromChain")
	ts.get("/v1/status?txHash="+h+"&fromChain=1151111081099710").wantError(t, 400, "INVALID_PARAMS", "fromChain")
}
