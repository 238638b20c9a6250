package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// nodeWallet is a wallet holding a private key, talking to the sandbox
// chains' JSON-RPC nodes through go-ethereum's client as it would to any
// chain's.
type nodeWallet struct {
	t    *testing.T
	ctx  context.Context
	key  *ecdsa.PrivateKey
	addr common.Address
	ec   *ethclient.Client
	id   *big.Int
}

func newNodeWallet(t *testing.T, ts *testServer, chainID uint64, seed string) *nodeWallet {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ethclient.Dial(ts.base + "/rpc/" + new(big.Int).SetUint64(chainID).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ec.Close)
	return &nodeWallet{t: t, ctx: context.Background(), key: key, addr: crypto.PubkeyToAddress(key.PublicKey), ec: ec,
		id: new(big.Int).SetUint64(chainID)}
}

// send signs data with the wallet's key for chain (nil: the wallet's) and
// sends it; the error is the node's refusal.
func (w *nodeWallet) send(data types.TxData, chain *big.Int) (*types.Transaction, error) {
	w.t.Helper()
	if chain == nil {
		chain = w.id
	}
	tx, err := types.SignNewTx(w.key, types.LatestSignerForChainID(chain), data)
	if err != nil {
		w.t.Fatal(err)
	}
	return tx, w.ec.SendTransaction(w.ctx, tx)
}

// quoteTx is the transaction the wallet signs for q's transaction
// request, at nonce and gas price; the request must be for the wallet's
// chain.
func (w *nodeWallet) quoteTx(q *anyQuote, nonce uint64, price *big.Int) *types.LegacyTx {
	w.t.Helper()
	f := q.fields(w.t)
	to := common.HexToAddress(f.To)
	value, ok := evmtx.ParseQuantity(cmpOr(f.Value, "0"))
	limit, ok2 := evmtx.ParseQuantity(f.GasLimit)
	if !ok || !ok2 || f.ChainID != w.id.Uint64() {
		w.t.Fatalf("transaction request %+v", f)
	}
	return &types.LegacyTx{Nonce: nonce, GasPrice: price, Gas: limit.Uint64(), To: &to, Value: value, Data: hexutil.MustDecode(f.Data)}
}

// mined waits for tx's receipt.
func (w *nodeWallet) mined(tx *types.Transaction) *types.Receipt {
	w.t.Helper()
	var r *types.Receipt
	waitUntil(w.t, "the receipt of "+tx.Hash().Hex(), func() bool {
		var err error
		r, err = w.ec.TransactionReceipt(w.ctx, tx.Hash())
		if err != nil && !errors.Is(err, ethereum.NotFound) {
			w.t.Fatalf("receipt: %v", err)
		}
		return err == nil
	})
	return r
}

