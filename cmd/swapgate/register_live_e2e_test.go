package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// transferData is an ERC-20 transfer(to, amount)'s calldata.
func transferData(to common.Address, amount *big.Int) []byte {
	return append(append(common.FromHex("0xa9059cbb"), common.LeftPadBytes(to.Bytes(), 32)...), common.LeftPadBytes(amount.Bytes(), 32)...)
}

// TestLiveRegisterDepositE2E runs `serve --mode live` whose --evm-rpc node
// for Arbitrum is a sandbox server's /rpc/42161 and whose inbound receiver
// is the operator account (an external signer's), with two confirmations.
// Users' step-1 transactions are real signed transactions on that chain.
// Refused at once, each INVALID_PARAMS naming txHash with its reason: USDC
// sent to another address, another token sent to the receiver, a
// transaction of another sender than fromAddress, a reverted transfer. A
// registration made before its transaction is broadcast is CONFIRMING,
// stays so in its first block, and is RECEIVED with the amount once the
// next block confirms it; the same body again answers the same deposit,
// another body for its txHash is refused. One never broadcast is FAILED,
// NOT_CONFIRMED, at the horizon.
func TestLiveRegisterDepositE2E(t *testing.T) {
	node := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000 })
	opKey := liveOperatorKey()
	op := crypto.PubkeyToAddress(opKey.PublicKey)
	_, sgn := signer.Start(opKey, signer.Web3Signer)
	t.Cleanup(sgn.Close)
	live := liveWithAggregator(t)
	ts := startServer(t, func(c *app.Config) {
		live(c)
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.EVMRPC = map[uint64]string{42161: node.base + "/rpc/42161"}
		c.Quote.Pulse = app.PulseContracts{Receivers: map[uint64]string{42161: op.Hex()}}
		c.Operator = app.OperatorConfig{SignerURL: sgn.URL, SignerAddress: op.Hex()}
		c.Tx.Confirmations = 2
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: 4 * time.Second}
	})
	user := newNodeWallet(t, node, 42161, "swapgate/live-register-user")
	other := newNodeWallet(t, node, 42161, "swapgate/live-register-other")
	usdc, weth := common.HexToAddress(usdcArb), common.HexToAddress(wethArb)
	for _, w := range []*nodeWallet{user, other} {
		for _, tok := range []string{usdcArb, wethArb} {
			node.post("/v1/sandbox/faucet", map[string]any{"chainId": 42161, "address": w.addr.Hex(), "token": tok, "amount": "100000000"}).decode(t, &struct{}{})
		}
	}
	nonces := map[common.Address]uint64{}
	// sign makes w's next transaction calling token with data; send
	// broadcasts it and waits for its receipt.
	sign := func(w *nodeWallet, token common.Address, data []byte) *types.Transaction {
		t.Helper()
		tx, err := types.SignNewTx(w.key, types.LatestSignerForChainID(w.id), &types.DynamicFeeTx{ChainID: w.id, Nonce: nonces[w.addr],
			GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e12), Gas: 120_000, To: &token, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		nonces[w.addr]++
		return tx
	}
	send := func(w *nodeWallet, tx *types.Transaction) *types.Receipt {
		t.Helper()
		if err := w.ec.SendTransaction(w.ctx, tx); err != nil {
			t.Fatalf("send: %v", err)
		}
		return w.mined(tx)
	}
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	register := func(w *nodeWallet, txHash common.Hash, output common.Address) *envelope {
		t.Helper()
		msg := pulseroute.RegisterMessage{TxHash: txHash, ToAddress: w.addr, OutputToken: output, DestinationDomain: 369}
		digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := crypto.Sign(digest, w.key)
		if err != nil {
			t.Fatal(err)
		}
		sig[64] += 27
		return ts.post("/v1/inbound-receiver/register", map[string]any{"txHash": txHash.Hex(), "fromAddress": w.addr.Hex(),
			"toAddress": w.addr.Hex(), "outputToken": output.Hex(), "destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)})
	}
	type deposit struct{ Status, AmountIn, Reason, TxHash string }
	status := func(h common.Hash) deposit {
		var d deposit
		ts.get("/v1/inbound-receiver/deposits/"+h.Hex()).decode(t, &d)
		return d
	}
	amount := big.NewInt(25_000_000)

	// Refused at once: mined, and not the deposit, confirmed or not.
	refusals := []struct {
		name   string
		from   *nodeWallet
		token  common.Address
		data   []byte
		reason string
	}{
		{"USDC to another address", user, usdc, transferData(other.addr, amount), "NO_DEPOSIT"},
		{"another token to the receiver", user, weth, transferData(op, amount), "NO_DEPOSIT"},
		{"sent by another account than fromAddress", other, usdc, transferData(op, amount), "WRONG_SENDER"},
		{"reverted: more USDC than the sender holds", user, usdc, transferData(op, new(big.Int).Lsh(amount, 40)), "TX_FAILED"},
	}
	for _, tc := range refusals {
		tx := sign(tc.from, tc.token, tc.data)
		r := send(tc.from, tx)
		if wantOK := tc.reason != "TX_FAILED"; (r.Status == types.ReceiptStatusSuccessful) != wantOK {
			t.Fatalf("%s: receipt status %d", tc.name, r.Status)
		}
		e := register(user, tx.Hash(), plsx)
		e.wantError(t, http.StatusBadRequest, "INVALID_PARAMS", "txHash")
		if e.Error.Details["reason"] != tc.reason || e.Error.Details["chainId"] != float64(42161) {
			t.Fatalf("%s: details %v, want reason %s (%s)", tc.name, e.Error.Details, tc.reason, e.Error.Message)
		}
		ts.get("/v1/inbound-receiver/deposits/"+tx.Hash().Hex()).wantError(t, http.StatusNotFound, "INVALID_PARAMS", "txHash")
	}

	// Registered before it is broadcast: CONFIRMING until its second block.
	step1 := sign(user, usdc, transferData(op, amount))
	var d deposit
	register(user, step1.Hash(), plsx).decode(t, &d)
	if d.Status != "CONFIRMING" || d.AmountIn != "" {
		t.Fatalf("registered before broadcast: %+v, want CONFIRMING without an amount", d)
	}
	if r := send(user, step1); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("step 1 reverted: %+v", r)
	}
	time.Sleep(200 * time.Millisecond) // polls every 20 ms
	if d = status(step1.Hash()); d.Status != "CONFIRMING" {
		t.Fatalf("one block of two: %+v, want CONFIRMING", d)
	}
	send(other, sign(other, usdc, transferData(user.addr, big.NewInt(1)))) // the next block
	waitUntil(t, "the confirmed deposit RECEIVED", func() bool {
		d = status(step1.Hash())
		return d.Status != "CONFIRMING"
	})
	if d.Status != "RECEIVED" || d.AmountIn != amount.String() {
		t.Fatalf("confirmed: %+v, want RECEIVED with %s", d, amount)
	}
	var again deposit
	if register(user, step1.Hash(), plsx).decode(t, &again); again != d {
		t.Fatalf("the same body again: %+v, want %+v", again, d)
	}
	if e := register(user, step1.Hash(), usdc); e.Status < 400 || e.Status >= 500 {
		t.Fatalf("another body for a registered txHash: %d %s", e.Status, e.Raw)
	}

	// Never broadcast: FAILED at the horizon.
	never := sign(user, usdc, transferData(op, amount))
	register(user, never.Hash(), plsx).decode(t, &d)
	if d.Status != "CONFIRMING" {
		t.Fatalf("registered, never broadcast: %+v", d)
	}
	waitUntil(t, "the unconfirmed deposit FAILED at its horizon", func() bool {
		d = status(never.Hash())
		return d.Status != "CONFIRMING"
	})
	if d.Status != "FAILED" || !strings.HasPrefix(d.Reason, "NOT_CONFIRMED: ") {
		t.Fatalf("at the horizon: %+v, want FAILED, NOT_CONFIRMED", d)
	}
}

// TestLiveInboundReceiverMustBeOperator: live mode refuses to start with an
// inbound receiver the transaction manager does not sign for, naming the
// flag, the address and the account it signs for: without any operator
// account, against an external signer's account, and against the sealed
// key's (swapgate operator-key create); the sealed key's own address
// starts.
func TestLiveInboundReceiverMustBeOperator(t *testing.T) {
	live := liveWithAggregator(t)
	dir := t.TempDir()
	stranger := "0x4eCe1e0000000000000000000000000000000A16"
	start := func(receiver string, op app.OperatorConfig) error {
		cfg := app.DefaultConfig()
		live(&cfg)
		cfg.Addr, cfg.DataDir = "127.0.0.1:0", dir
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.Quote.Pulse = app.PulseContracts{Receivers: map[uint64]string{42161: receiver}}
		cfg.Operator = op
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := app.Start(ctx, cfg)
		if a != nil {
			_ = a.Close(ctx)
		}
		return err
	}
	wantRefusal := func(err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("started, want a refusal naming %v", parts)
		}
		for _, p := range append([]string{"--pulse-inbound-receiver"}, parts...) {
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(p)) {
				t.Fatalf("refusal %q does not name %q", err, p)
			}
		}
	}
	wantRefusal(start(stranger, app.OperatorConfig{}), "operator-key create", "--signer-url")

	_, sgn := signer.Start(liveOperatorKey(), signer.Web3Signer)
	t.Cleanup(sgn.Close)
	wantRefusal(start(stranger, app.OperatorConfig{SignerURL: sgn.URL, SignerAddress: liveReceiver}), "42161="+stranger, liveReceiver)

	var out, errOut strings.Builder
	if rc := runOperatorKey([]string{"create", "--data", dir}, &out, &errOut); rc != 0 {
		t.Fatalf("operator-key create: %d %s", rc, errOut.String())
	}
	var key struct{ Address string }
	if err := json.Unmarshal([]byte(out.String()), &key); err != nil || key.Address == "" {
		t.Fatalf("operator-key create printed %q (%v)", out.String(), err)
	}
	wantRefusal(start(stranger, app.OperatorConfig{}), "42161="+stranger, key.Address)
	if err := start(key.Address, app.OperatorConfig{}); err != nil {
		t.Fatalf("the sealed key's account as the receiver: %v", err)
	}
}
