package main

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// fakeRPC is a JSON-RPC node that answers eth_call for the two reads
// pulseroute makes: the warp route's quoteGasPayment(uint32) and PulseX's
// getAmountsOut(uint256,address[]). Its PulseX multiplies every amount by
// 3×10¹⁶ along the path (USDCh's 6 decimals to PLS's 18 at 30,000 PLS a
// dollar), and its gas payment is a fixed 0.0003 ETH, so a quote built from
// it is recognisable.
func fakeRPC(t *testing.T, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	uintT, _ := abi.NewType("uint256", "", nil)
	uintsT, _ := abi.NewType("uint256[]", "", nil)
	addrsT, _ := abi.NewType("address[]", "", nil)
	factor := big.NewInt(30_000_000_000_000_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := func(result any) {
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		}
		switch req.Method {
		case "eth_chainId":
			answer("0x171")
		case "eth_call":
			calls.Add(1)
			var msg struct {
				Data  string `json:"data"`
				Input string `json:"input"`
			}
			_ = json.Unmarshal(req.Params[0], &msg)
			in := msg.Input
			if in == "" {
				in = msg.Data
			}
			data, _ := hex.DecodeString(strings.TrimPrefix(in, "0x"))
			switch hex.EncodeToString(data[:4]) {
			case "f2ed8c53":
				out, _ := abi.Arguments{{Type: uintT}}.Pack(big.NewInt(300_000_000_000_000))
				answer("0x" + hex.EncodeToString(out))
			case "d06ca61f":
				args, err := abi.Arguments{{Type: uintT}, {Type: addrsT}}.Unpack(data[4:])
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				amt := args[0].(*big.Int)
				path := args[1].([]common.Address)
				amounts := []*big.Int{amt}
				for range path[1:] {
					amt = new(big.Int).Mul(amt, factor)
					amounts = append(amounts, amt)
				}
				out, _ := abi.Arguments{{Type: uintsT}}.Pack(amounts)
				answer("0x" + hex.EncodeToString(out))
			default:
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
					"error": map[string]any{"code": -32000, "message": "execution reverted"}})
			}
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPulserouteReadsChainStateOverRPC(t *testing.T) {
	var calls atomic.Int32
	node := fakeRPC(t, &calls)
	ts := startServer(t, func(c *app.Config) {
		c.Quote.PulseRPC = map[uint64]string{369: node.URL, 42161: node.URL}
	})
	var in struct {
		Quote struct {
			BridgeAmount, EstimatedOutput string
			TransactionRequest            struct{ Value string }
		}
	}
	// Direct inbound into PLS: the bridged USDCh is swapped on PulseX,
	// whose quote here is 3×10¹⁶ times the input.
	ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", "native",
		"fromAmount", "1000000000", "fromAddress", wallet, "toAddress", wallet)).decode(t, &in)
	bridged, out := bigOf(t, in.Quote.BridgeAmount), bigOf(t, in.Quote.EstimatedOutput)
	if want := new(big.Int).Mul(bridged, big.NewInt(30_000_000_000_000_000)); out.Cmp(want) != 0 {
		t.Fatalf("estimatedOutput %s, want 3×10¹⁶ × bridged %s (PulseX read on chain)", out, bridged)
	}
	if v := bigOf(t, in.Quote.TransactionRequest.Value); v.Cmp(big.NewInt(300_000_000_000_000)) != 0 {
		t.Fatalf("tx value %s is not the on-chain quoteGasPayment", v)
	}
	if calls.Load() < 2 {
		t.Fatalf("the node saw %d eth_calls", calls.Load())
	}
}
