package evidencerpc

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

var update = flag.Bool("update", false, "rewrite the recorded node answers under testdata/rpc")

// The recorded node is Arbitrum One's (chain 42161): the depositor swaps
// 0.2 WETH for USDC on Uniswap v3 (SwapRouter02.exactInputSingle) with
// Swapgate's inbound receiver as the swap's recipient, which is step 1 of a
// multi-step quote. Its key is testKey's "rpc-depositor".
const (
	rpcChain       = 42161
	rpcDepositSeed = "rpc-depositor"
)

var (
	arbWETH      = common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")
	arbPool      = common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0") // Uniswap v3 WETH/USDC 0.05%
	swapRouter02 = common.HexToAddress("0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45")
	// rpcDeposited is the USDC the recorded deposit delivers, in base units.
	rpcDeposited = big.NewInt(512_340_512)
	rpcWETHIn    = big.NewInt(200_000_000_000_000_000)
	swapTopic    = crypto.Keccak256Hash([]byte("Swap(address,address,int256,int256,uint160,uint128,int24)"))
)

// The recorded cases, each a directory of testdata/rpc holding the node's
// answer to eth_getTransactionByHash and to eth_getTransactionReceipt.
const (
	caseDeposit  = "deposit"   // mined, successful, USDC to the inbound receiver
	caseReverted = "reverted"  // mined, reverted (the swap's minimum out not met)
	casePending  = "pending"   // in the mempool
	caseNotFound = "not_found" // unknown to the node
	caseRPCError = "rpc_error" // the node's provider refuses the call
)

var rpcMethods = []string{"eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_blockNumber"}

// rpcHead is the node's latest block in the recorded answers: the deposit's
// block and eleven after it, twelve confirmations.
const rpcHead = 312_457_119

// TestRecordedNodeAnswers rebuilds the recorded answers (signing the
// transactions with go-ethereum, so that types.Sender recovers the
// depositor from them) and holds testdata/rpc to them; with -update it
// rewrites the files instead.
func TestRecordedNodeAnswers(t *testing.T) {
	for name, answers := range recordNode(t) {
		for method, answer := range answers {
			got, err := json.MarshalIndent(answer, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "rpc", name, method+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the generator records:\n%s", path, got)
			}
		}
	}
}

// recordNode builds every case's answers: case → method → the JSON-RPC
// response object, laid out as a go-ethereum node of Arbitrum answers.
func recordNode(t *testing.T) map[string]map[string]any {
	t.Helper()
	key, from := testKey(t, rpcDepositSeed)
	receiver, ok := pulseroute.DefaultContracts().InboundReceiver(rpcChain)
	if !ok {
		t.Fatal("no inbound receiver on the recorded chain")
	}
	usdc := arbUSDC(t)
	signer := types.LatestSignerForChainID(big.NewInt(rpcChain))
	sign := func(nonce uint64, minOut *big.Int) *types.Transaction {
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{
			ChainID: big.NewInt(rpcChain), Nonce: nonce,
			GasTipCap: big.NewInt(0), GasFeeCap: big.NewInt(20_000_000), Gas: 350_000,
			To: &swapRouter02, Data: exactInputSingle(arbWETH, usdc, receiver, rpcWETHIn, minOut),
		})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	deposit := sign(7, new(big.Int).Div(new(big.Int).Mul(rpcDeposited, big.NewInt(995)), big.NewInt(1000)))
	reverted := sign(8, new(big.Int).Mul(rpcDeposited, big.NewInt(2)))
	pending := sign(9, rpcDeposited)

	word := func(v *big.Int) []byte { return common.LeftPadBytes(new(big.Int).And(v, maxWord).Bytes(), 32) }
	swapData := bytes.Join([][]byte{
		word(new(big.Int).Neg(rpcDeposited)), word(rpcWETHIn), // amount0 (USDC out of the pool), amount1 (WETH in)
		word(new(big.Int).Lsh(big.NewInt(1), 96)), word(big.NewInt(3_141_592_653_589)), word(big.NewInt(-198_112)),
	}, nil)
	logs := []*types.Log{
		{Address: usdc, Topics: []common.Hash{transferTopic, addrTopic(arbPool), addrTopic(receiver)}, Data: word(rpcDeposited)},
		{Address: arbWETH, Topics: []common.Hash{transferTopic, addrTopic(from), addrTopic(arbPool)}, Data: word(rpcWETHIn)},
		{Address: arbPool, Topics: []common.Hash{swapTopic, addrTopic(swapRouter02), addrTopic(receiver)}, Data: swapData},
	}

	nullAnswer := response(nil)
	rateLimited := map[string]any{"jsonrpc": "2.0", "id": 1,
		"error": map[string]any{"code": -32005, "message": "daily request count exceeded, request rate limited"}}
	return map[string]map[string]any{
		caseDeposit: {
			"eth_getTransactionByHash":  response(nodeTx(t, deposit, from, 312_457_108, 3)),
			"eth_getTransactionReceipt": response(nodeReceipt(t, deposit, from, types.ReceiptStatusSuccessful, 312_457_108, 3, 161_412, logs)),
			"eth_blockNumber":           response(hexutil.Uint64(rpcHead)),
		},
		caseReverted: {
			"eth_getTransactionByHash":  response(nodeTx(t, reverted, from, 312_457_311, 1)),
			"eth_getTransactionReceipt": response(nodeReceipt(t, reverted, from, types.ReceiptStatusFailed, 312_457_311, 1, 118_204, nil)),
			"eth_blockNumber":           response(hexutil.Uint64(312_457_322)),
		},
		casePending: {
			"eth_getTransactionByHash":  response(nodeTx(t, pending, from, 0, 0)),
			"eth_getTransactionReceipt": nullAnswer,
		},
		caseNotFound: {"eth_getTransactionByHash": nullAnswer, "eth_getTransactionReceipt": nullAnswer},
		caseRPCError: {"eth_getTransactionByHash": rateLimited, "eth_getTransactionReceipt": rateLimited},
	}
}

