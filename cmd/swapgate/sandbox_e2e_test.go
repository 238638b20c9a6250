package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
)

const (
	receiverAddr = "0x2222222222222222222222222222222222222222"
	usdcSol      = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	solAddress   = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	hex369       = "0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39"
	plsx369      = "0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"
)

// sandboxServer is a server in sandbox mode with limits out of the way.
func sandboxServer(t *testing.T, dir string) *testServer {
	t.Helper()
	return startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		if dir != "" {
			c.DataDir = dir
		}
	})
}

// anyQuote is what the tests read of a quote of any shape.
type anyQuote struct {
	Quote struct {
		ID       string
		Type     string
		Action   struct{ FromAmount string }
		Estimate struct {
			FromAmount, ToAmount, ToAmountMin string
			ApprovalAddress                   *string
		}
		FromAmount, EstimatedOutput, MinOutput, SenderContract string
		DepositAddress                                         string
		TransactionRequest                                     json.RawMessage
		Steps                                                  []struct{ TransactionRequest json.RawMessage }
	}
	Provider string
	FeeBps   int
}

// in is the quote's input amount, wherever its shape keeps it.
func (q *anyQuote) in(t *testing.T) *big.Int {
	t.Helper()
	for _, s := range []string{q.Quote.Action.FromAmount, q.Quote.FromAmount, q.Quote.Estimate.FromAmount} {
		if s != "" {
			return bigOf(t, s)
		}
	}
	t.Fatalf("quote %s has no input amount", q.Quote.ID)
	return nil
}

// tx is the transaction a wallet signs: Shape A and B's transactionRequest,
// Shape C's step 1.
func (q *anyQuote) tx(t *testing.T) json.RawMessage {
	t.Helper()
	if q.Quote.Type == "multi-step" {
		return q.Quote.Steps[0].TransactionRequest
	}
	if q.Quote.TransactionRequest == nil {
		t.Fatalf("quote %s has no transaction", q.Quote.ID)
	}
	return q.Quote.TransactionRequest
}

type txFields struct {
	To, Data, Value, GasLimit string
	ChainID                   uint64
}

