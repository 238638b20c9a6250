package main

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"math/big"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// flowServer is a sandbox server whose bridges deliver at the first poll,
// whose trackers poll fast, and which delivers webhooks to rc.
func flowServer(t *testing.T, rc *signedReceiver, mutate func(*app.Config)) *testServer {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	return startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.AllowLoopbackWebhooks = true
		c.WebhookTLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0
		if mutate != nil {
			mutate(c)
		}
	})
}

// events is what the receiver got, in order.
func (rc *signedReceiver) events(t *testing.T) []webhook.Payload {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []webhook.Payload
	for _, b := range rc.body {
		var p webhook.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func eventNames(ps []webhook.Payload) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Event)
	}
	return out
}

func partnerWithHooks(t *testing.T, ts *testServer, rc *signedReceiver) string {
	t.Helper()
	_, key := ts.createPartner("Flows", "--swap-fee-bps", "0")
	all := []string{webhook.SwapPending, webhook.SwapCompleted, webhook.SwapFailed, webhook.DepositReceived, webhook.DepositCompleted, webhook.DepositFailed}
	if env := ts.do(http.MethodPost, "/v1/partner/webhooks", hookBody(t, rc.srv.URL+"/hook", all, e2eSecret), withKey(key)); env.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", env.Status, env.Raw)
	}
	return key
}

// A bridge quoted, approved, broadcast and reported with execute reaches
// DONE on the sandbox: the destination chain pays the quoted amount, and
// the partner hears swap.pending then swap.completed. A swap broadcast
// without its approval reverts and ends FAILED with swap.failed.
func TestSwapFlowToDoneAndToFailed(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)
	key := partnerWithHooks(t, ts, rc)

	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "200000000", "fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
	before := ts.balance(t, 8453, receiverAddr, usdcBase)
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(200000000))
	b := ts.broadcast(t, 42161, wallet, q.tx(t))
	if b.Status != "success" {
		t.Fatalf("broadcast %+v", b)
	}
	var ex struct{ Status *statusBody }
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key)).decode(t, &ex)
	var st statusBody
	waitUntil(t, "the bridge delivers", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	got := new(big.Int).Sub(ts.balance(t, 8453, receiverAddr, usdcBase), before)
	if st.Substatus != swap.Completed || st.Receiving.ChainID != 8453 || st.Receiving.TxHash == "" ||
		got.Cmp(bigOf(t, q.Quote.Estimate.ToAmount)) != 0 {
		t.Fatalf("done %+v, receiver got %s of %s", st, got, q.Quote.Estimate.ToAmount)
	}
	if r := ts.receipt(t, st.Receiving.TxHash); r.Status != "success" || r.ChainID != 8453 {
		t.Fatalf("delivery receipt %+v", r)
	}

	// A second swap without its approval.
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", wallet), withKey(key)).decode(t, &q)
	b = ts.broadcast(t, 42161, wallet, q.tx(t))
	if b.Status != "reverted" {
		t.Fatalf("unapproved broadcast %+v", b)
	}
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key)).decode(t, &ex)
	waitUntil(t, "the failed swap", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Status == swap.StatusFailed
	})
	if st.Substatus != swap.InsufficientAllowance {
		t.Fatalf("failed swap %+v", st)
	}
	// Each swap publishes pending and its end (the reverted one went
	// straight to FAILED and still published pending); deliveries run in
	// parallel, so their arrival order is not the publishing order.
	waitUntil(t, "four webhooks", func() bool { return rc.count() >= 4 })
	byTx := map[string][]string{}
	for _, p := range rc.events(t) {
		id := p.Data.(map[string]any)["transactionId"].(string)
		byTx[id] = append(byTx[id], p.Event)
	}
	if len(byTx) != 2 {
		t.Fatalf("events by transaction %v", byTx)
	}
	for id, evs := range byTx {
		sort.Strings(evs)
		if len(evs) != 2 || evs[1] != webhook.SwapPending || (evs[0] != webhook.SwapCompleted && evs[0] != webhook.SwapFailed) {
			t.Fatalf("events of %s: %v", id, evs)
		}
	}
}

