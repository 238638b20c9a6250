package main

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/standin/evmrpc"
	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// TestLiveStatusWithoutExecuteE2E: in live mode against the stand-ins, a
// wallet signs the aggregator's transaction request of a quote and the
// stand-in node (--evm-rpc) holds it mined; nobody calls execute. GET
// /v1/status?txHash=&fromChain= reads it from the node, matches it to the
// quote and tracks it through the aggregator's status to DONE, the
// partner receiving swap.completed; the same calldata signed by another
// key is NOT_FOUND, naming the sender, a transaction still pending on the
// node is NOT_FOUND saying so, and a chain without a node is refused as
// fromChain.
func TestLiveStatusWithoutExecuteE2E(t *testing.T) {
	up := startLiveStandins(t)
	rc := newSignedReceiver(t)
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	ts := startServer(t, func(c *app.Config) {
		up.configure(c)
		c.EVMRPC = map[uint64]string{42161: evmrpc.URL(up.nodeURL, 42161)}
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.WebhookRetryBase = 50 * time.Millisecond
	})
	_, key := ts.createPartner("LiveNoExecute", "--swap-fee-bps", "0")
	if env := ts.do("POST", "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", []string{webhook.SwapCompleted}, e2eSecret), withKey(key)); env.Status != 201 {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	userKey, _ := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/live-status-user")))
	otherKey, _ := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/live-status-other")))
	user := crypto.PubkeyToAddress(userKey.PublicKey)

	var q shapeA
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "1000000000", "fromAddress", user.Hex(), "toAddress", user.Hex()), withKey(key)).decode(t, &q)
	if q.Provider != "aggregator" || q.Quote.TransactionRequest == nil {
		t.Fatalf("live quote %+v", q)
	}
	req := q.Quote.TransactionRequest
	to := common.HexToAddress(req.To)
	value, ok := evmtx.ParseQuantity(cmpOr(req.Value, "0"))
	if !ok {
		t.Fatalf("transaction request %+v", req)
	}
	chain := big.NewInt(42161)
	sign := func(k *ecdsa.PrivateKey, nonce uint64) *types.Transaction {
		t.Helper()
		tx, err := types.SignNewTx(k, types.LatestSignerForChainID(chain), &types.DynamicFeeTx{ChainID: chain, Nonce: nonce,
			GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e12), Gas: 500_000, To: &to, Value: value, Data: hexutil.MustDecode(req.Data)})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	mined, pending, foreign := sign(userKey, 0), sign(userKey, 1), sign(otherKey, 0)
	for _, c := range []struct {
		tx *types.Transaction
		m  evmrpc.Mined
	}{{mined, evmrpc.Mined{Status: types.ReceiptStatusSuccessful}}, {pending, evmrpc.Mined{Pending: true}},
		{foreign, evmrpc.Mined{Status: types.ReceiptStatusSuccessful}}} {
		if _, err := up.node.AddTransaction(42161, c.tx, c.m); err != nil {
			t.Fatal(err)
		}
	}
	h := mined.Hash().Hex()
	up.agg.MarkSent(h, lifistandin.Sent{FromChain: 42161, ToChain: 8453, FromToken: usdcArb, ToToken: usdcBase,
		FromAmount: q.Quote.Estimate.FromAmount, ToAmount: q.Quote.Estimate.ToAmount, Tool: q.Quote.Tool})

	wantNotFound(t, "the quote before", ts.statusOf(t, "quoteId", q.Quote.ID), "no transaction of it was reported")
	ts.get("/v1/status?txHash="+mined.Hash().Hex()+"&fromChain=8453").wantError(t, 400, "INVALID_PARAMS", "fromChain")
	wantNotFound(t, "pending on the node", ts.statusOf(t, "txHash", pending.Hash().Hex(), "fromChain", "42161"), "pending")
	wantNotFound(t, "the quote's calldata from another key", ts.statusOf(t, "txHash", foreign.Hash().Hex(), "fromChain", "42161"), "is sent from")
	if st := ts.statusOf(t, "txHash", h, "fromChain", "42161"); st.Status == swap.StatusNotFound || st.QuoteID != q.Quote.ID {
		t.Fatalf("status with fromChain %+v, want the quote's swap", st)
	}
	waitUntil(t, "the live swap found on the node is DONE", func() bool {
		return ts.statusOf(t, "quoteId", q.Quote.ID).Status == swap.StatusDone
	})
	waitUntil(t, "the partner receives swap.completed", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for i, hd := range rc.reqs {
			if hd.Get(webhook.HeaderEvent) == webhook.SwapCompleted && strings.Contains(string(rc.body[i]), q.Quote.ID) {
				return true
			}
		}
		return false
	})
}