func (q *anyQuote) fields(t *testing.T) txFields {
	t.Helper()
	var f txFields
	if err := json.Unmarshal(q.tx(t), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

type broadcastAnswer struct {
	TxHash, Status, RevertReason  string
	ChainID, BlockNumber, GasUsed uint64
}

type receiptAnswer struct {
	TxHash, Status, BlockHash, From, To, Value, Data, EffectiveGasPrice string
	RevertReason                                                        *string
	ChainID, BlockNumber, GasLimit, GasUsed, Nonce, Timestamp           uint64
	Logs                                                                []struct {
		Address, Data string
		Topics        []string
	}
}

func (ts *testServer) quote(t *testing.T, kv ...string) *anyQuote {
	t.Helper()
	var q anyQuote
	ts.get(quotePath(kv...)).decode(t, &q)
	return &q
}

func (ts *testServer) post(path string, body any, opts ...reqOpt) *envelope {
	ts.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return ts.do(http.MethodPost, path, b, opts...)
}

func (ts *testServer) broadcast(t *testing.T, chainID uint64, from string, tx any) broadcastAnswer {
	t.Helper()
	var a broadcastAnswer
	ts.post("/v1/sandbox/broadcast", map[string]any{"chainId": chainID, "from": from, "transactionRequest": tx}).decode(t, &a)
	if !strings.HasPrefix(a.TxHash, "0x") || len(a.TxHash) != 66 || a.ChainID != chainID || a.BlockNumber == 0 {
		t.Fatalf("broadcast answer %+v", a)
	}
	return a
}

func (ts *testServer) receipt(t *testing.T, hash string) receiptAnswer {
	t.Helper()
	var r receiptAnswer
	ts.get("/v1/sandbox/tx/"+hash).decode(t, &r)
	return r
}

// approveData is ERC-20 approve(spender, amount) calldata, built as the
// README shows: the selector 0x095ea7b3 and two left-padded words.
func approveData(spender string, amount *big.Int) string {
	return fmt.Sprintf("0x095ea7b3%064s%064x", strings.ToLower(strings.TrimPrefix(spender, "0x")), amount)
}

func (ts *testServer) approve(t *testing.T, chainID uint64, from, token, spender string, amount *big.Int) {
	t.Helper()
	a := ts.broadcast(t, chainID, from, map[string]string{"to": token, "data": approveData(spender, amount)})
	if a.Status != "success" {
		t.Fatalf("approve: %+v", a)
	}
}

// balance reads one balance with GET /v1/balances.
func (ts *testServer) balance(t *testing.T, chainID uint64, holder, token string) *big.Int {
	t.Helper()
	var b struct {
		Chains []struct {
			ChainID  uint64
			Balances []struct {
				Token  struct{ Address string }
				Amount string
			}
		}
	}
	ts.get(fmt.Sprintf("/v1/balances?address=%s&chains=%d", holder, chainID)).decode(t, &b)
	for _, x := range b.Chains[0].Balances {
		if strings.EqualFold(x.Token.Address, token) {
			return bigOf(t, x.Amount)
		}
	}
	t.Fatalf("no %s in the balances of %s on chain %d", token, holder, chainID)
	return nil
}

// delta is a balance the test expects to move.
type delta struct {
	chain         uint64
	holder, token string
	want          func(q *anyQuote, r receiptAnswer) *big.Int
}

func topic(sig string) string { return crypto.Keccak256Hash([]byte(sig)).Hex() }

var (
	transferTopic           = topic("Transfer(address,address,uint256)")
	bridgeSentTopic         = topic("BridgeSent(bytes32,bytes32,address,address,uint256,uint256,bytes32,uint256,uint256,uint256,address,bytes)")
	swappedTopic            = topic("Swapped(bytes32,address,address,address,uint256,uint256,uint256,address)")
	sentTransferRemoteTopic = topic("SentTransferRemote(uint32,bytes32,uint256)")
	inboundSentTopic        = topic("InboundSent(bytes32,address,bytes32,uint256,uint256,address,uint256,bytes32)")
)

func neg(v *big.Int) *big.Int { return new(big.Int).Neg(v) }

// depositHolder stands for the quote's deposit address in a delta.
const depositHolder = "deposit"

func (d delta) holderOf(q *anyQuote) string {
	if d.holder == depositHolder {
		return q.Quote.DepositAddress
	}
	return d.holder
}

// TestSandboxQuoteVariantsExecute quotes every kind of sandbox route through
// the real server and plays the wallet: an ERC-20 input is first broadcast
// without an approval (a reverted receipt with the token's reason, its hash
// readable), then approved to the spender the quote names with an ERC-20
// approve sent through broadcast, then broadcast again: the transaction
// succeeds within its gas limit and the balances move as the quote said.
func TestSandboxQuoteVariantsExecute(t *testing.T) {
	ts := sandboxServer(t, "")
	contracts := pulseroute.DefaultContracts()
	// The sandbox's inbound receiver is the operator's account.
	inbound := ts.app.TxManager().Account(42161)
	fromAmount := func(q *anyQuote, _ receiptAnswer) *big.Int { return neg(q.in(t)) }
	toAmount := func(q *anyQuote, _ receiptAnswer) *big.Int { return bigOf(t, q.Quote.Estimate.ToAmount) }
	cases := []struct {
		name      string
		query     []string
		provider  string
		chain     uint64
		token     string // the input, approved when approval is set
		approval  func(q *anyQuote) string
		deltas    []delta
		wantTopic string
	}{
		{
			name:     "aggregator swap, USDC to WETH on Arbitrum",
			query:    []string{"fromChain", "42161", "toChain", "42161", "fromToken", usdcArb, "toToken", wethArb, "fromAmount", "300000000", "fromAddress", wallet, "toAddress", receiverAddr},
			provider: "aggregator", chain: 42161, token: usdcArb,
			approval: func(q *anyQuote) string { return *q.Quote.Estimate.ApprovalAddress },
			deltas: []delta{
				{42161, wallet, usdcArb, fromAmount},
				{42161, receiverAddr, wethArb, toAmount},
			},
			wantTopic: swappedTopic,
		},
		{
			name:     "aggregator bridge, USDC Arbitrum to Base",
			query:    []string{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase, "fromAmount", "200000000", "fromAddress", wallet, "toAddress", wallet},
			provider: "aggregator", chain: 42161, token: usdcArb,
			approval: func(q *anyQuote) string { return *q.Quote.Estimate.ApprovalAddress },
			deltas: []delta{
				{42161, wallet, usdcArb, fromAmount},
				{42161, sandbox.RouterAddress(42161).Hex(), usdcArb, func(q *anyQuote, r receiptAnswer) *big.Int { return neg(fromAmount(q, r)) }},
			},
			wantTopic: bridgeSentTopic,
		},
		{
			name:     "native input swap, ETH to USDC on Base: no approval",
			query:    []string{"fromChain", "8453", "toChain", "8453", "fromToken", "native", "toToken", usdcBase, "fromAmount", "300000000000000000", "fromAddress", wallet, "toAddress", receiverAddr},
			provider: "aggregator", chain: 8453,
			deltas: []delta{
				{8453, receiverAddr, usdcBase, toAmount},
				{8453, wallet, zeroAddress, func(q *anyQuote, r receiptAnswer) *big.Int {
					gas := new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), bigOf(t, r.EffectiveGasPrice))
					return neg(new(big.Int).Add(bigOf(t, q.Quote.Action.FromAmount), gas))
				}},
			},
			wantTopic: swappedTopic,
		},
		{
			name:     "EVM to Solana on the aggregator's bridge, USDC on Ethereum",
			query:    []string{"fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol, "fromAmount", "400000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-wormway"},
			provider: "aggregator", chain: 1, token: usdcEth,
			approval: func(q *anyQuote) string { return *q.Quote.Estimate.ApprovalAddress },
			deltas: []delta{
				{1, wallet, usdcEth, fromAmount},
				{1, sandbox.RouterAddress(1).Hex(), usdcEth, func(q *anyQuote, r receiptAnswer) *big.Int { return q.in(t) }},
			},
			wantTopic: bridgeSentTopic,
		},
		{
			name:     "EVM to Solana through intents: a deposit by plain transfer, no approval",
			query:    []string{"fromChain", "1", "toChain", "1151111081099710", "fromToken", usdcEth, "toToken", usdcSol, "fromAmount", "300000000", "fromAddress", wallet, "toAddress", solAddress, "tools", "sbx-intents"},
			provider: "intents", chain: 1,
			deltas: []delta{
				{1, wallet, usdcEth, fromAmount},
				{1, depositHolder, usdcEth, func(q *anyQuote, r receiptAnswer) *big.Int { return q.in(t) }},
			},
			wantTopic: transferTopic,
		},
		{
			name:     "pulseroute direct inbound, USDC Arbitrum to USDCh",
			query:    []string{"fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch, "fromAmount", "200000000", "fromAddress", wallet, "toAddress", wallet},
			provider: "pulseroute", chain: 42161, token: usdcArb,
			approval: func(q *anyQuote) string { return q.Quote.SenderContract },
			deltas: []delta{
				{42161, wallet, usdcArb, fromAmount},
				{42161, func() string { w, _ := contracts.WarpRoute(42161); return w.Router.Hex() }(), usdcArb,
					func(q *anyQuote, _ receiptAnswer) *big.Int { return bigOf(t, q.Quote.EstimatedOutput) }},
			},
			wantTopic: inboundSentTopic,
		},
		{
			name:     "pulseroute multi-step step 1, WETH on Arbitrum to PLS",
			query:    []string{"fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", "native", "fromAmount", "200000000000000000", "fromAddress", wallet, "toAddress", wallet},
			provider: "pulseroute", chain: 42161, token: wethArb,
			approval: func(q *anyQuote) string { return q.fields(t).To },
			deltas: []delta{
				{42161, wallet, wethArb, fromAmount},
				{42161, inbound.Hex(), usdcArb, func(q *anyQuote, _ receiptAnswer) *big.Int {
					quoted, ok := sandbox.QuotedAmountOut(decodeHex(t, q.fields(t).Data))
					if !ok {
						t.Fatal("step 1 carries no quoted amount")
					}
					net, _ := quote.SplitFee(quoted, q.FeeBps)
					return net
				}},
			},
			wantTopic: swappedTopic,
		},
		{
			name:     "pulseroute direct outbound, USDCh to USDC on Base",
			query:    []string{"fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase, "fromAmount", "60000000", "fromAddress", wallet, "toAddress", wallet},
			provider: "pulseroute", chain: 369,
			deltas:    []delta{{369, wallet, usdch, fromAmount}},
			wantTopic: sentTransferRemoteTopic,
		},
		{
			name:     "pulseroute same-chain swap on 369, HEX to PLSX",
			query:    []string{"fromChain", "369", "toChain", "369", "fromToken", hex369, "toToken", plsx369, "fromAmount", "50000000000", "fromAddress", wallet, "toAddress", receiverAddr},
			provider: "pulseroute", chain: 369, token: hex369,
			approval: func(q *anyQuote) string { return *q.Quote.Estimate.ApprovalAddress },
			deltas: []delta{
				{369, wallet, hex369, fromAmount},
				{369, receiverAddr, plsx369, toAmount},
			},
			wantTopic: swappedTopic,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := ts.quote(t, tc.query...)
			if tc.provider != "" && q.Provider != tc.provider {
				t.Fatalf("provider %s, want %s", q.Provider, tc.provider)
			}
			tx := q.fields(t)
			spender := ""
			if tc.approval != nil {
				spender = tc.approval(q)
			} else if q.Quote.Estimate.ApprovalAddress != nil {
				t.Fatalf("an input that needs no approval names %q", *q.Quote.Estimate.ApprovalAddress)
			}
			if spender != "" {
				rev := ts.broadcast(t, tc.chain, wallet, q.tx(t))
				if rev.Status != "reverted" || rev.RevertReason != "ERC20: insufficient allowance" {
					t.Fatalf("without an approval: %+v", rev)
				}
				rc := ts.receipt(t, rev.TxHash)
				if rc.Status != "reverted" || rc.RevertReason == nil || *rc.RevertReason != rev.RevertReason || len(rc.Logs) != 0 || rc.ChainID != tc.chain {
					t.Fatalf("receipt of the revert: %+v", rc)
				}
				ts.approve(t, tc.chain, wallet, tc.token, spender, q.in(t))
			}
			before := make([]*big.Int, len(tc.deltas))
			for i, d := range tc.deltas {
				before[i] = ts.balance(t, d.chain, d.holderOf(q), d.token)
			}
			a := ts.broadcast(t, tc.chain, wallet, q.tx(t))
			if a.Status != "success" || a.RevertReason != "" {
				t.Fatalf("after the approval: %+v", a)
			}
			rc := ts.receipt(t, a.TxHash)
			if rc.Status != "success" || rc.RevertReason != nil || rc.BlockNumber != a.BlockNumber || rc.GasUsed != a.GasUsed ||
				!strings.EqualFold(rc.From, wallet) || !strings.EqualFold(rc.To, tx.To) || rc.Data != strings.ToLower(tx.Data) {
				t.Fatalf("receipt %+v", rc)
			}
			if tx.GasLimit != "" && rc.GasUsed > bigOf(t, tx.GasLimit).Uint64() {
				t.Errorf("gas used %d above the quoted limit %s", rc.GasUsed, tx.GasLimit)
			}
			if tc.wantTopic != "" && !hasTopic(rc, tc.wantTopic) {
				t.Errorf("no log with topic %s in %+v", tc.wantTopic, rc.Logs)
			}
			for i, d := range tc.deltas {
				got := new(big.Int).Sub(ts.balance(t, d.chain, d.holderOf(q), d.token), before[i])
				if want := d.want(q, rc); got.Cmp(want) != 0 {
					t.Errorf("%s of %s on chain %d moved %s, want %s", d.token, d.holder, d.chain, got, want)
				}
			}
		})
	}
}

func hasTopic(r receiptAnswer, topic string) bool {
	for _, l := range r.Logs {
		if len(l.Topics) > 0 && strings.EqualFold(l.Topics[0], topic) {
			return true
		}
	}
	return false
}

// TestSandboxInsufficientBalanceAndFaucet: an input above the balance
// reverts with the token's reason even when approved; the faucet tops the
// wallet up and the same transaction then succeeds.
func TestSandboxInsufficientBalanceAndFaucet(t *testing.T) {
	ts := sandboxServer(t, "")
	q := ts.quote(t, "fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "5000000000", "fromAddress", wallet, "toAddress", wallet) // 5,000 USDC; the wallet starts with 1,000
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(5_000_000_000))
	a := ts.broadcast(t, 42161, wallet, q.tx(t))
	if a.Status != "reverted" || a.RevertReason != "ERC20: transfer amount exceeds balance" {
		t.Fatalf("over the balance: %+v", a)
	}
	before := ts.balance(t, 42161, wallet, usdcArb)
	var f struct {
		TxHash, Status, Amount, Balance string
		ChainID, BlockNumber            uint64
		Token                           struct {
			Address, Symbol string
			Decimals        int
		}
	}
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": wallet, "token": usdcArb, "amount": "4000000000"}).decode(t, &f)
	if f.Status != "success" || f.Token.Symbol != "USDC" || f.Token.Decimals != 6 || f.Amount != "4000000000" ||
		bigOf(t, f.Balance).Cmp(new(big.Int).Add(before, big.NewInt(4_000_000_000))) != 0 {
		t.Fatalf("faucet %+v", f)
	}
	rc := ts.receipt(t, f.TxHash)
	if rc.Status != "success" || len(rc.Logs) != 1 || rc.Logs[0].Topics[0] != transferTopic ||
		rc.Logs[0].Topics[1] != (common.Hash{}).Hex() || !strings.EqualFold(rc.Logs[0].Topics[2], common.BytesToHash(common.HexToAddress(wallet).Bytes()).Hex()) {
		t.Fatalf("faucet receipt %+v", rc)
	}
	if a := ts.broadcast(t, 42161, wallet, q.tx(t)); a.Status != "success" {
		t.Fatalf("after the top-up: %+v", a)
	}
	// Native top-ups too, and the bound.
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 369, "address": wallet, "token": "native", "amount": "1000000000000000000"}).decode(t, &f)
	if f.Token.Address != zeroAddress || f.Token.Symbol != "PLS" {
		t.Fatalf("native faucet %+v", f)
	}
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": wallet, "token": usdcArb, "amount": "1000000000000001"}).
		wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "amount")
}

