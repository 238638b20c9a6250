package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

const usdtEth = "0xdAC17F958D2ee523a2206206994597C13D831ec7"

// preflightQuote is what the tests read of a quote's wallet checks.
type preflightQuote struct {
	Quote struct {
		ID       string
		Estimate struct {
			ApprovalAddress *string
		}
		TransactionRequest *txRequestJSON
	}
	Checks *struct {
		Allowance *struct{ Spender, Current, Required string }
		Balance   *struct{ Token, Current, Required string }
		NativeGas *struct{ Current, Required string }
	}
	ChecksError *string
	Approvals   []txRequestJSON
	Calls       []struct{ To, Data, Value string }
}

type txRequestJSON struct {
	To, From, Data, Value, GasLimit string
	ChainID                         uint64
}

// sendRequest signs a transaction request as the quote gives it (to, data,
// value, gasLimit) at the node's gas price and next nonce, sends it and
// waits for its receipt.
func (w *nodeWallet) sendRequest(to, data, value, gasLimit string) *types.Receipt {
	w.t.Helper()
	v, ok := evmtx.ParseQuantity(cmpOr(value, "0x0"))
	limit, ok2 := evmtx.ParseQuantity(gasLimit)
	if !ok || !ok2 {
		w.t.Fatalf("transaction request value %q gasLimit %q", value, gasLimit)
	}
	price, err := w.ec.SuggestGasPrice(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	nonce, err := w.ec.PendingNonceAt(w.ctx, w.addr)
	if err != nil {
		w.t.Fatal(err)
	}
	addr := common.HexToAddress(to)
	tx, err := w.send(&types.LegacyTx{Nonce: nonce, GasPrice: price, Gas: limit.Uint64(), To: &addr, Value: v, Data: hexutil.MustDecode(data)}, nil)
	if err != nil {
		w.t.Fatalf("send to %s: %v", to, err)
	}
	return w.mined(tx)
}

// wantApproval checks that an approval is approve(spender, amount) to the
// token from the wallet, value 0, on the chain.
func wantApproval(t *testing.T, a txRequestJSON, chainID uint64, token, from, spender string, amount *big.Int) {
	t.Helper()
	if want := approveData(spender, amount); !strings.EqualFold(a.Data, want) || !strings.EqualFold(a.To, token) ||
		!strings.EqualFold(a.From, from) || a.Value != "0x0" || a.ChainID != chainID || a.GasLimit == "" {
		t.Fatalf("approval %+v, want approve(%s, %s) to %s from %s", a, spender, amount, token, from)
	}
}

// wantCalls checks that calls are the approvals and then the swap.
func wantCalls(t *testing.T, q *preflightQuote) {
	t.Helper()
	tx := q.Quote.TransactionRequest
	if tx == nil || len(q.Calls) != len(q.Approvals)+1 {
		t.Fatalf("%d calls for %d approvals and the swap %+v", len(q.Calls), len(q.Approvals), tx)
	}
	for i, a := range q.Approvals {
		if c := q.Calls[i]; c.To != a.To || c.Data != a.Data || c.Value != a.Value {
			t.Fatalf("call %d %+v is not approval %+v", i, c, a)
		}
	}
	if c := q.Calls[len(q.Approvals)]; c.To != tx.To || c.Data != tx.Data || c.Value != tx.Value {
		t.Fatalf("the last call %+v is not the swap %+v", c, tx)
	}
}

// TestPreflightApprovalsOnSandboxChain: a fresh wallet's quote says its
// allowance is short (and its balance and gas enough), hands the approval
// ready to sign and the calls in order; the wallet signs and sends the
// approval and then the swap on the sandbox chain's node, both succeed,
// and a quote between the two says the allowance is enough, with no
// approvals (the streamed quote's best event, for more, says it is
// short). approvalAmount=max approves 2^256-1; another value is
// refused naming it; an input over the balance shows in checks.balance.
func TestPreflightApprovalsOnSandboxChain(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SandboxBridgeScale = 0
	})
	w := newNodeWallet(t, ts, 42161, "preflight e2e wallet")
	ask := func(extra ...string) *preflightQuote {
		t.Helper()
		var q preflightQuote
		ts.get(quotePath(append([]string{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
			"fromAmount", "200000000", "fromAddress", w.addr.Hex(), "toAddress", w.addr.Hex(), "tools", "sbx-arcbridge"}, extra...)...)).decode(t, &q)
		return &q
	}
	q := ask()
	if q.Checks == nil || q.ChecksError != nil || q.Quote.Estimate.ApprovalAddress == nil {
		t.Fatalf("checks %+v, error %v", q.Checks, q.ChecksError)
	}
	spender := *q.Quote.Estimate.ApprovalAddress
	if a := q.Checks.Allowance; a == nil || a.Spender != spender || a.Current != "0" || a.Required != "200000000" {
		t.Fatalf("allowance %+v, want 0 of 200000000 for %s", a, spender)
	}
	if q.Checks.Balance != nil || q.Checks.NativeGas != nil {
		t.Fatalf("a funded wallet is short: balance %+v nativeGas %+v", q.Checks.Balance, q.Checks.NativeGas)
	}
	if len(q.Approvals) != 1 {
		t.Fatalf("%d approvals, want 1", len(q.Approvals))
	}
	wantApproval(t, q.Approvals[0], 42161, usdcArb, w.addr.Hex(), spender, big.NewInt(200_000_000))
	wantCalls(t, q)

	approval := q.Approvals[0]
	if r := w.sendRequest(approval.To, approval.Data, approval.Value, approval.GasLimit); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the approval reverted: %+v", r)
	}
	again := ask()
	if again.Checks == nil || again.Checks.Allowance != nil || len(again.Approvals) != 0 || len(again.Calls) != 1 {
		t.Fatalf("after the approval: checks %+v, %d approvals, %d calls", again.Checks, len(again.Approvals), len(again.Calls))
	}
	wantCalls(t, again)
	// The streamed quote's best event is checked as /v1/quote is; its
	// route events are not.
	s, refused := ts.openStream(streamPath(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "300000000", "fromAddress", w.addr.Hex(), "tools", "sbx-arcbridge")))
	if refused != nil {
		t.Fatalf("stream refused: %s", refused.Raw)
	}
	routes, outcome, _ := wantEventOrder(t, s.finish())
	var best preflightQuote
	if err := json.Unmarshal([]byte(outcome.Data), &best); outcome.Name != "best" || err != nil {
		t.Fatalf("the stream ended with %s: %v", outcome.Name, err)
	}
	if a := best.Checks; a == nil || a.Allowance == nil || a.Allowance.Current != "200000000" || a.Allowance.Required != "300000000" || len(best.Approvals) != 1 {
		t.Fatalf("the best event's checks %+v, %d approvals", best.Checks, len(best.Approvals))
	}
	for _, r := range routes {
		if strings.Contains(r.Data, `"checks"`) {
			t.Fatalf("a route event carries checks: %s", r.Data)
		}
	}
	swapCall, tx := q.Calls[1], q.Quote.TransactionRequest
	if r := w.sendRequest(swapCall.To, swapCall.Data, swapCall.Value, tx.GasLimit); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the swap reverted: %+v", r)
	}
	if got, want := w.tokenBalance(common.HexToAddress(usdcArb), w.addr), big.NewInt(800_000_000); got.Cmp(want) != 0 {
		t.Fatalf("USDC after the swap %s, want %s", got, want)
	}

	max := ask("approvalAmount", "max")
	if max.Checks == nil || max.Checks.Allowance == nil || len(max.Approvals) != 1 {
		t.Fatalf("approvalAmount=max after the swap spent the allowance: checks %+v, %d approvals", max.Checks, len(max.Approvals))
	}
	wantApproval(t, max.Approvals[0], 42161, usdcArb, w.addr.Hex(), spender, math.MaxBig256)
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAmount", "200000000",
		"fromAddress", w.addr.Hex(), "approvalAmount", "unlimited")).wantError(t, 400, "INVALID_PARAMS", "approvalAmount")

	over := ask("fromAmount", "900000000")
	if over.Checks == nil || over.Checks.Balance == nil || !strings.EqualFold(over.Checks.Balance.Token, usdcArb) ||
		over.Checks.Balance.Current != "800000000" || over.Checks.Balance.Required != "900000000" {
		t.Fatalf("an input over the balance: checks %+v", over.Checks)
	}
}

