package evmbalance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fakeNode answers batched JSON-RPC as a node would: the holder's coin
// balance, and for balanceOf on a token its position in the registry plus
// one, in whole units of 10^6, so that each answer is told apart. It
// refuses anything else.
func fakeNode(t *testing.T, reg *registry.Registry, chainID uint64, holder common.Address, batches *int) *httptest.Server {
	t.Helper()
	index := map[string]int{}
	for i, tok := range reg.Tokens(chainID) {
		index[strings.ToLower(tok.Address)] = i + 1
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqs []struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []json.RawMessage
		}
		if err := json.NewDecoder(r.Body).Decode(&reqs); err != nil {
			t.Errorf("not a batch: %v", err)
			http.Error(w, "batch expected", 400)
			return
		}
		*batches++
		var out []map[string]any
		for _, q := range reqs {
			res := map[string]any{"jsonrpc": "2.0", "id": q.ID}
			switch q.Method {
			case "eth_getBalance":
				var who string
				_ = json.Unmarshal(q.Params[0], &who)
				if !strings.EqualFold(who, holder.Hex()) {
					t.Errorf("balance of %s", who)
				}
				res["result"] = "0xde0b6b3a7640000" // 1 coin
			case "eth_call":
				var call struct{ To, Data, Input string }
				_ = json.Unmarshal(q.Params[0], &call)
				data := call.Data + call.Input
				if !strings.HasPrefix(data, "0x70a08231") || !strings.HasSuffix(strings.ToLower(data), strings.ToLower(holder.Hex()[2:])) {
					t.Errorf("call data %s", data)
				}
				res["result"] = fmt.Sprintf("0x%064x", index[strings.ToLower(call.To)]*1_000_000)
			default:
				res["error"] = map[string]any{"code": -32601, "message": "method not found"}
			}
			out = append(out, res)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBalancesInOneBatch(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	holder := common.HexToAddress("0x8ba1f109551bD432803012645Ac136ddd64DBA72")
	var batches int
	node := fakeNode(t, reg, 42161, holder, &batches)
	c, err := rpc.DialContext(context.Background(), node.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := New(reg, map[uint64]Batcher{42161: c}, nil, time.Minute)
	if !r.Serves(42161) || r.Serves(1) {
		t.Fatal("Serves")
	}
	bals, err := r.Balances(context.Background(), 42161, holder)
	if err != nil {
		t.Fatal(err)
	}
	if batches != 1 {
		t.Fatalf("%d requests, want one batch", batches)
	}
	toks := reg.Tokens(42161)
	if len(bals) != len(toks) || bals[0].Token.Address != (common.Address{}) || bals[0].Amount.String() != "1000000000000000000" {
		t.Fatalf("balances %+v", bals)
	}
	for _, b := range bals[1:] {
		for i, tok := range toks {
			if common.HexToAddress(tok.Address) == b.Token.Address && b.Amount.Int64() != int64(i+1)*1_000_000 {
				t.Fatalf("%s: %s, want %d", tok.Symbol, b.Amount, (i+1)*1_000_000)
			}
		}
	}
	if _, err := r.Balances(context.Background(), 1, holder); err == nil {
		t.Fatal("a chain without a node answered")
	}
}