// TestSandboxBroadcastRefusals: what cannot be a transaction is refused
// naming the field, and nothing is mined.
func TestSandboxBroadcastRefusals(t *testing.T) {
	ts := sandboxServer(t, "")
	ok := map[string]any{"to": usdcArb, "data": "0x"}
	cases := []struct {
		name  string
		body  any
		raw   string
		code  string
		param string
	}{
		{name: "not JSON", raw: `{"chainId":`, code: "INVALID_BODY"},
		{name: "wrong type", raw: `{"chainId":"42161"}`, code: "VALIDATION_ERROR"},
		{name: "unknown chain", body: map[string]any{"chainId": 4242, "from": wallet, "transactionRequest": ok}, code: "INVALID_PARAMS", param: "chainId"},
		{name: "Solana", body: map[string]any{"chainId": 1151111081099710, "from": wallet, "transactionRequest": ok}, code: "INVALID_PARAMS", param: "chainId"},
		{name: "malformed from", body: map[string]any{"chainId": 42161, "from": "0x1234", "transactionRequest": ok}, code: "INVALID_PARAMS", param: "from"},
		{name: "from a contract", body: map[string]any{"chainId": 42161, "from": usdcArb, "transactionRequest": ok}, code: "INVALID_PARAMS", param: "from"},
		{name: "bad data", body: map[string]any{"chainId": 42161, "from": wallet, "transactionRequest": map[string]any{"to": usdcArb, "data": "0xzz"}}, code: "INVALID_PARAMS", param: "transactionRequest.data"},
		{name: "gas under the intrinsic gas", body: map[string]any{"chainId": 42161, "from": wallet, "transactionRequest": map[string]any{"to": usdcArb, "gasLimit": "20999"}}, code: "INVALID_PARAMS", param: "transactionRequest.gasLimit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var env *envelope
			if c.raw != "" {
				env = ts.do(http.MethodPost, "/v1/sandbox/broadcast", []byte(c.raw))
			} else {
				env = ts.post("/v1/sandbox/broadcast", c.body)
			}
			env.wantError(t, http.StatusBadRequest, c.code, c.param)
		})
	}
	// A wallet emptied of its native coin cannot buy gas: refused naming from.
	poor := "0x3333333333333333333333333333333333333333"
	all := ts.balance(t, 42161, poor, zeroAddress)
	gasLimit := big.NewInt(21000)
	var price struct{ EffectiveGasPrice string }
	first := ts.broadcast(t, 42161, poor, map[string]any{"to": wallet, "value": "1", "gasLimit": gasLimit.String()})
	ts.get("/v1/sandbox/tx/"+first.TxHash).decode(t, &price)
	fee := new(big.Int).Mul(gasLimit, bigOf(t, price.EffectiveGasPrice))
	rest := new(big.Int).Sub(all, new(big.Int).Add(big.NewInt(1), fee))
	rest.Sub(rest, fee) // what remains once the next transfer's gas is paid
	if a := ts.broadcast(t, 42161, poor, map[string]any{"to": wallet, "value": rest.String(), "gasLimit": gasLimit.String()}); a.Status != "success" {
		t.Fatalf("emptying transfer %+v", a)
	}
	ts.post("/v1/sandbox/broadcast", map[string]any{"chainId": 42161, "from": poor, "transactionRequest": map[string]any{"to": wallet}}).
		wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "from")
	// Unknown and malformed hashes.
	ts.get("/v1/sandbox/tx/0x"+strings.Repeat("12", 32)).wantError(t, http.StatusNotFound, "NOT_FOUND", "txHash")
	ts.get("/v1/sandbox/tx/0x12").wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "txHash")
}