// TestPreflightResetTokenOnSandboxChain: USDT on Ethereum, whose approve
// refuses to move a non-zero allowance to another non-zero one, with an
// allowance of 1 short of the input: the quote hands two approvals,
// approve(spender, 0) then approve(spender, amount). Sent alone, the
// second reverts on the sandbox chain as on Ethereum; the two in order and
// then the swap succeed.
func TestPreflightResetTokenOnSandboxChain(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SandboxBridgeScale = 0
	})
	w := newNodeWallet(t, ts, 1, "preflight e2e USDT wallet")
	ask := func() *preflightQuote {
		t.Helper()
		var q preflightQuote
		ts.get(quotePath("fromChain", "1", "toChain", "8453", "fromToken", usdtEth, "toToken", usdcBase,
			"fromAmount", "300000000", "fromAddress", w.addr.Hex(), "toAddress", w.addr.Hex())).decode(t, &q)
		return &q
	}
	first := ask()
	if first.Quote.Estimate.ApprovalAddress == nil || first.Checks == nil || len(first.Approvals) != 1 {
		t.Fatalf("the first quote: checks %+v error %v, %d approvals", first.Checks, first.ChecksError, len(first.Approvals))
	}
	spender := *first.Quote.Estimate.ApprovalAddress
	if r := w.sendRequest(usdtEth, approveData(spender, big.NewInt(1)), "0x0", "0x1d4c0"); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("approve 1 from zero reverted: %+v", r)
	}

	q := ask()
	if q.Checks == nil || q.Checks.Allowance == nil || q.Checks.Allowance.Current != "1" || q.Checks.Allowance.Required != "300000000" {
		t.Fatalf("checks %+v", q.Checks)
	}
	if len(q.Approvals) != 2 {
		t.Fatalf("%d approvals of a USDT allowance of 1, want 2", len(q.Approvals))
	}
	wantApproval(t, q.Approvals[0], 1, usdtEth, w.addr.Hex(), spender, big.NewInt(0))
	wantApproval(t, q.Approvals[1], 1, usdtEth, w.addr.Hex(), spender, big.NewInt(300_000_000))
	wantCalls(t, q)

	second := q.Approvals[1]
	r := w.sendRequest(second.To, second.Data, second.Value, second.GasLimit)
	if r.Status != types.ReceiptStatusFailed {
		t.Fatalf("approve from 1 to 300000000 succeeded: %+v", r)
	}
	var rc receiptAnswer
	ts.get("/v1/sandbox/tx/"+r.TxHash.Hex()).decode(t, &rc)
	if rc.RevertReason == nil || *rc.RevertReason != simchain.ApproveNonZeroReason {
		t.Fatalf("the revert's reason %v, want %q", rc.RevertReason, simchain.ApproveNonZeroReason)
	}
	for i, c := range q.Calls {
		limit := q.Quote.TransactionRequest.GasLimit
		if i < len(q.Approvals) {
			limit = q.Approvals[i].GasLimit
		}
		if r := w.sendRequest(c.To, c.Data, c.Value, limit); r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("call %d reverted: %+v", i, r)
		}
	}
	genesis := big.NewInt(1_000_000_000)
	if got := w.tokenBalance(common.HexToAddress(usdtEth), w.addr); new(big.Int).Sub(genesis, got).Cmp(big.NewInt(300_000_000)) != 0 {
		t.Fatalf("USDT after the swap %s, want 300000000 spent", got)
	}
}

