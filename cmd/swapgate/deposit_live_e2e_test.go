package main

import (
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// stepTwoDeposit is a deposit's status as the tests of step 2 read it.
type stepTwoDeposit struct {
	Status, AmountIn, AmountOut, DeliveredToken, Reason, BridgeTxHash, DestinationTxHash string
	Fallback                                                                             bool
	Transactions                                                                         []struct {
		Step    string
		ChainID uint64
		TxHash  string
	}
}

// steps is the deposit's transactions' steps, space-separated.
func (d stepTwoDeposit) steps() string {
	var s []string
	for _, t := range d.Transactions {
		s = append(s, t.Step)
	}
	return strings.Join(s, " ")
}

// stepTwoSandbox is the sandbox server whose nodes a live service uses,
// with the bridge time short, and the operator: an external signer's key
// (a stand-in in this process), the account every sandbox address is, with
// its genesis coins on every chain.
type stepTwoSandbox struct {
	node      *testServer
	opKey     *ecdsa.PrivateKey
	op        common.Address
	signerURL string
}

func startStepTwoSandbox(t *testing.T, seed string) *stepTwoSandbox {
	t.Helper()
	node := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000_000, 100_000_000
		c.SandboxBridgeScale = 0.01 // the relayer delivers 0.6 s after the transferRemote
	})
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed + "/operator")))
	if err != nil {
		t.Fatal(err)
	}
	_, sgn := signer.Start(key, signer.Web3Signer)
	t.Cleanup(sgn.Close)
	return &stepTwoSandbox{node: node, opKey: key, op: crypto.PubkeyToAddress(key.PublicKey), signerURL: sgn.URL}
}

// rpc is the sandbox node's URL for a chain.
func (s *stepTwoSandbox) rpc(chainID string) string { return s.node.base + "/rpc/" + chainID }

// step1 is the user's step 1 on the sandbox's Arbitrum: a USDC transfer
// of amount to the inbound receiver (the operator account), mined.
func (s *stepTwoSandbox) step1(t *testing.T, user *nodeWallet, amount *big.Int) common.Hash {
	t.Helper()
	nonce, err := user.ec.PendingNonceAt(user.ctx, user.addr)
	if err != nil {
		t.Fatal(err)
	}
	usdc := common.HexToAddress(usdcArb)
	tx, err := user.send(&types.DynamicFeeTx{ChainID: user.id, Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e12),
		Gas: 120_000, To: &usdc, Data: transferData(s.op, amount)}, nil)
	if err != nil {
		t.Fatalf("step 1: %v", err)
	}
	if r := user.mined(tx); r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("step 1 reverted: %+v", r)
	}
	return tx.Hash()
}

// registration is the user's signed registration of step 1 (EIP-712
// RegisterDeposit on Arbitrum) for outputToken on 369, to the user.
func stepTwoRegistration(t *testing.T, user *nodeWallet, txHash common.Hash, output common.Address) map[string]any {
	t.Helper()
	msg := pulseroute.RegisterMessage{TxHash: txHash, ToAddress: user.addr, OutputToken: output, DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, user.key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return map[string]any{"txHash": txHash.Hex(), "fromAddress": user.addr.Hex(), "toAddress": user.addr.Hex(),
		"outputToken": output.Hex(), "destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)}
}

// checkMined holds each of the deposit's transactions to the sandbox
// chain: mined, successful, sent by the operator on its chain.
func (s *stepTwoSandbox) checkMined(t *testing.T, d stepTwoDeposit, wallets map[uint64]*nodeWallet) {
	t.Helper()
	for _, x := range d.Transactions {
		w := wallets[x.ChainID]
		if w == nil {
			t.Fatalf("transaction %+v on an unexpected chain", x)
		}
		h := common.HexToHash(x.TxHash)
		r, err := w.ec.TransactionReceipt(w.ctx, h)
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("%s %s on chain %d: receipt %+v %v", x.Step, x.TxHash, x.ChainID, r, err)
		}
		tx, _, err := w.ec.TransactionByHash(w.ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx); err != nil || from != s.op {
			t.Fatalf("%s %s sent by %s (%v), want the operator %s", x.Step, x.TxHash, from.Hex(), err, s.op.Hex())
		}
	}
}

// countLogs counts the logs of event topic on a chain whose indexed
// topic at index is want.
func countLogs(t *testing.T, w *nodeWallet, topic common.Hash, index int, want common.Hash) int {
	t.Helper()
	logs, err := w.ec.FilterLogs(w.ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), Topics: [][]common.Hash{{topic}}})
	if err != nil {
		t.Fatalf("eth_getLogs: %v", err)
	}
	n := 0
	for _, l := range logs {
		if len(l.Topics) > index && l.Topics[index] == want {
			n++
		}
	}
	return n
}