// TestSandboxBalancesValidation covers GET /v1/balances' refusals and its
// shape.
func TestSandboxBalancesValidation(t *testing.T) {
	ts := sandboxServer(t, "")
	for _, c := range []struct{ query, param string }{
		{"", "address"},
		{"?chains=1", "address"},
		{"?address=0x1234&chains=1", "address"},
		{"?address=" + solAddress + "&chains=1", "address"},
		{"?address=" + wallet + "&chains=1,999999", "chains"},
		{"?address=" + wallet + "&chains=1151111081099710", "chains"},
		{"?address=" + wallet + "&chains=900000002", "chains"},
		{"?address=" + wallet + "&chains=abc", "chains"},
	} {
		ts.get("/v1/balances"+c.query).wantError(t, http.StatusBadRequest, "INVALID_PARAMS", c.param)
	}
	var b struct {
		Address string
		Chains  []struct {
			ChainID  uint64
			Address  string
			Balances []struct {
				Token struct {
					Address, Symbol string
					Decimals        int
				}
				Amount string
			}
		}
	}
	ts.get("/v1/balances?address="+strings.ToLower(wallet)+"&chains=369,1").decode(t, &b)
	if b.Address != wallet || len(b.Chains) != 2 || b.Chains[0].ChainID != 369 || b.Chains[1].ChainID != 1 || b.Chains[0].Address != wallet {
		t.Fatalf("balances %+v", b)
	}
	pls := b.Chains[0].Balances[0]
	if pls.Token.Address != zeroAddress || pls.Token.Symbol != "PLS" || pls.Amount != "333333334000000000000000000" {
		t.Fatalf("native genesis on 369: %+v", pls)
	}
	for _, x := range b.Chains[1].Balances[1:] {
		if want := new(big.Int).Mul(big.NewInt(1000), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Token.Decimals)), nil)); bigOf(t, x.Amount).Cmp(want) != 0 {
			t.Errorf("genesis %s %s, want %s", x.Token.Symbol, x.Amount, want)
		}
	}
	var all struct{ Chains []struct{ ChainID uint64 } }
	ts.get("/v1/balances?address="+wallet).decode(t, &all)
	if len(all.Chains) < 40 {
		t.Fatalf("default chains: %d", len(all.Chains))
	}
}

