package simrpc_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/routing/sim/simrpc"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the scripts' expected answers with what the node answers")

const chainID = 42161

// oneChain is the owner of one sandbox chain, as actors/sandboxchain is of
// all of them, on a clock that steps a second per change.
type oneChain struct {
	mu  sync.Mutex
	c   *sandboxnet.Chain
	now time.Time
}

func (o *oneChain) View(_ context.Context, id uint64, fn func(*simchain.Chain)) error {
	if id != o.c.ID() {
		return sandboxnet.ErrUnknownChain
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fn(o.c.Sim())
	return nil
}

func (o *oneChain) do(op sandboxnet.Op) (sandboxnet.Applied, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.now = o.now.Add(time.Second)
	op.Time = o.now
	return o.c.Do(op)
}

func (o *oneChain) SendRaw(_ context.Context, id uint64, raw []byte) (common.Hash, error) {
	if id != o.c.ID() {
		return common.Hash{}, sandboxnet.ErrUnknownChain
	}
	a, err := o.do(sandboxnet.Op{Kind: sandboxnet.OpRaw, Raw: raw})
	return a.Hash, err
}

// rawTx is a transaction the script sends, signed by the test's key.
type rawTx struct {
	kind        string // "legacy" or 1559 by default
	chain       uint64 // 0: chainID
	nonce       uint64
	feeCap, tip int64 // wei; a legacy transaction's gas price is feeCap
	to          common.Address
	data        []byte
	value       *big.Int
	gas         uint64
}

func sign(t *testing.T, key *ecdsa.PrivateKey, r rawTx) []byte {
	t.Helper()
	id := big.NewInt(chainID)
	if r.chain != 0 {
		id = new(big.Int).SetUint64(r.chain)
	}
	if r.value == nil {
		r.value = new(big.Int)
	}
	var data types.TxData = &types.DynamicFeeTx{ChainID: id, Nonce: r.nonce, GasFeeCap: big.NewInt(r.feeCap), GasTipCap: big.NewInt(r.tip),
		Gas: r.gas, To: &r.to, Value: r.value, Data: r.data}
	if r.kind == "legacy" {
		data = &types.LegacyTx{Nonce: r.nonce, GasPrice: big.NewInt(r.feeCap), Gas: r.gas, To: &r.to, Value: r.value, Data: r.data}
	}
	tx := types.MustSignNewTx(key, types.LatestSignerForChainID(id), data)
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestNodeScript runs testdata/node.txt: each "-> " line is a request body
// sent to the node, answered exactly as the "<- " line after it (compared
// as compact JSON, case aside; "<- " alone is no answer); "basefee N" sets the base
// fee; ${NAME} stands for the test's values (the key's address ME and its
// 32-byte word ME_WORD, the tokens, the router, signed transactions RAW_*
// and their hashes HASH_*). With -rewrite the answers are written back.
func TestNodeScript(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := sandboxnet.New(sandboxnet.Config{Registry: reg}, chainID)
	if err != nil {
		t.Fatal(err)
	}
	chain := &oneChain{c: c, now: sandboxnet.GenesisTime}
	key, _ := crypto.ToECDSA(crypto.Keccak256([]byte("simrpc script key")))
	me := crypto.PubkeyToAddress(key.PublicKey)
	usdcTok, _ := reg.TokenBySymbol(chainID, "USDC")
	usdc := common.HexToAddress(usdcTok.Address)
	router := sandbox.RouterAddress(chainID)
	erc20 := simchain.ERC20ABI()
	pack := func(method string, args ...any) []byte {
		b, err := erc20.Pack(method, args...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	gwei := int64(1_000_000_000)
	baseFee := c.Sim().BaseFee().Int64()
	raws := map[string]rawTx{
		"APPROVE":    {nonce: 0, feeCap: 2 * baseFee, tip: 1, to: usdc, data: pack("approve", router, big.NewInt(5_000_000)), gas: 60_000},
		"LOW":        {nonce: 0, feeCap: 2 * baseFee, tip: 2, to: router, gas: 21_000},
		"STUCK":      {nonce: 1, feeCap: 10 * gwei, tip: gwei, to: common.Address{0xbb}, value: big.NewInt(7), gas: 21_000},
		"UNDER":      {nonce: 1, feeCap: 10*gwei + 1, tip: gwei, to: common.Address{0xbb}, value: big.NewInt(7), gas: 21_000},
		"REPLACE":    {nonce: 1, feeCap: 200 * gwei, tip: 11 * gwei / 10, to: common.Address{0xbb}, value: big.NewInt(7), gas: 21_000},
		"LEGACY":     {kind: "legacy", nonce: 2, feeCap: 200 * gwei, to: usdc, data: pack("transfer", common.Address{0xcc}, big.NewInt(1_000)), gas: 80_000},
		"WRONGCHAIN": {chain: 8453, nonce: 3, feeCap: 2 * baseFee, tip: 1, to: usdc, gas: 21_000},
		"BROKE":      {nonce: 3, feeCap: 2 * baseFee, tip: 1, to: common.Address{0xbb}, value: new(big.Int).Lsh(big.NewInt(1), 200), gas: 21_000},
	}
	vars := map[string]string{
		"ME":          me.Hex(),
		"ME_WORD":     strings.Repeat("0", 24) + strings.ToLower(me.Hex()[2:]),
		"USDC":        usdc.Hex(),
		"ROUTER":      router.Hex(),
		"ROUTER_WORD": strings.Repeat("0", 24) + strings.ToLower(router.Hex()[2:]),
	}
	for name, r := range raws {
		raw := sign(t, key, r)
		vars["RAW_"+name] = fmt.Sprintf("0x%x", raw)
		vars["HASH_"+name] = crypto.Keccak256Hash(raw).Hex()
		if r.kind == "legacy" {
			tx := new(types.Transaction)
			_ = tx.UnmarshalBinary(raw)
			vars["HASH_"+name] = tx.Hash().Hex()
		}
	}
	subst := func(s string) string {
		return os.Expand(s, func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			t.Fatalf("no value for ${%s}", k)
			return ""
		})
	}

	const path = "testdata/node.txt"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "basefee "):
			fee, ok := new(big.Int).SetString(strings.TrimPrefix(line, "basefee "), 10)
			if !ok {
				t.Fatalf("line %d: %q", i+1, line)
			}
			if _, err := chain.do(sandboxnet.Op{Kind: sandboxnet.OpBaseFee, Amount: fee}); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			out = append(out, line)
		case strings.HasPrefix(line, "-> "):
			req := subst(strings.TrimPrefix(line, "-> "))
			got := simrpc.Serve(context.Background(), chain, chainID, []byte(req))
			out = append(out, line)
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "<-") {
				t.Fatalf("line %d: a request without an answer line", i+1)
			}
			i++
			want := strings.TrimSpace(strings.TrimPrefix(lines[i], "<-"))
			if *rewrite {
				out = append(out, strings.TrimSpace("<- "+unsubst(string(got), vars)))
				continue
			}
			out = append(out, lines[i])
			if !sameJSON(got, []byte(subst(want))) {
				t.Errorf("line %d: %s\n got: %s\nwant: %s", i, req, got, subst(want))
			}
		default:
			out = append(out, line)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unsubst writes the test's values back as their names, so that the
// rewritten answers read as the requests do.
func unsubst(s string, vars map[string]string) string {
	for _, k := range []string{"RAW_", "HASH_", "ME_WORD", "ME", "USDC", "ROUTER_WORD", "ROUTER"} {
		for name, v := range vars {
			if strings.HasPrefix(name, k) || name == k {
				s = strings.ReplaceAll(s, v, "${"+name+"}")
				s = strings.ReplaceAll(s, strings.ToLower(v), "${"+name+"}")
			}
		}
	}
	return s
}

func sameJSON(got, want []byte) bool {
	if len(want) == 0 || len(got) == 0 {
		return len(want) == len(got)
	}
	var g, w bytes.Buffer
	if json.Compact(&g, got) != nil || json.Compact(&w, want) != nil {
		return false
	}
	// Addresses are written in lower case by some fields and with their
	// checksum by others, and ${NAME} stands for both.
	return bytes.EqualFold(g.Bytes(), w.Bytes())
}

// TestNodeAnswersEveryBodyInJSONRPC: whatever the body, the node answers
// a JSON-RPC response or nothing, never panics, and a chain that is not
// the node's is an error object.
func TestNodeAnswersEveryBodyInJSONRPC(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := sandboxnet.New(sandboxnet.Config{Registry: reg}, chainID)
	if err != nil {
		t.Fatal(err)
	}
	chain := &oneChain{c: c, now: sandboxnet.GenesisTime}
	bodies := []string{"", "{", "[", "null", "1", `"x"`, "[1,2]", `[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{}]`,
		`{"jsonrpc":"2.0","id":{},"method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"address":5}]}`,
		`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":[]}`, `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0xffffffff","latest",[50,10]]}`,
		`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x02"]}`, `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","value":"-0x1"}]}`,
		"[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},`, simrpc.MaxBatch) + `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]`,
	}
	for _, b := range bodies {
		got := simrpc.Serve(context.Background(), chain, chainID, []byte(b))
		var one map[string]any
		var many []map[string]any
		if json.Unmarshal(got, &one) != nil && json.Unmarshal(got, &many) != nil {
			t.Errorf("%.60s: answered %s", b, got)
		}
		if one != nil && one["error"] == nil && one["result"] == nil {
			t.Errorf("%.60s: neither result nor error: %s", b, got)
		}
	}
	got := simrpc.Serve(context.Background(), chain, 1, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`))
	var resp struct{ Error *struct{ Code int } }
	if err := json.Unmarshal(got, &resp); err != nil || resp.Error == nil || resp.Error.Code != simrpc.CodeServer {
		t.Fatalf("another chain: %s", got)
	}
}
