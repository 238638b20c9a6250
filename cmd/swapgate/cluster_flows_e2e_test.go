package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// startClusterTrusting is startCluster whose nodes trust the webhook
// receiver's certificate (SSL_CERT_FILE), written before the first node
// starts.
func startClusterTrusting(t *testing.T, n int, rcv *crashReceiver, extra ...string) *testCluster {
	t.Helper()
	return newCluster(t, n, clusterOpts{trust: rcv, extra: extra})
}

// clusterBalances is GET /v1/balances of holder on one chain, whole.
func clusterBalances(t *testing.T, c *crashClient, chainID uint64, holder string) string {
	t.Helper()
	var b struct {
		Chains []json.RawMessage
	}
	crashGet(t, c, fmt.Sprintf("/v1/balances?address=%s&chains=%d", holder, chainID), "", &b)
	if len(b.Chains) != 1 {
		t.Fatalf("balances of %s on chain %d: %+v", holder, chainID, b)
	}
	return string(b.Chains[0])
}

// TestClusterSwapAcrossNodes plays a partner's swap over three nodes of a
// sandbox cluster, each call on another node than the last: quoted on A,
// approved and broadcast on B (the sandbox chains are cluster grains, so B
// sees the chain A's quote was priced for), executed on C (which finds the
// quote A issued a moment before in the shared store), followed to DONE on
// A, its swap.* webhooks delivered. A faucet top-up on one node shows in
// another's /v1/balances. Then the node that owns the destination chain's
// grain is killed: a survivor's broadcast on that chain succeeds (the
// chain's grain moves to a live node and replays its log from the store),
// and every balance it replayed is what it was.
func TestClusterSwapAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three service processes")
	}
	rcv := crashStartReceiver(t)
	tc := startClusterTrusting(t, 3, rcv)
	want := slices.Sorted(slices.Values(tc.binds))
	tc.waitMembers(t, want)
	nodeA, nodeB, nodeC := tc.nodes[0].client(), tc.nodes[1].client(), tc.nodes[2].client()
	defer func() { nodeA.close(); nodeB.close(); nodeC.close() }()

	// The partner, made by the operator's CLI on the shared store.
	cliDir := filepath.Join(tc.work, "cli")
	copySecretsKey(t, tc.dirs[0], cliDir)
	p := crashPartner(t, cliDir, "ClusterPartner", "--store", tc.store, "--heavy", "100000", "--read", "100000")
	if s, raw, err := nodeB.do(http.MethodPut, "/v1/partner/me/fee-wallets", crashJSON(map[string]string{"ecosystem": "evm",
		"address": crashEVMAddress("cluster/fee")}), p.key); err != nil || s != http.StatusOK {
		t.Fatalf("fee wallet on node B: %d %v %s", s, err, raw)
	}
	var hook struct{ ID string }
	if s, raw, err := nodeA.doJSON(http.MethodPost, "/v1/partner/webhooks", crashHookBody(rcv.srv.URL+"/cluster", webhook.Events()), p.key, &hook); err != nil || s != http.StatusCreated {
		t.Fatalf("webhook on node A: %d %v %s", s, err, raw)
	}

	const src, dst = 10, 8453
	const srcUSDC, dstUSDC = "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85", crashUSDCBase
	from, to := crashEVMAddress("cluster/swap/from"), crashEVMAddress("cluster/swap/to")
	amount := big.NewInt(100_000_000)

	// Quoted on A.
	var q crashQuote
	path := crashQuotePath("fromChain", strconv.Itoa(src), "toChain", strconv.Itoa(dst), "fromToken", srcUSDC, "toToken", dstUSDC,
		"fromAmount", amount.String(), "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge")
	if s, raw, err := nodeA.doJSON(http.MethodGet, path, nil, p.key, &q); err != nil || s != http.StatusOK || q.Quote.Estimate.ApprovalAddress == nil {
		t.Fatalf("quote on node A: %d %v %s", s, err, raw)
	}

	// Approved and broadcast on B.
	broadcast := func(c *crashClient, node string, chainID uint64, from string, tx any) string {
		t.Helper()
		var b struct{ TxHash, Status string }
		s, raw, err := c.doJSON(http.MethodPost, "/v1/sandbox/broadcast", crashJSON(map[string]any{"chainId": chainID, "from": from, "transactionRequest": tx}), p.key, &b)
		if err != nil || s != http.StatusOK || b.Status != "success" {
			t.Fatalf("broadcast on node %s: %d %v %s", node, s, err, raw)
		}
		return b.TxHash
	}
	approve := crashApprove(*q.Quote.Estimate.ApprovalAddress, amount)
	approve["to"] = srcUSDC
	broadcast(nodeB, "B", src, from, approve)
	txHash := broadcast(nodeB, "B", src, from, q.Quote.TransactionRequest)
	// The transaction is known on every node.
	for _, c := range []*crashClient{nodeA, nodeC} {
		var tx struct{ TxHash, Status string }
		crashGet(t, c, "/v1/sandbox/tx/"+txHash, "", &tx)
		if tx.Status != "success" {
			t.Fatalf("the swap's transaction seen elsewhere: %+v", tx)
		}
	}

	// Executed on C, a moment after A issued the quote.
	var ex struct{ Status *struct{ Status string } }
	if s, raw, err := nodeC.doJSON(http.MethodPost, "/v1/execute", crashJSON(map[string]string{"quoteId": q.Quote.ID, "txHash": txHash}), p.key, &ex); err != nil || s != http.StatusOK {
		t.Fatalf("execute on node C of node A's quote: %d %v %s", s, err, raw)
	}

	// Followed to DONE on A, the bought USDC delivered, its webhooks heard.
	var st struct {
		Status, Substatus string
		Receiving         struct{ TxHash string }
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		crashGet(t, nodeA, "/v1/status?txHash="+txHash, "", &st)
		if st.Status == "DONE" || st.Status == "FAILED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the swap is %s %s after a minute", st.Status, st.Substatus)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.Status != "DONE" || st.Substatus != "COMPLETED" || st.Receiving.TxHash == "" {
		t.Fatalf("the swap ended %+v", st)
	}
	genesis := big.NewInt(1_000_000_000) // 1,000 USDC, every address's start on every chain
	if got, want := crashBalance(t, nodeB, dst, to, dstUSDC), new(big.Int).Add(genesis, crashBig(t, q.Quote.Estimate.ToAmount)); got.Cmp(want) != 0 {
		t.Fatalf("the receiver holds %s USDC base units on chain %d, want %s", got, dst, want)
	}
	for !rcv.heard(webhook.SwapCompleted, q.Quote.ID) || !rcv.heard(webhook.SwapPending, q.Quote.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("swap.pending and swap.completed of %s not both delivered", q.Quote.ID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if twice := rcv.publishedTwice(); len(twice) > 0 {
		t.Errorf("published more than once: %v", twice)
	}

	// Quotes executed on another node the moment they are answered: the
	// issuing node may not have committed their tickets yet (see
	// tickets.Options.Shared).
	for i := range 20 {
		var q crashQuote
		path := crashQuotePath("fromChain", strconv.Itoa(src), "toChain", strconv.Itoa(dst), "fromToken", srcUSDC, "toToken", dstUSDC,
			"fromAmount", amount.String(), "fromAddress", from, "toAddress", to, "tools", "sbx-arcbridge")
		issuer, executor := tc.nodes[i%3].client(), tc.nodes[(i+1)%3].client()
		if s, raw, err := issuer.doJSON(http.MethodGet, path, nil, p.key, &q); err != nil || s != http.StatusOK {
			t.Fatalf("quote %d: %d %v %s", i, s, err, raw)
		}
		var ex struct{ QuoteID, Kind string }
		if s, raw, err := executor.doJSON(http.MethodPost, "/v1/execute", crashJSON(map[string]string{"quoteId": q.Quote.ID}), p.key, &ex); err != nil ||
			s != http.StatusOK || ex.QuoteID != q.Quote.ID || ex.Kind != "transaction" {
			t.Fatalf("execute at once on another node of quote %d: %d %v %s", i, s, err, raw)
		}
		issuer.close()
		executor.close()
	}
	// An intents quote's deposit address is known on every node as soon as
	// the quote is answered.
	for i := range 10 {
		var iq struct {
			Quote    struct{ ID, DepositAddress string }
			Provider string
		}
		issuer, reader := tc.nodes[i%3].client(), tc.nodes[(i+2)%3].client()
		if s, raw, err := issuer.doJSON(http.MethodGet, crashQuotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
			"fromAmount", strconv.Itoa(250_000_000+i), "fromAddress", wallet, "toAddress", tonAddress), nil, p.key, &iq); err != nil || s != http.StatusOK ||
			iq.Provider != "intents" || iq.Quote.DepositAddress == "" {
			t.Fatalf("intents quote %d: %d %v %s", i, s, err, raw)
		}
		var ds struct{ Status, QuoteID string }
		crashGet(t, reader, "/v1/execute/deposit/status?depositAddress="+iq.Quote.DepositAddress, p.key, &ds)
		if ds.Status != "PENDING_DEPOSIT" || ds.QuoteID != iq.Quote.ID {
			t.Fatalf("another node's deposit status of intents quote %d: %+v", i, ds)
		}
		issuer.close()
		reader.close()
	}

	// A faucet top-up on one node, seen on another.
	topped := crashEVMAddress("cluster/faucet")
	var fb struct{ TxHash, Status string }
	if s, raw, err := nodeC.doJSON(http.MethodPost, "/v1/sandbox/faucet", crashJSON(map[string]any{"chainId": dst, "address": topped,
		"token": dstUSDC, "amount": "5000000"}), p.key, &fb); err != nil || s != http.StatusOK || fb.Status != "success" {
		t.Fatalf("faucet on node C: %d %v %s", s, err, raw)
	}
	if got, want := crashBalance(t, nodeA, dst, topped, dstUSDC), new(big.Int).Add(genesis, big.NewInt(5_000_000)); got.Cmp(want) != 0 {
		t.Fatalf("node A sees %s USDC base units after node C's top-up, want %s", got, want)
	}
	// The chain's JSON-RPC node, through a node that may not own the chain:
	// the top-up read back with an eth_call of balanceOf.
	balanceOf := `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"` + dstUSDC + `","data":"0x70a08231` +
		strings.Repeat("0", 24) + strings.ToLower(topped[2:]) + `"},"latest"]}`
	if s, raw, err := nodeA.do(http.MethodPost, "/rpc/"+strconv.Itoa(dst), []byte(balanceOf), p.key); err != nil || s != http.StatusOK ||
		!strings.Contains(string(raw), fmt.Sprintf(`"result":"0x%064x"`, new(big.Int).Add(genesis, big.NewInt(5_000_000)))) {
		t.Fatalf("eth_call of balanceOf through node A: %d %v %s", s, err, raw)
	}

	// The chains' refusals cross nodes as the contract's codes, naming
	// the parameter at fault.
	refusals := []struct {
		name, path string
		body       map[string]any
		param      string
	}{
		{"faucet over the bound", "/v1/sandbox/faucet", map[string]any{"chainId": dst, "address": topped, "token": dstUSDC,
			"amount": "1000000000000000000"}, "amount"},
		{"gas limit below the intrinsic gas", "/v1/sandbox/broadcast", map[string]any{"chainId": dst, "from": topped,
			"transactionRequest": map[string]string{"to": from, "gasLimit": "100"}}, "transactionRequest.gasLimit"},
	}
	for _, r := range refusals {
		var env struct {
			Error struct{ Code, Message string }
		}
		s, raw, err := nodeA.do(http.MethodPost, r.path, crashJSON(r.body), p.key)
		if err == nil {
			err = json.Unmarshal(raw, &env)
		}
		if err != nil || s != http.StatusBadRequest || env.Error.Code != "INVALID_PARAMS" || !strings.Contains(env.Error.Message, r.param) {
			t.Errorf("%s through node A: %d %v %s; want 400 INVALID_PARAMS naming %s", r.name, s, err, raw, r.param)
		}
	}

	// The destination chain's owner dies.
	owner := slices.Index(tc.binds, cluster.Owner(want, "chain/"+strconv.Itoa(dst)))
	if owner < 0 {
		t.Fatalf("no owner of chain %d among %v", dst, want)
	}
	survivor := tc.nodes[(owner+1)%3].client()
	defer survivor.close()
	holders := []string{from, to, topped}
	before := map[string]string{}
	for _, h := range holders {
		before[h] = clusterBalances(t, survivor, dst, h)
	}
	sender, receiver := crashEVMAddress("cluster/after/from"), crashEVMAddress("cluster/after/to")
	receiverBefore := crashBalance(t, survivor, dst, receiver, "0x0000000000000000000000000000000000000000")
	t.Logf("chain %d's grain lives on node %d (%s): killing it", dst, owner, tc.binds[owner])
	tc.nodes[owner].kill(t)
	tc.nodes[owner] = nil
	broadcast(survivor, "survivor", dst, sender, map[string]string{"to": receiver, "value": "1000"})
	for _, h := range holders {
		if after := clusterBalances(t, survivor, dst, h); after != before[h] {
			t.Errorf("%s's balances on chain %d replayed as\n%s\nwere\n%s", h, dst, after, before[h])
		}
	}
	if got, want := crashBalance(t, survivor, dst, receiver, "0x0000000000000000000000000000000000000000"), new(big.Int).Add(receiverBefore, big.NewInt(1000)); got.Cmp(want) != 0 {
		t.Fatalf("the receiver of the broadcast after the kill holds %s of the native coin, want %s", got, want)
	}
	// The chain's new owner rebuilt it from the log, every operation
	// mining the transaction it had mined.
	replayed := 0
	for i, n := range tc.nodes {
		if n == nil {
			continue
		}
		for _, line := range strings.Split(n.log.String(), "\n") {
			var l struct {
				Msg                         string
				ChainID, Replayed, Diverged int
			}
			if json.Unmarshal([]byte(line), &l) != nil || l.Msg != "sandbox chain grain active" || l.ChainID != dst {
				continue
			}
			if l.Diverged != 0 {
				t.Errorf("node %d replayed chain %d: %d of %d operations diverged", i, dst, l.Diverged, l.Replayed)
			}
			replayed = max(replayed, l.Replayed)
		}
	}
	if replayed == 0 {
		t.Errorf("no survivor replayed chain %d's log", dst)
	}
}