// TestSandboxSurvivesRestart: broadcasts, a faucet top-up and a revert, then
// the server stops and starts again on the same data directory: every
// receipt is there as it was, balances are kept, and the chain goes on from
// where it stopped.
func TestSandboxSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ts := sandboxServer(t, dir)
	q := ts.quote(t, "fromChain", "42161", "toChain", "42161", "fromToken", usdcArb, "toToken", wethArb,
		"fromAmount", "100000000", "fromAddress", wallet, "toAddress", receiverAddr)
	reverted := ts.broadcast(t, 42161, wallet, q.tx(t))
	ts.approve(t, 42161, wallet, usdcArb, *q.Quote.Estimate.ApprovalAddress, big.NewInt(100_000_000))
	swap := ts.broadcast(t, 42161, wallet, q.tx(t))
	var f struct{ TxHash string }
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 8453, "address": receiverAddr, "token": usdcBase, "amount": "777"}).decode(t, &f)
	hashes := []string{reverted.TxHash, swap.TxHash, f.TxHash}
	receipts := make([]json.RawMessage, len(hashes))
	for i, h := range hashes {
		receipts[i] = ts.get("/v1/sandbox/tx/" + h).Data
	}
	balances := func(ts *testServer) []byte {
		return ts.get("/v1/balances?address=" + receiverAddr + "&chains=42161,8453").Data
	}
	balBefore := balances(ts)
	ts.stop()

	again := sandboxServer(t, dir)
	for i, h := range hashes {
		if got := again.get("/v1/sandbox/tx/" + h).Data; !bytes.Equal(got, receipts[i]) {
			t.Errorf("%s after the restart:\n got %s\nwant %s", h, got, receipts[i])
		}
	}
	if got := balances(again); !bytes.Equal(got, balBefore) {
		t.Errorf("balances after the restart:\n got %s\nwant %s", got, balBefore)
	}
	// The allowance was spent by the swap; a new one and a new swap continue
	// the chain's history.
	next := again.broadcast(t, 42161, wallet, map[string]string{"to": usdcArb, "data": approveData(*q.Quote.Estimate.ApprovalAddress, big.NewInt(1))})
	if next.BlockNumber != swap.BlockNumber+1 {
		t.Fatalf("block %d after the restart, want %d", next.BlockNumber, swap.BlockNumber+1)
	}
}

