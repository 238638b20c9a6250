package main

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/swap"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
)

// TestWarpRelayerDeliversFlowsE2E: the sandbox's Hyperlane relayer
// delivers every warp-route transfer on its destination, whoever sent it,
// and the direct pulseroute routes' tracking reports its delivery rather
// than making one of its own:
//
//   - a user's own transferRemote of USDC on Base to 369, no quote
//     involved, arrives as USDCh;
//   - the direct outbound quote (USDCh on 369 to USDC on Base), executed,
//     ends DONE with the relayer's transaction as the receiving one, and
//     the recipient is paid once;
//   - the direct inbound quote swapped on arrival (USDC on Arbitrum to
//     PLSX on 369) ends DONE with the user holding the quoted PLSX and no
//     new USDCh: the bridged USDCh went to the arrival desk.
func TestWarpRelayerDeliversFlowsE2E(t *testing.T) {
	rc := newSignedReceiver(t)
	ts := flowServer(t, rc, nil)
	key := partnerWithHooks(t, ts, rc)
	processTopic := pulseroute.ABI().Events["ProcessId"].ID.Hex()
	receivedTopic := pulseroute.ABI().Events["ReceivedTransferRemote"].ID.Hex()
	delivery := func(t *testing.T, hash string, chainID uint64) receiptAnswer {
		t.Helper()
		r := ts.receipt(t, hash)
		if r.Status != "success" || r.ChainID != chainID || !hasTopic(r, processTopic) || !hasTopic(r, receivedTopic) {
			t.Fatalf("delivery %s: %+v, want the relayer's process on chain %d", hash, r, chainID)
		}
		return r
	}

	t.Run("a user's own transferRemote", func(t *testing.T) {
		w, _ := pulseroute.DefaultContracts().WarpRoute(8453)
		amount := big.NewInt(12_345_678)
		ts.approve(t, 8453, wallet, usdcBase, w.Router.Hex(), amount)
		call, err := pulseroute.TransferRemote(369, common.HexToAddress(receiverAddr), amount)
		if err != nil {
			t.Fatal(err)
		}
		before := ts.balance(t, 369, receiverAddr, usdch)
		b := ts.broadcast(t, 8453, wallet, map[string]string{"to": w.Router.Hex(), "data": "0x" + common.Bytes2Hex(call),
			"value": "0x" + big.NewInt(1e18).Text(16)})
		if b.Status != "success" {
			t.Fatalf("transferRemote %+v", b)
		}
		waitUntil(t, "the USDCh arrives on 369", func() bool {
			return new(big.Int).Sub(ts.balance(t, 369, receiverAddr, usdch), before).Cmp(amount) == 0
		})
	})

	t.Run("direct outbound: the relayer's delivery is the receiving transaction", func(t *testing.T) {
		var q anyQuote
		ts.get(quotePath("fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase,
			"fromAmount", "60000000", "fromAddress", wallet, "toAddress", receiverAddr), withKey(key)).decode(t, &q)
		if q.Provider != "pulseroute" {
			t.Fatalf("quote %+v", q)
		}
		before := ts.balance(t, 8453, receiverAddr, usdcBase)
		b := ts.broadcast(t, 369, wallet, q.tx(t))
		if b.Status != "success" {
			t.Fatalf("broadcast %+v", b)
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key))
		st := waitDone(t, ts, b.TxHash)
		delivery(t, st.Receiving.TxHash, 8453)
		// Later polls and scans pay nothing more.
		time.Sleep(300 * time.Millisecond)
		if got := new(big.Int).Sub(ts.balance(t, 8453, receiverAddr, usdcBase), before); got.Cmp(bigOf(t, q.Quote.EstimatedOutput)) != 0 {
			t.Fatalf("receiver got %s, quoted %s", got, q.Quote.EstimatedOutput)
		}
	})

	t.Run("direct inbound swapped on arrival: the output only, once", func(t *testing.T) {
		var q anyQuote
		ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", plsx369,
			"fromAmount", "200000000", "fromAddress", wallet, "toAddress", receiverAddr), withKey(key)).decode(t, &q)
		if q.Provider != "pulseroute" || q.Quote.SenderContract == "" {
			t.Fatalf("quote %+v", q)
		}
		plsxBefore, usdchBefore := ts.balance(t, 369, receiverAddr, plsx369), ts.balance(t, 369, receiverAddr, usdch)
		ts.approve(t, 42161, wallet, usdcArb, q.Quote.SenderContract, q.in(t))
		b := ts.broadcast(t, 42161, wallet, q.tx(t))
		if b.Status != "success" {
			t.Fatalf("broadcast %+v", b)
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID, "txHash": b.TxHash}, withKey(key))
		st := waitDone(t, ts, b.TxHash)
		time.Sleep(300 * time.Millisecond)
		got := new(big.Int).Sub(ts.balance(t, 369, receiverAddr, plsx369), plsxBefore)
		if got.Cmp(bigOf(t, q.Quote.EstimatedOutput)) != 0 || !strings.EqualFold(st.Receiving.Token, plsx369) {
			t.Fatalf("done %+v: the user got %s PLSX, quoted %s", st, got, q.Quote.EstimatedOutput)
		}
		if ts.balance(t, 369, receiverAddr, usdch).Cmp(usdchBefore) != 0 {
			t.Fatal("the user received USDCh besides the output")
		}
		// The relayer delivered the bridged USDCh to the arrival desk.
		sent := inboundSent(t, ts.receipt(t, b.TxHash))
		id := common.Hash(sent["messageId"].([32]byte)).Hex()
		// A watcher finds it by the message id over the chain's node, as
		// eth_getLogs by ProcessId's topic.
		ec, err := ethclient.Dial(ts.base + "/rpc/369")
		if err != nil {
			t.Fatal(err)
		}
		defer ec.Close()
		logs, err := ec.FilterLogs(context.Background(), ethereum.FilterQuery{FromBlock: big.NewInt(0),
			Topics: [][]common.Hash{{common.HexToHash(processTopic)}, {common.HexToHash(id)}}})
		if err != nil || len(logs) != 1 {
			t.Fatalf("ProcessId(%s) on 369: %+v %v", id, logs, err)
		}
		r := delivery(t, logs[0].TxHash.Hex(), 369)
		if !strings.EqualFold(r.From, pulsesim.RelayerAddress.Hex()) {
			t.Errorf("delivered by %s", r.From)
		}
	})
}

// waitDone polls the status of a tracked swap until it is DONE.
func waitDone(t *testing.T, ts *testServer, txHash string) statusBody {
	t.Helper()
	var st statusBody
	waitUntil(t, "the swap is done", func() bool {
		ts.get("/v1/status?txHash="+txHash).decode(t, &st)
		return st.Status == swap.StatusDone
	})
	if st.Substatus != swap.Completed || st.Receiving.TxHash == "" {
		t.Fatalf("done %+v", st)
	}
	return st
}