// walletNode is a JSON-RPC node stand-in for --evm-rpc: batches only, the
// coin balance 2^60 wei, a token balance of 5,000,000,000 and an allowance
// of 0; with fail set, every call is refused. It records each batch's
// methods.
type walletNode struct {
	fail    bool
	mu      sync.Mutex
	batches [][]string
}

func (n *walletNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var reqs []struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&reqs); err != nil {
		http.Error(w, "batch expected", http.StatusBadRequest)
		return
	}
	var methods []string
	out := make([]map[string]any, 0, len(reqs))
	for _, q := range reqs {
		methods = append(methods, q.Method)
		res := map[string]any{"jsonrpc": "2.0", "id": q.ID}
		var call struct{ Data, Input string }
		if q.Method == "eth_call" && len(q.Params) > 0 {
			_ = json.Unmarshal(q.Params[0], &call)
		}
		switch data := call.Data + call.Input; {
		case n.fail:
			res["error"] = map[string]any{"code": -32000, "message": "header not found"}
		case q.Method == "eth_getBalance":
			res["result"] = "0x1000000000000000"
		case strings.HasPrefix(data, "0x70a08231"):
			res["result"] = fmt.Sprintf("0x%064x", 5_000_000_000)
		case strings.HasPrefix(data, "0xdd62ed3e"):
			res["result"] = fmt.Sprintf("0x%064x", 0)
		default:
			res["error"] = map[string]any{"code": -32601, "message": "not served"}
		}
		out = append(out, res)
	}
	n.mu.Lock()
	n.batches = append(n.batches, methods)
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// TestPreflightLiveNode: in live mode a quote from Arbitrum reads the
// wallet through --evm-rpc's node in one batch (eth_getBalance and two
// eth_calls) and answers the short allowance with its approval; a chain
// whose node refuses the read, and one without a node, answer checks null
// with checksError, the quote still 200.
func TestPreflightLiveNode(t *testing.T) {
	_, aggSrv, err := lifistandin.Start(lifistandin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aggSrv.Close)
	good, bad := &walletNode{}, &walletNode{fail: true}
	goodSrv, badSrv := httptest.NewServer(good), httptest.NewServer(bad)
	t.Cleanup(goodSrv.Close)
	t.Cleanup(badSrv.Close)
	ts := startServer(t, func(c *app.Config) {
		c.Mode = app.ModeLive
		c.Quote.AggregatorURL = aggSrv.URL
		c.EVMRPC = map[uint64]string{42161: goodSrv.URL, 8453: badSrv.URL}
	})
	good.mu.Lock()
	good.batches = nil
	good.mu.Unlock()

	var q preflightQuote
	ts.get(arbToBase()).decode(t, &q)
	good.mu.Lock()
	batches := fmt.Sprint(good.batches)
	good.mu.Unlock()
	if batches != "[[eth_getBalance eth_call eth_call]]" {
		t.Fatalf("the node was read in %s, want one batch of eth_getBalance and two eth_calls", batches)
	}
	if q.Checks == nil || q.Checks.Allowance == nil || q.Checks.Allowance.Current != "0" || q.Checks.Allowance.Required != "1000000000" ||
		q.Checks.Balance != nil || q.Checks.NativeGas != nil || q.Quote.Estimate.ApprovalAddress == nil {
		t.Fatalf("checks %+v error %v", q.Checks, q.ChecksError)
	}
	if len(q.Approvals) != 1 {
		t.Fatalf("%d approvals, want 1", len(q.Approvals))
	}
	wantApproval(t, q.Approvals[0], 42161, usdcArb, wallet, *q.Quote.Estimate.ApprovalAddress, big.NewInt(1_000_000_000))
	wantCalls(t, &q)

	for _, c := range []struct{ name, path, says string }{
		{"a node that refuses", quotePath("fromChain", "8453", "toChain", "42161", "fromToken", usdcBase, "toToken", usdcArb,
			"fromAmount", "1000000000", "fromAddress", wallet), "header not found"},
		{"no node", quotePath("fromChain", "1", "toChain", "42161", "fromToken", usdcEth, "toToken", usdcArb,
			"fromAmount", "1000000000", "fromAddress", wallet), "no node"},
	} {
		env := ts.get(c.path)
		var got preflightQuote
		env.decode(t, &got)
		if env.Status != http.StatusOK || got.Quote.ID == "" || got.Checks != nil || got.ChecksError == nil ||
			!strings.Contains(*got.ChecksError, c.says) || got.Approvals != nil || got.Calls != nil ||
			!strings.Contains(string(env.Data), `"checks":null`) {
			t.Fatalf("%s: %d %s", c.name, env.Status, env.Data)
		}
	}
}
