package main

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/internal/sse"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// statusStreamEnd checks a whole status stream's shape (status events,
// each different from the one before, then done, last and once) and
// returns the status events' data and done's reason.
func statusStreamEnd(t *testing.T, events []sse.Event) (statuses []string, reason string) {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("a stream of %d events: %+v", len(events), events)
	}
	for i, ev := range events[:len(events)-1] {
		if ev.Name != edge.EventStatus {
			t.Fatalf("event %d is %s: %s", i, ev.Name, ev.Data)
		}
		if i > 0 && ev.Data == events[i-1].Data {
			t.Fatalf("event %d repeats the status before it: %s", i, ev.Data)
		}
		statuses = append(statuses, ev.Data)
	}
	last := events[len(events)-1]
	if last.Name != edge.EventDone {
		t.Fatalf("the stream ends with %s: %s", last.Name, last.Data)
	}
	var done struct {
		Reason string
		Meta   struct {
			RequestID string
			RateLimit *struct{ Limit int }
		}
	}
	if err := json.Unmarshal([]byte(last.Data), &done); err != nil || done.Meta.RequestID == "" || done.Meta.RateLimit == nil {
		t.Fatalf("done %s (%v)", last.Data, err)
	}
	return statuses, done.Reason
}

// field reads one string field of a status event's data.
func field(t *testing.T, data, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[name].(string)
	return s
}

// A swap executed in the sandbox, followed from before it is reported:
// NOT_FOUND, then its statuses as the tracker moves it, to DONE; the
// stream then closes, and its last status is what GET /v1/status says.
func TestStatusStreamFollowsASwapToDone(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, func(c *app.Config) { c.SandboxBridgeScale = 0.02 })
	key := partnerWithHooks(t, ts, rc)
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "120000000", "fromAddress", wallet, "toAddress", receiverAddr, "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(120000000))
	b := ts.broadcast(t, 42161, wallet, q.tx(t))
	if b.Status != "success" {
		t.Fatalf("broadcast %+v", b)
	}
	s, refused := ts.openStream("/v1/status/stream?txHash="+b.TxHash, withKey(key))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	if h, ok := parseRateHeaders(t, s.resp.Header); !ok || h.bucket != "heavy" {
		t.Fatalf("rate-limit headers %+v %v", h, ok)
	}
	first, err := s.next()
	if err != nil || first.Name != edge.EventStatus || field(t, first.Data, "status") != swap.StatusNotFound {
		t.Fatalf("first event %+v: %v", first, err)
	}
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key)).decode(t, &struct{}{})
	statuses, reason := statusStreamEnd(t, s.finish())
	last := statuses[len(statuses)-1]
	if reason != edge.StreamEndTerminal || field(t, last, "status") != swap.StatusDone || field(t, last, "substatus") != swap.Completed {
		t.Fatalf("ended %s with %s", reason, last)
	}
	if len(statuses) < 3 {
		t.Fatalf("NOT_FOUND then DONE without the pending between: %v", statuses)
	}
	polled := ts.get("/v1/status?txHash=" + b.TxHash)
	if string(polled.Data) != last {
		t.Fatalf("the stream's last status %s, the polled one %s", last, polled.Data)
	}
}

// An intents deposit followed from its quote: PENDING_DEPOSIT until the
// deposit is reported, then to SUCCESS, where the stream closes.
func TestStatusStreamFollowsADepositToItsEnd(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)
	key := partnerWithHooks(t, ts, rc)
	var q anyQuote
	ts.get(quotePath("fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol,
		"fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"), withKey(key)).decode(t, &q)
	s, refused := ts.openStream("/v1/status/stream?depositAddress=" + url.QueryEscape(q.Quote.DepositAddress))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	first, err := s.next()
	if err != nil || field(t, first.Data, "status") != swap.DepositPending {
		t.Fatalf("first event %+v: %v", first, err)
	}
	b := ts.broadcast(t, 1, wallet, q.tx(t))
	if b.Status != "success" {
		t.Fatalf("deposit transfer %+v", b)
	}
	ts.post("/v1/execute/deposit/submit", map[string]string{"txHash": b.TxHash, "depositAddress": q.Quote.DepositAddress}).decode(t, &struct{}{})
	statuses, reason := statusStreamEnd(t, s.finish())
	last := statuses[len(statuses)-1]
	if reason != edge.StreamEndTerminal || field(t, last, "status") != swap.DepositSuccess || field(t, last, "txHash") != b.TxHash {
		t.Fatalf("ended %s with %s", reason, last)
	}
}