// An intents quote is executed by a plain transfer to its deposit address,
// reported with deposit/submit, and ends SUCCESS with deposit.received and
// deposit.completed.
func TestIntentsDepositFlowToSuccess(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)
	key := partnerWithHooks(t, ts, rc)
	var q anyQuote
	ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"), withKey(key)).decode(t, &q)
	b := ts.broadcast(t, 1, wallet, q.tx(t))
	if b.Status != "success" {
		t.Fatalf("deposit transfer %+v", b)
	}
	var st struct{ Status, TxHash string }
	ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &st)
	waitUntil(t, "the deposit succeeds", func() bool {
		ts.get("/v1/execute/deposit/status?depositAddress="+q.Quote.DepositAddress).decode(t, &st)
		return st.Status == swap.DepositSuccess
	})
	waitUntil(t, "two webhooks", func() bool { return rc.count() >= 2 })
	names := eventNames(rc.events(t))
	sort.Strings(names)
	if len(names) != 2 || names[0] != webhook.DepositCompleted || names[1] != webhook.DepositReceived {
		t.Fatalf("events %v", names)
	}
}

// multiStep is step 1 of a multi-step deposit played on the sandbox chain:
// the quote of 0.2 WETH on Arbitrum to PLSX on 369, and its step-1
// transaction, approved and broadcast by the depositor, whose key then
// signs the registration.
type multiStep struct {
	q     anyQuote
	pk    *ecdsa.PrivateKey
	from  string
	step1 broadcastAnswer
}

// playStep1 quotes with apiKey (empty: anonymously) for the depositor whose
// key is derived from seed, so that each test has its own account, then
// approves the router for the WETH and broadcasts step 1, which must
// succeed.
func playStep1(t *testing.T, ts *testServer, apiKey, seed string) multiStep {
	t.Helper()
	pk, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatal(err)
	}
	m := multiStep{pk: pk, from: crypto.PubkeyToAddress(pk.PublicKey).Hex()}
	var opts []reqOpt
	if apiKey != "" {
		opts = append(opts, withKey(apiKey))
	}
	ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", plsx369,
		"fromAmount", "200000000000000000", "fromAddress", m.from, "toAddress", m.from), opts...).decode(t, &m.q)
	if m.q.Quote.Type != "multi-step" {
		t.Fatalf("quote %+v", m.q.Quote)
	}
	ts.approve(t, 42161, m.from, wethArb, m.q.fields(t).To, big.NewInt(200000000000000000))
	if m.step1 = ts.broadcast(t, 42161, m.from, m.q.tx(t)); m.step1.Status != "success" {
		t.Fatalf("step 1 %+v", m.step1)
	}
	return m
}