// tokenBalance reads holder's balance of an ERC-20 with eth_call.
func (w *nodeWallet) tokenBalance(token common.Address, holder common.Address) *big.Int {
	w.t.Helper()
	data := append(hexutil.MustDecode("0x70a08231"), common.LeftPadBytes(holder.Bytes(), 32)...)
	out, err := w.ec.CallContract(w.ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
	if err != nil {
		w.t.Fatalf("balanceOf: %v", err)
	}
	return new(big.Int).SetBytes(out)
}

func hasLogTopic(r *types.Receipt, topic string) bool {
	for _, l := range r.Logs {
		if len(l.Topics) > 0 && l.Topics[0].Hex() == topic {
			return true
		}
	}
	return false
}

// TestSandboxNodeWalletExecuteE2E: a wallet holding a private key reads
// Arbitrum's sandbox node with go-ethereum's client (chain id, balance,
// nonce, base fee), is topped up by the faucet, signs a quote's approval
// (EIP-1559, gas estimated by the node) and its transactionRequest (a
// legacy transaction at the node's gas price), sends both with
// SendTransaction and reads their receipts and logs; the swap is executed
// with its hash and tracked to DONE, and Base's node shows the delivery.
// The node refuses as nodes do: a used nonce, an underpriced replacement,
// funds short of gas × price + value, another chain's transaction. A
// transaction stuck under a base fee raised with POST /v1/sandbox/gas is
// replaced with fees 10% higher and mined.
func TestSandboxNodeWalletExecuteE2E(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
		c.SandboxBridgeScale = 0
	})
	_, key := ts.createPartner("NodeWallet", "--swap-fee-bps", "0")
	w := newNodeWallet(t, ts, 42161, "sandbox node e2e wallet")
	ctx := w.ctx
	usdc := common.HexToAddress(usdcArb)

	id, err := w.ec.ChainID(ctx)
	if err != nil || id.Uint64() != 42161 {
		t.Fatalf("chain id %v %v", id, err)
	}
	ts.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": w.addr.Hex(), "token": usdcArb, "amount": "5000000000"}).decode(t, &struct{}{})
	if got, want := w.tokenBalance(usdc, w.addr), big.NewInt(6_000_000_000); got.Cmp(want) != 0 {
		t.Fatalf("USDC after the faucet: %s, want %s", got, want)
	}
	native, err := w.ec.BalanceAt(ctx, w.addr, nil)
	if err != nil || native.Sign() <= 0 {
		t.Fatalf("native balance %v %v", native, err)
	}
	if n, err := w.ec.PendingNonceAt(ctx, w.addr); err != nil || n != 0 {
		t.Fatalf("nonce %d %v", n, err)
	}
	head, err := w.ec.HeaderByNumber(ctx, nil)
	if err != nil || head.BaseFee == nil || head.BaseFee.Sign() <= 0 {
		t.Fatalf("head %+v %v", head, err)
	}
	tip, err := w.ec.SuggestGasTipCap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)

	// The quote, its approval and its transaction, signed and sent.
	var q anyQuote
	ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "200000000", "fromAddress", w.addr.Hex(), "toAddress", w.addr.Hex(), "tools", "sbx-arcbridge"), withKey(key)).decode(t, &q)
	spender := common.HexToAddress(*q.Quote.Estimate.ApprovalAddress)
	approve := hexutil.MustDecode(approveData(spender.Hex(), big.NewInt(200_000_000)))
	gas, err := w.ec.EstimateGas(ctx, ethereum.CallMsg{From: w.addr, To: &usdc, Data: approve})
	if err != nil {
		t.Fatalf("estimate the approval: %v", err)
	}
	approval, err := w.send(&types.DynamicFeeTx{ChainID: w.id, Nonce: 0, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &usdc, Data: approve}, nil)
	if err != nil {
		t.Fatalf("send the approval: %v", err)
	}
	if r := w.mined(approval); r.Status != types.ReceiptStatusSuccessful || r.GasUsed != gas ||
		!hasLogTopic(r, topic("Approval(address,address,uint256)")) || r.EffectiveGasPrice.Cmp(new(big.Int).Add(head.BaseFee, tip)) != 0 {
		t.Fatalf("approval receipt %+v", r)
	}
	price, err := w.ec.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := w.ec.PendingNonceAt(ctx, w.addr)
	if err != nil || nonce != 1 {
		t.Fatalf("nonce after the approval %d %v", nonce, err)
	}
	swapTx, err := w.send(w.quoteTx(&q, nonce, price), nil)
	if err != nil {
		t.Fatalf("send the swap: %v", err)
	}
	if r := w.mined(swapTx); r.Status != types.ReceiptStatusSuccessful || !hasLogTopic(r, bridgeSentTopic) || !hasLogTopic(r, transferTopic) {
		t.Fatalf("swap receipt %+v", r)
	}
	if got, want := w.tokenBalance(usdc, w.addr), big.NewInt(5_800_000_000); got.Cmp(want) != 0 {
		t.Fatalf("USDC after the swap: %s, want %s", got, want)
	}
	if got, pending, err := w.ec.TransactionByHash(ctx, swapTx.Hash()); err != nil || pending || got.Hash() != swapTx.Hash() || got.Type() != types.LegacyTxType {
		t.Fatalf("the swap by hash: pending %v, %v", pending, err)
	}

	// Executed with its hash, tracked to DONE; Base's node shows the delivery.
	var ex struct{ Status *statusBody }
	ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": swapTx.Hash().Hex()}, withKey(key)).decode(t, &ex)
	var st statusBody
	waitUntil(t, "the bridge delivers", func() bool {
		ts.get("/v1/status?txHash="+swapTx.Hash().Hex()).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	base := newNodeWallet(t, ts, 8453, "sandbox node e2e wallet")
	delivery, err := base.ec.TransactionReceipt(ctx, common.HexToHash(st.Receiving.TxHash))
	if err != nil || delivery.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the delivery %s on Base: %+v %v", st.Receiving.TxHash, delivery, err)
	}
	genesis := big.NewInt(1_000_000_000)
	if got := base.tokenBalance(common.HexToAddress(usdcBase), w.addr); new(big.Int).Sub(got, genesis).Cmp(bigOf(t, q.Quote.Estimate.ToAmount)) != 0 {
		t.Fatalf("USDC on Base %s, want the genesis and %s", got, q.Quote.Estimate.ToAmount)
	}

	// Refusals, in a node's words; none is mined.
	bob := common.HexToAddress(receiverAddr)
	refusals := []struct {
		name  string
		tx    types.TxData
		chain *big.Int
		want  string
	}{
		{"a used nonce", &types.DynamicFeeTx{ChainID: w.id, Nonce: 1, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &bob}, nil, "nonce too low"},
		{"more than it holds", &types.DynamicFeeTx{ChainID: w.id, Nonce: 2, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &bob,
			Value: new(big.Int).Mul(native, big.NewInt(2))}, nil, "insufficient funds for gas * price + value"},
		{"another chain's", &types.DynamicFeeTx{ChainID: big.NewInt(8453), Nonce: 2, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &bob},
			big.NewInt(8453), "invalid chain id for signer"},
	}
	for _, r := range refusals {
		if _, err := w.send(r.tx, r.chain); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want %q", r.name, err, r.want)
		}
	}

	// A stuck transaction: the base fee raised above its max fee.
	raised := new(big.Int).Mul(feeCap, big.NewInt(10))
	var gasAnswer struct {
		ChainID       uint64
		BaseFeePerGas string
	}
	ts.post("/v1/sandbox/gas", map[string]any{"chainId": 42161, "baseFeePerGas": raised.String()}).decode(t, &gasAnswer)
	if gasAnswer.ChainID != 42161 || gasAnswer.BaseFeePerGas != raised.String() {
		t.Fatalf("base fee answer %+v", gasAnswer)
	}
	if h, err := w.ec.HeaderByNumber(ctx, nil); err != nil || h.BaseFee.Cmp(head.BaseFee) != 0 {
		t.Fatalf("the head's base fee changed before a block: %v %v", h, err) // a block records the fee it was mined under
	}
	stuck, err := w.send(&types.DynamicFeeTx{ChainID: w.id, Nonce: 2, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21_000, To: &bob, Value: big.NewInt(1)}, nil)
	if err != nil {
		t.Fatalf("send the transaction that gets stuck: %v", err)
	}
	if _, pending, err := w.ec.TransactionByHash(ctx, stuck.Hash()); err != nil || !pending {
		t.Fatalf("the stuck transaction: pending %v, %v", pending, err)
	}
	if _, err := w.ec.TransactionReceipt(ctx, stuck.Hash()); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the stuck transaction has a receipt: %v", err)
	}
	if n, _ := w.ec.PendingNonceAt(ctx, w.addr); n != 3 {
		t.Fatalf("pending nonce %d with one waiting", n)
	}
	bump := func(v *big.Int, pct int64) *big.Int {
		return new(big.Int).Div(new(big.Int).Mul(v, big.NewInt(100+pct)), big.NewInt(100))
	}
	if _, err := w.send(&types.DynamicFeeTx{ChainID: w.id, Nonce: 2, GasTipCap: bump(tip, 5), GasFeeCap: bump(feeCap, 5), Gas: 21_000, To: &bob, Value: big.NewInt(1)}, nil); err == nil ||
		!strings.Contains(err.Error(), "replacement transaction underpriced") {
		t.Fatalf("a replacement 5%% higher: %v", err)
	}
	replacement, err := w.send(&types.DynamicFeeTx{ChainID: w.id, Nonce: 2, GasTipCap: bump(tip, 10), GasFeeCap: bump(raised, 10), Gas: 21_000, To: &bob, Value: big.NewInt(1)}, nil)
	if err != nil {
		t.Fatalf("the replacement: %v", err)
	}
	r := w.mined(replacement)
	if r.Status != types.ReceiptStatusSuccessful || r.EffectiveGasPrice.Cmp(new(big.Int).Add(raised, bump(tip, 10))) != 0 {
		t.Fatalf("the replacement's receipt %+v", r)
	}
	if blk, err := w.ec.HeaderByNumber(ctx, r.BlockNumber); err != nil || blk.BaseFee.Cmp(raised) != 0 {
		t.Fatalf("the replacement's block: %v %v", blk, err)
	}
	if _, _, err := w.ec.TransactionByHash(ctx, stuck.Hash()); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("the replaced transaction is still known: %v", err)
	}
	var sandboxTx receiptAnswer
	ts.get("/v1/sandbox/tx/"+replacement.Hash().Hex()).decode(t, &sandboxTx)
	if sandboxTx.Status != "success" || sandboxTx.Nonce != 2 {
		t.Fatalf("the replacement in /v1/sandbox/tx: %+v", sandboxTx)
	}

	// What is refused before JSON-RPC is the envelope's.
	ts.do(http.MethodPost, "/rpc/1151111081099710", []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)).wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.do(http.MethodPost, "/rpc/arbitrum", []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)).wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.post("/v1/sandbox/gas", map[string]any{"chainId": 42161, "baseFeePerGas": "-1"}).wantError(t, 400, "INVALID_PARAMS", "baseFeePerGas")
	ts.post("/v1/sandbox/gas", map[string]any{"chainId": 42161, "baseFeePerGas": "18446744073709551616"}).wantError(t, 400, "INVALID_PARAMS", "baseFeePerGas")
	ts.post("/v1/sandbox/gas", map[string]any{"chainId": 792703809, "baseFeePerGas": "1"}).wantError(t, 400, "INVALID_PARAMS", "chainId")
	ts.post("/v1/sandbox/gas", map[string]any{"baseFeePerGas": "1"}).wantError(t, 400, "INVALID_PARAMS", "chainId")
}

func cmpOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