// An on-ramp order followed from its checkout: CREATED, then each step the
// desk takes once it is paid, to COMPLETED, where the stream closes.
func TestStatusStreamFollowsAnOnrampOrderToCompleted(t *testing.T) {
	rc := newSignedReceiver(t)
	// The stream reads every 50 ms, the desk steps every 300 ms: every
	// state is seen (a state shorter than the poll interval would show
	// only in the next one's history).
	ts := onrampServer(t, rc, func(c *app.Config) {
		c.SandboxOnrampStep = 300 * time.Millisecond
		c.StatusStream.Poll = 50 * time.Millisecond
	})
	_, key, _ := onrampPartner(t, ts, rc, "RampStream", 120)
	co := ts.onrampCheckout(t, key, onrampCheckoutBody("stream-1", nil))
	csrf := ts.onrampCSRF(t, co.OrderUID)
	s, refused := ts.openStream("/v1/status/stream?orderUid="+co.OrderUID, withKey(key))
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	first, err := s.next()
	if err != nil || field(t, first.Data, "status") != string(onramp.Created) {
		t.Fatalf("first event %+v: %v", first, err)
	}
	if p := ts.onrampAct(t, co.OrderUID, csrf, onramp.Pay); p.status != http.StatusSeeOther {
		t.Fatalf("pay: %d %s", p.status, p.body)
	}
	statuses, reason := statusStreamEnd(t, s.finish())
	var seen []string
	for _, st := range statuses {
		seen = append(seen, field(t, st, "status"))
	}
	want := []string{string(onramp.Created), string(onramp.PaymentReceived), string(onramp.CryptoSent), string(onramp.Completed)}
	if reason != edge.StreamEndTerminal || len(seen) != len(want) {
		t.Fatalf("ended %s after %v, want %v", reason, seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("statuses %v, want %v", seen, want)
		}
	}
}

// A hash nothing tracks is waited for no longer than the untracked wait:
// the stream then ends with reason horizon.
func TestStatusStreamEndsAtItsHorizon(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.StatusStream = edge.StatusStreamConfig{Poll: 20 * time.Millisecond, UntrackedWait: 300 * time.Millisecond}
	})
	start := time.Now()
	s, refused := ts.openStream("/v1/status/stream?txHash=" + untrackedHash)
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	statuses, reason := statusStreamEnd(t, s.finish())
	if reason != edge.StreamEndHorizon || len(statuses) != 1 || field(t, statuses[0], "status") != swap.StatusNotFound {
		t.Fatalf("ended %s after %v", reason, statuses)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 10*time.Second {
		t.Fatalf("the stream lasted %s", took)
	}
}

// What is wrong with the request is refused before the stream, in the
// envelope, naming the parameter, as on the polled endpoints.
func TestStatusStreamRefusals(t *testing.T) {
	ts := startServer(t, nil)
	tests := []struct {
		name, query string
		status      int
		code, param string
	}{
		{"nothing to follow", "", 400, "INVALID_PARAMS", "txHash"},
		{"two things to follow", "txHash=" + untrackedHash + "&orderUid=ord_x", 400, "INVALID_PARAMS", "orderUid"},
		{"a malformed hash", "txHash=0x12", 400, "INVALID_PARAMS", "txHash"},
		{"an empty hash", "txHash=", 400, "INVALID_PARAMS", "txHash"},
		{"a memo without a deposit address", "txHash=" + untrackedHash + "&depositMemo=m", 400, "INVALID_PARAMS", "depositMemo"},
		{"an unknown deposit address", "depositAddress=0x000000000000000000000000000000000000dEaD", 404, "INVALID_PARAMS", "depositAddress"},
		{"a malformed order uid", "orderUid=ord_x", 400, "INVALID_PARAMS", "orderUid"},
		{"an unknown order", "orderUid=ord_" + "abcdefghijklmnopqrstuvwxyz"[:26], 404, "NOT_FOUND", "orderUid"},
		{"a repeated parameter", "txHash=" + untrackedHash + "&txHash=" + untrackedHash, 400, "INVALID_PARAMS", "txHash"},
		{"a source chain without a hash", "orderUid=ord_" + "abcdefghijklmnopqrstuvwxyz"[:26] + "&fromChain=42161", 400, "INVALID_PARAMS", "fromChain"},
		{"a non-EVM source chain", "txHash=" + untrackedHash + "&fromChain=1151111081099710", 400, "INVALID_PARAMS", "fromChain"},
		{"an unknown source chain", "txHash=" + untrackedHash + "&fromChain=7", 400, "INVALID_PARAMS", "fromChain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, env := ts.openStream("/v1/status/stream?" + tc.query)
			if s != nil {
				s.leave()
				t.Fatalf("a stream was opened")
			}
			env.wantError(t, tc.status, tc.code, tc.param)
			if _, ok := parseRateHeaders(t, env.Header); !ok {
				t.Fatalf("a refusal without rate-limit headers")
			}
		})
	}
}