// TestSandboxBroadcastIdempotency: a broadcast repeated with the same
// Idempotency-Key mines once and answers twice alike.
func TestSandboxBroadcastIdempotency(t *testing.T) {
	ts := sandboxServer(t, "")
	body := map[string]any{"chainId": 10, "from": wallet, "transactionRequest": map[string]any{"to": receiverAddr, "value": "12345"}}
	first := ts.post("/v1/sandbox/broadcast", body, withHeader("Idempotency-Key", "bcast-1"))
	second := ts.post("/v1/sandbox/broadcast", body, withHeader("Idempotency-Key", "bcast-1"))
	if first.Status != 200 || !bytes.Equal(first.Raw, second.Raw) || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %s\n%s", first.Raw, second.Raw)
	}
	third := ts.post("/v1/sandbox/broadcast", body)
	var a, c broadcastAnswer
	first.decode(t, &a)
	third.decode(t, &c)
	if c.BlockNumber != a.BlockNumber+1 {
		t.Fatalf("the keyed broadcast mined twice: blocks %d then %d", a.BlockNumber, c.BlockNumber)
	}
}

// TestLiveModeHasNoSandboxEndpoints: outside sandbox mode the sandbox
// endpoints do not exist and ping says so.
func TestLiveModeHasNoSandboxEndpoints(t *testing.T) {
	ts := startServer(t, liveWithAggregator(t))
	var ping struct{ Mode string }
	ts.get("/v1/ping").decode(t, &ping)
	if ping.Mode != "live" {
		t.Fatalf("ping mode %q", ping.Mode)
	}
	ts.post("/v1/sandbox/broadcast", map[string]any{"chainId": 1}).wantError(t, http.StatusNotFound, "NOT_FOUND", "")
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 1}).wantError(t, http.StatusNotFound, "NOT_FOUND", "")
	ts.get("/v1/sandbox/tx/0x"+strings.Repeat("0", 64)).wantError(t, http.StatusNotFound, "NOT_FOUND", "")
	ts.get("/v1/balances?address="+wallet).wantError(t, http.StatusNotFound, "NOT_FOUND", "")

	sb := sandboxServer(t, "")
	sb.get("/v1/ping").decode(t, &ping)
	if ping.Mode != "sandbox" {
		t.Fatalf("default mode %q", ping.Mode)
	}
}