// registration is the body of POST /v1/inbound-receiver/register for the
// step-1 transaction: outputToken on 369 for the depositor, signed by the
// depositor (EIP-712 RegisterDeposit on Arbitrum). outputToken is the
// depositor's to choose, not necessarily the quote's.
func (m multiStep) registration(t *testing.T, outputToken string) map[string]any {
	t.Helper()
	msg := pulseroute.RegisterMessage{TxHash: common.HexToHash(m.step1.TxHash), ToAddress: common.HexToAddress(m.from),
		OutputToken: common.HexToAddress(outputToken), DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, m.pk)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return map[string]any{"txHash": m.step1.TxHash, "fromAddress": m.from, "toAddress": m.from, "outputToken": outputToken,
		"destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)}
}

// A multi-step quote: step 1 broadcast on the sandbox chain, the
// registration signed by the depositor's key (EIP-712 RegisterDeposit),
// and step 2 runs by itself to COMPLETED; the depositor receives the asked
// token on 369, and the partner whose key made the quote hears
// deposit.received then deposit.completed.
func TestMultiStepDepositFlow(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)
	key := partnerWithHooks(t, ts, rc)
	m := playStep1(t, ts, key, "swapgate/e2e/multi-step")
	from, b, q := m.from, m.step1, m.q
	body := m.registration(t, plsx369)
	before := ts.balance(t, 369, from, plsx369)
	var d struct{ Status, TxHash, AmountIn, AmountOut, DeliveredToken, QuoteID string }
	ts.post("/v1/inbound-receiver/register", body).decode(t, &d)
	if d.Status != "RECEIVED" || d.QuoteID != q.Quote.ID {
		t.Fatalf("registered %+v", d)
	}
	// The same body again is the same deposit; a tampered body is refused.
	ts.post("/v1/inbound-receiver/register", body).decode(t, &d)
	tampered := map[string]any{}
	for k, v := range body {
		tampered[k] = v
	}
	tampered["toAddress"] = receiverAddr
	ts.post("/v1/inbound-receiver/register", tampered).wantError(t, 400, "INVALID_PARAMS", "")
	waitUntil(t, "step 2 completes", func() bool {
		ts.get("/v1/inbound-receiver/deposits/"+b.TxHash).decode(t, &d)
		return d.Status == "COMPLETED"
	})
	got := new(big.Int).Sub(ts.balance(t, 369, from, plsx369), before)
	if got.Sign() <= 0 || got.String() != d.AmountOut {
		t.Fatalf("depositor received %s, deposit says %+v", got, d)
	}
	waitUntil(t, "two webhooks", func() bool { return rc.count() >= 2 })
	names := eventNames(rc.events(t))
	sort.Strings(names)
	if len(names) != 2 || names[0] != webhook.DepositCompleted || names[1] != webhook.DepositReceived {
		t.Fatalf("events %v", names)
	}
	ts.get("/v1/inbound-receiver/deposits/0x"+"00000000000000000000000000000000000000000000000000000000000000ab").wantError(t, 404, "INVALID_PARAMS", "txHash")
}

// A swap tracked when the service stops is followed again after a restart
// on the same data directory, to DONE, with its delivery made once.
func TestTrackedSwapSurvivesRestart(t *testing.T) {
	rc := newSignedReceiver(t)
	slow := func(c *app.Config) { c.SandboxBridgeScale = 1000 } // the bridge will not deliver before the restart
	ts := flowServer(t, rc, slow)
	dir := ts.dir
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "150000000", "fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge")).decode(t, &q)
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(150000000))
	b := ts.broadcast(t, 42161, wallet, q.tx(t))
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &struct{}{})
	var st statusBody
	waitUntil(t, "the bridge is under way", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Substatus == swap.WaitDestinationTransaction
	})
	before := ts.balance(t, 8453, receiverAddr, usdcBase)
	ts.stop()

	ts = flowServer(t, rc, func(c *app.Config) { c.DataDir = dir })
	waitUntil(t, "the swap is done after the restart", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	got := new(big.Int).Sub(ts.balance(t, 8453, receiverAddr, usdcBase), before)
	if got.Cmp(bigOf(t, q.Quote.Estimate.ToAmount)) != 0 {
		t.Fatalf("receiver got %s, quoted %s", got, q.Quote.Estimate.ToAmount)
	}
}

// A bridge that fails is refunded on the source chain: DONE with substatus
// REFUNDED, the input back in the sender's wallet.
func TestFailedBridgeIsRefunded(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, func(c *app.Config) { c.SandboxBridgeFailureRate = 1 })
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "120000000", "fromAddress", wallet, "toAddress", wallet, "tools", "sbx-arcbridge")).decode(t, &q)
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(120000000))
	b := ts.broadcast(t, 42161, wallet, q.tx(t))
	afterSend := ts.balance(t, 42161, wallet, usdcArb)
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}).decode(t, &struct{}{})
	var st statusBody
	waitUntil(t, "the refund", func() bool {
		ts.get("/v1/status?txHash="+b.TxHash).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	refunded := new(big.Int).Sub(ts.balance(t, 42161, wallet, usdcArb), afterSend)
	if st.Substatus != swap.Refunded || st.Receiving.ChainID != 42161 || refunded.String() != "120000000" {
		t.Fatalf("refund %+v, wallet got %s back", st, refunded)
	}
}