// A client that leaves ends its stream at once (its metrics are counted
// when the writer returns), long before the 10 minutes an untracked hash
// is waited for; a server that stops ends the streams still open with done
// reason shutdown rather than wait for them.
func TestStatusStreamClientGoneAndShutdown(t *testing.T) {
	ts := startServer(t, nil)
	const ended = `swapgate_http_requests_total{code="200",route="status-stream"}`
	s, refused := ts.openStream("/v1/status/stream?txHash=" + untrackedHash)
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	if ev, err := s.next(); err != nil || ev.Name != edge.EventStatus {
		t.Fatalf("first event %+v: %v", ev, err)
	}
	if got := ts.metric(ended); got != 0 {
		t.Fatalf("the stream ended before its client left: %v", got)
	}
	s.leave()
	waitUntil(t, "the stream whose client left ends", func() bool { return ts.metric(ended) == 1 })

	s, refused = ts.openStream("/v1/status/stream?txHash=" + untrackedHash)
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	if ev, err := s.next(); err != nil || ev.Name != edge.EventStatus {
		t.Fatalf("first event %+v: %v", ev, err)
	}
	stopped := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(stopped)
		ts.stop()
	}()
	_, reason := statusStreamEnd(t, s.finish())
	<-stopped
	if reason != edge.StreamEndShutdown || time.Since(start) > 10*time.Second {
		t.Fatalf("ended %s after %s", reason, time.Since(start))
	}
}

// A swap nobody reports, streamed with fromChain from before it is sent: a
// wallet signs a quote's transaction and opens the stream with its hash;
// the stream says the chain does not show it, then, once it is sent and
// mined, finds it on chain, tracks it as GET /v1/status?fromChain= does
// and follows it to DONE, without POST /v1/execute.
func TestStatusStreamFindsAnUnreportedSwapOnChain(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.StatusStream = edge.StatusStreamConfig{Poll: 50 * time.Millisecond, UntrackedWait: 30 * time.Second}
		c.SandboxBridgeScale = 0
	})
	_, key := ts.createPartner("StreamNoExecute", "--swap-fee-bps", "0")
	w := newNodeWallet(t, ts, 42161, "status stream without execute e2e wallet")
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": w.addr.Hex(), "token": usdcArb, "amount": "1000000000"}).decode(t, &struct{}{})
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "150000000", "fromAddress", w.addr.Hex(), "toAddress", w.addr.Hex(), "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
	price, err := w.ec.SuggestGasPrice(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	usdc := common.HexToAddress(usdcArb)
	approval, err := w.send(&types.LegacyTx{Nonce: 0, GasPrice: price, Gas: 100_000, To: &usdc,
		Data: hexutil.MustDecode(approveData(*q.Quote.Estimate.ApprovalAddress, big.NewInt(150_000_000)))}, nil)
	if err != nil || w.mined(approval).Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the approval: %v", err)
	}
	signed, err := types.SignNewTx(w.key, types.LatestSignerForChainID(w.id), w.quoteTx(&q, 1, price))
	if err != nil {
		t.Fatal(err)
	}
	s, refused := ts.openStream("/v1/status/stream?txHash=" + signed.Hash().Hex() + "&fromChain=42161")
	if refused != nil {
		t.Fatalf("refused: %s", refused.Raw)
	}
	first, err := s.next()
	if err != nil || field(t, first.Data, "status") != swap.StatusNotFound || !strings.Contains(field(t, first.Data, "substatusMessage"), "does not show") {
		t.Fatalf("first event %+v: %v", first, err)
	}
	if err := w.ec.SendTransaction(w.ctx, signed); err != nil {
		t.Fatalf("send the swap: %v", err)
	}
	statuses, reason := statusStreamEnd(t, s.finish())
	last := statuses[len(statuses)-1]
	if reason != edge.StreamEndTerminal || field(t, last, "status") != swap.StatusDone || field(t, last, "quoteId") != q.Quote.ID {
		t.Fatalf("ended %s with %s", reason, last)
	}
	if polled := ts.get("/v1/status?quoteId=" + q.Quote.ID); string(polled.Data) != last {
		t.Fatalf("the stream's last status %s, the polled one %s", last, polled.Data)
	}
}