// TestLiveDepositStepTwoE2E runs `serve --mode live` whose --evm-rpc and
// --pulse-rpc nodes are a sandbox server's /rpc/42161 and /rpc/369, with
// LI.FI's stand-in for step 1's route and the operator account (an
// external signer's) as Arbitrum's inbound receiver. A live multi-step
// quote sends step 1 to that account; the user's step 1 is a signed USDC
// transfer to it on the sandbox chain, registered with the user's EIP-712
// signature; step 2 then runs through the transaction manager on the
// sandbox chains: approve and transferRemote on Arbitrum, the relayer's
// delivery on 369, approve and the PulseX swap to the user: COMPLETED,
// each step's transaction mined and sent by the operator, the user's PLSX
// up by amountOut. A second deposit asks for a token PulseX has no pool
// for: the swap cannot be made, and the fallback's USDCh transfer pays the
// user: REFUNDED_USDCH, the user's USDCh up by the amount bridged.
func TestLiveDepositStepTwoE2E(t *testing.T) {
	sb := startStepTwoSandbox(t, "swapgate/live-step2")
	agg, aggSrv, err := lifistandin.Start(lifistandin.Config{StatusPolls: 1, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aggSrv.Close)
	ts := startServer(t, func(c *app.Config) {
		c.Mode, c.Quote.AggregatorURL = app.ModeLive, aggSrv.URL
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000_000, 100_000_000
		c.EVMRPC = map[uint64]string{42161: sb.rpc("42161"), 369: sb.rpc("369")}
		c.Quote.PulseRPC = map[uint64]string{369: sb.rpc("369")}
		c.Quote.Pulse = app.PulseContracts{Receivers: map[uint64]string{42161: sb.op.Hex()}}
		c.Operator = app.OperatorConfig{SignerURL: sb.signerURL, SignerAddress: sb.op.Hex()}
		c.Tx.Confirmations = 1
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: 30 * time.Second}
	})
	user := newNodeWallet(t, sb.node, 42161, "swapgate/live-step2-user")
	user369 := newNodeWallet(t, sb.node, 369, "swapgate/live-step2-user")
	wallets := map[uint64]*nodeWallet{42161: user, 369: user369}

	// A live multi-step quote's step 1 is the aggregator's route to the
	// operator account.
	var q struct {
		Quote struct {
			Provider, ToAmountMin string
			Steps                 []struct{ Automated bool }
		}
	}
	ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", plsx369,
		"fromAmount", "10000000000000000", "fromAddress", user.addr.Hex(), "toAddress", user.addr.Hex())).decode(t, &q)
	asked := agg.Quotes()
	if q.Quote.Provider != "pulseroute" || len(q.Quote.Steps) != 2 || !q.Quote.Steps[1].Automated || len(asked) == 0 ||
		!strings.EqualFold(asked[len(asked)-1].Get("toAddress"), sb.op.Hex()) || !strings.EqualFold(asked[len(asked)-1].Get("toToken"), usdcArb) {
		t.Fatalf("live multi-step quote %+v, the aggregator asked %v: step 1 must deliver USDC to the operator %s", q.Quote, asked, sb.op.Hex())
	}

	amount := big.NewInt(25_000_000)
	plsx := common.HexToAddress(plsx369)
	status := func(h common.Hash) stepTwoDeposit {
		var d stepTwoDeposit
		ts.get("/v1/inbound-receiver/deposits/"+h.Hex()).decode(t, &d)
		return d
	}
	final := func(h common.Hash) stepTwoDeposit {
		t.Helper()
		var d stepTwoDeposit
		deadline := time.Now().Add(60 * time.Second)
		for d = status(h); d.Status != "COMPLETED" && d.Status != "REFUNDED_USDCH" && d.Status != "FAILED"; d = status(h) {
			if time.Now().After(deadline) {
				t.Fatalf("deposit %s stuck: %+v", h.Hex(), d)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return d
	}

	// Step 2 to the user's PLSX.
	before := user369.tokenBalance(plsx, user.addr)
	h1 := sb.step1(t, user, amount)
	var d stepTwoDeposit
	ts.post("/v1/inbound-receiver/register", stepTwoRegistration(t, user, h1, plsx)).decode(t, &d)
	if d.Status != "RECEIVED" && d.Status != "CONFIRMING" {
		t.Fatalf("registered %+v", d)
	}
	d = final(h1)
	got := new(big.Int).Sub(user369.tokenBalance(plsx, user.addr), before)
	if d.Status != "COMPLETED" || d.steps() != "approve bridge swap-approve swap" || got.Sign() <= 0 || got.String() != d.AmountOut ||
		d.BridgeTxHash != d.Transactions[1].TxHash || d.DestinationTxHash != d.Transactions[3].TxHash {
		t.Fatalf("deposit %+v (steps %q), the user received %s PLSX", d, d.steps(), got)
	}
	sb.checkMined(t, d, wallets)

	// No pool for the asked token: the fallback pays USDCh.
	usdchTok := common.HexToAddress(usdch)
	before = user369.tokenBalance(usdchTok, user.addr)
	h2 := sb.step1(t, user, amount)
	ts.post("/v1/inbound-receiver/register", stepTwoRegistration(t, user, h2, common.HexToAddress("0x000000000000000000000000000000000000dEaD"))).decode(t, &d)
	d = final(h2)
	got = new(big.Int).Sub(user369.tokenBalance(usdchTok, user.addr), before)
	if d.Status != "REFUNDED_USDCH" || !d.Fallback || d.steps() != "bridge fallback" || got.Cmp(amount) != 0 ||
		d.AmountOut != amount.String() || !strings.EqualFold(d.DeliveredToken, usdch) || !strings.Contains(d.Reason, "getAmountsOut") {
		t.Fatalf("deposit %+v (steps %q), the user received %s USDCh", d, d.steps(), got)
	}
	sb.checkMined(t, d, wallets)
}