var maxWord = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

func arbUSDC(t *testing.T) common.Address {
	t.Helper()
	w, ok := pulseroute.DefaultContracts().WarpRoute(rpcChain)
	if !ok || w.Synthetic {
		t.Fatal("no USDC warp route on the recorded chain")
	}
	return w.Token
}

// exactInputSingle is SwapRouter02's exactInputSingle((tokenIn, tokenOut,
// fee 500, recipient, amountIn, amountOutMinimum, sqrtPriceLimitX96 0)).
func exactInputSingle(in, out, recipient common.Address, amountIn, minOut *big.Int) []byte {
	data := []byte{0x04, 0xe4, 0x5a, 0xaf}
	for _, w := range [][]byte{in.Bytes(), out.Bytes(), big.NewInt(500).Bytes(), recipient.Bytes(), amountIn.Bytes(), minOut.Bytes(), nil} {
		data = append(data, common.LeftPadBytes(w, 32)...)
	}
	return data
}

func response(result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 1, "result": result}
}

func blockHash(n uint64) common.Hash {
	return crypto.Keccak256Hash([]byte("arbitrum-one/block"), new(big.Int).SetUint64(n).Bytes())
}

// nodeTx is eth_getTransactionByHash's result: the signed transaction's
// fields and where it was mined (block 0: pending, the block fields null).
func nodeTx(t *testing.T, tx *types.Transaction, from common.Address, block, index uint64) map[string]any {
	t.Helper()
	m := jsonMap(t, tx)
	m["from"] = from
	m["blockHash"], m["blockNumber"], m["transactionIndex"] = nil, nil, nil
	m["gasPrice"] = hexBig(tx.GasFeeCap())
	if block > 0 {
		m["blockHash"], m["blockNumber"], m["transactionIndex"] = blockHash(block), hexUint(block), hexUint(index)
		m["gasPrice"] = hexBig(big.NewInt(10_000_000)) // the effective price: Arbitrum's base fee, no tip
	}
	return m
}

// nodeReceipt is eth_getTransactionReceipt's result for a mined tx, with
// the fields Arbitrum's node adds.
func nodeReceipt(t *testing.T, tx *types.Transaction, from common.Address, status, block, index, gasUsed uint64, logs []*types.Log) map[string]any {
	t.Helper()
	r := &types.Receipt{Type: tx.Type(), Status: status, CumulativeGasUsed: 2_804_113 + gasUsed, TxHash: tx.Hash(),
		GasUsed: gasUsed, EffectiveGasPrice: big.NewInt(10_000_000), BlockHash: blockHash(block),
		BlockNumber: new(big.Int).SetUint64(block), TransactionIndex: uint(index), Logs: []*types.Log{}}
	for i, l := range logs {
		c := *l
		c.BlockNumber, c.BlockHash, c.TxHash, c.TxIndex, c.Index = block, r.BlockHash, r.TxHash, uint(index), uint(17+i)
		c.BlockTimestamp = 1_739_912_345 + (block-312_457_108)/4 // Arbitrum makes about four blocks a second
		r.Logs = append(r.Logs, &c)
	}
	r.Bloom = types.CreateBloom(r)
	m := jsonMap(t, r)
	delete(m, "root")
	m["from"], m["to"], m["contractAddress"] = from, tx.To(), nil
	m["gasUsedForL1"], m["l1BlockNumber"] = hexUint(21_004), hexUint(21_893_412)
	return m
}

func jsonMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func hexUint(v uint64) string  { return "0x" + new(big.Int).SetUint64(v).Text(16) }
func hexBig(v *big.Int) string { return "0x" + v.Text(16) }

// recordedNode is a JSON-RPC node that replays recorded answers: for each
// method, the response object stored in testdata/rpc/<case>/<method>.json,
// under the request's id. It counts the calls by method.
type recordedNode struct {
	srv     *httptest.Server
	mu      sync.Mutex
	calls   map[string]int
	asked   []string // the hashes asked for, in order
	answers map[string]json.RawMessage
}

// startRecordedNode serves the answers of cases, by method: cases[method]
// names the recorded case whose answer to that method is replayed.
func startRecordedNode(t *testing.T, cases map[string]string) *recordedNode {
	t.Helper()
	n := &recordedNode{calls: map[string]int{}, answers: map[string]json.RawMessage{}}
	for method, name := range cases {
		b, err := os.ReadFile(filepath.Join("testdata", "rpc", name, method+".json"))
		if err != nil {
			t.Fatal(err)
		}
		n.answers[method] = b
	}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []string        `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.mu.Lock()
		n.calls[req.Method]++
		n.asked = append(n.asked, req.Params...)
		n.mu.Unlock()
		var answer map[string]json.RawMessage
		if b, ok := n.answers[req.Method]; ok {
			_ = json.Unmarshal(b, &answer)
		} else {
			answer = map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`),
				"error": json.RawMessage(`{"code":-32601,"message":"the method ` + req.Method + ` does not exist/is not available"}`)}
		}
		answer["id"] = req.ID
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *recordedNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

// recordedHash is the transaction hash a case's eth_getTransactionByHash
// answer carries.
func recordedHash(t *testing.T, name string) common.Hash {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rpc", name, "eth_getTransactionByHash.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result *struct {
			Hash common.Hash `json:"hash"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
		t.Fatalf("no transaction recorded in case %s: %v", name, err)
	}
	return r.Result.Hash
}
