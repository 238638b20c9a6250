package main

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// recordedArbitrumNode replays the answers of an Arbitrum node recorded in
// routing/adapters/evidencerpc/testdata/rpc (see its README): the transactions of the
// named cases, found by hash, and null for any other hash. It counts the
// calls it answers, and returns each case's transaction hash.
func recordedArbitrumNode(t *testing.T, calls *atomic.Int32, cases ...string) (*httptest.Server, map[string]string) {
	t.Helper()
	answers := map[string]map[common.Hash]json.RawMessage{}
	hashes := map[string]string{}
	var head json.RawMessage
	if b, err := os.ReadFile(filepath.Join("..", "..", "routing", "adapters", "evidencerpc", "testdata", "rpc", "deposit", "eth_blockNumber.json")); err != nil {
		t.Fatal(err)
	} else {
		var r struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		head = r.Result
	}
	for _, name := range cases {
		var hash common.Hash
		for _, method := range []string{"eth_getTransactionByHash", "eth_getTransactionReceipt"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "routing", "adapters", "evidencerpc", "testdata", "rpc", name, method+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if method == "eth_getTransactionByHash" {
				var tx struct{ Hash common.Hash }
				if err := json.Unmarshal(r.Result, &tx); err != nil {
					t.Fatal(err)
				}
				hash = tx.Hash
				hashes[name] = hash.Hex()
			}
			if answers[method] == nil {
				answers[method] = map[common.Hash]json.RawMessage{}
			}
			answers[method][hash] = r.Result
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []common.Hash   `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || (len(req.Params) != 1 && req.Method != "eth_blockNumber") {
			http.Error(w, "one JSON-RPC call with one hash expected", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		var result json.RawMessage
		if req.Method == "eth_blockNumber" {
			result = head // the deposit's block and eleven more
		} else if result = answers[req.Method][req.Params[0]]; result == nil {
			result = json.RawMessage("null")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv, hashes
}

// With --evm-rpc naming a node for Arbitrum, a deposit registration's
// step 1 is checked on that node: the register endpoint accepts the
// recorded successful deposit (and step 2 then runs on the sandbox chain to
// COMPLETED), refuses the transaction the node reports reverted with
// reason TX_FAILED, even where the sandbox chain is also running Arbitrum,
// and keeps a hash the node does not know CONFIRMING (the transaction may
// not be broadcast yet).
func TestRegisterDepositOverRPC(t *testing.T) {
	var calls atomic.Int32
	node, recorded := recordedArbitrumNode(t, &calls, "deposit", "reverted")
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		c.SandboxBridgeScale = 0
		c.EVMRPC = map[uint64]string{42161: node.URL}
	})
	// The key that signed the recorded transactions (testdata/rpc/README.md).
	pk, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/inbound-test/rpc-depositor")))
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(pk.PublicKey)
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	register := func(txHash string) *envelope {
		t.Helper()
		msg := pulseroute.RegisterMessage{TxHash: common.HexToHash(txHash), ToAddress: from, OutputToken: plsx, DestinationDomain: 369}
		digest, err := pulseroute.Hash(pulseroute.TypedData(42161, msg))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := crypto.Sign(digest, pk)
		if err != nil {
			t.Fatal(err)
		}
		sig[64] += 27
		return ts.post("/v1/inbound-receiver/register", map[string]any{"txHash": txHash, "fromAddress": from.Hex(),
			"toAddress": from.Hex(), "outputToken": plsx.Hex(), "destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)})
	}
	deposited, reverted := recorded["deposit"], recorded["reverted"]

	// Refused: what the node shows is not a deposit, each with its reason.
	refusals := []struct {
		name, txHash, reason string
	}{
		{"reverted on the node", reverted, "TX_FAILED"},
	}
	for _, tc := range refusals {
		e := register(tc.txHash)
		e.wantError(t, 400, "INVALID_PARAMS", "txHash")
		if e.Error.Details["reason"] != tc.reason || e.Error.Details["chainId"] != float64(42161) {
			t.Fatalf("%s: details %v, want reason %s on chain 42161 (%s)", tc.name, e.Error.Details, tc.reason, e.Error.Message)
		}
	}
	ts.get("/v1/inbound-receiver/deposits/"+reverted).wantError(t, 404, "INVALID_PARAMS", "txHash") // nothing recorded
	var awaited struct{ Status, AmountIn string }
	register("0x7a1f0c6e5b4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4b3a").decode(t, &awaited)
	if awaited.Status != "CONFIRMING" || awaited.AmountIn != "" {
		t.Fatalf("a hash unknown to the node: %+v, want CONFIRMING without an amount", awaited)
	}
	calls.Store(0)

	// Accepted: the recorded deposit; step 2 then runs on the sandbox chain.
	before := ts.balance(t, 369, from.Hex(), plsx.Hex())
	var d struct{ Status, TxHash, AmountIn, AmountOut, InputToken, QuoteID string }
	register(deposited).decode(t, &d)
	if d.Status != "RECEIVED" || d.AmountIn != "512340512" || !strings.EqualFold(d.InputToken, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831") || d.QuoteID != "" {
		t.Fatalf("registered %+v", d)
	}
	if calls.Load() < 3 {
		t.Fatalf("the node answered %d calls, want the transaction, its receipt and the head", calls.Load())
	}
	waitUntil(t, "step 2 completes on the sandbox chain", func() bool {
		ts.get("/v1/inbound-receiver/deposits/"+deposited).decode(t, &d)
		return d.Status == "COMPLETED"
	})
	if got := new(big.Int).Sub(ts.balance(t, 369, from.Hex(), plsx.Hex()), before); got.Sign() <= 0 || got.String() != d.AmountOut {
		t.Fatalf("depositor received %s, deposit says %+v", got, d)
	}
}
