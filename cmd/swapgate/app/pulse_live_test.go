package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// rpcStandIn is a JSON-RPC node whose contracts answer quoteGasPayment
// with payment and getAmountsOut with 5e16 units out per unit in per hop
// (about PLSX's price against USDCh); it records
// the targets of its calls.
func rpcStandIn(t *testing.T, payment int64, calls *[]string) string {
	t.Helper()
	abi := pulseroute.ABI()
	var mu sync.Mutex // a route's reads arrive at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Params []json.RawMessage `json:"params"`
		}
		var call struct {
			To    string `json:"to"`
			Input string `json:"input"`
			Data  string `json:"data"`
		}
		if err := json.Unmarshal(body, &req); err != nil || len(req.Params) == 0 || json.Unmarshal(req.Params[0], &call) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		in := call.Input
		if in == "" {
			in = call.Data
		}
		data, _ := hexutil.Decode(in)
		mu.Lock()
		*calls = append(*calls, call.To)
		mu.Unlock()
		var out []byte
		if m, err := abi.MethodById(data[:4]); err == nil {
			args, _ := m.Inputs.Unpack(data[4:])
			switch m.Name {
			case pulseroute.MethodQuoteGasPayment:
				out, _ = m.Outputs.Pack(big.NewInt(payment))
			case pulseroute.MethodGetAmountsOut:
				amounts := []*big.Int{args[0].(*big.Int)}
				for range args[1].([]common.Address)[1:] {
					amounts = append(amounts, new(big.Int).Mul(amounts[len(amounts)-1], big.NewInt(5e16)))
				}
				out, _ = m.Outputs.Pack(amounts)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":"`+hexutil.Encode(out)+`"}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// stepOne is an aggregator answering every step 1 with one transaction.
type stepOne struct{ asked *quote.Request }

func (s *stepOne) QuoteLeg(_ context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	s.asked = req
	return &quote.Route{Provider: registry.ProviderAggregator, Tool: "sushiswap", ToolName: "SushiSwap",
		ToAmount: big.NewInt(1_990_000_000), PreFeeToAmount: big.NewInt(1_990_000_000), ApprovalAddress: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE",
		Tx: &quote.TxRequest{To: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE", Data: []byte{1, 2, 3}, Value: new(big.Int), ChainID: req.From.ID, GasLimit: 500_000}}, nil
}

func TestLivePulseroute(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	price := func(chainID uint64, token string) (float64, bool) {
		tok, ok := reg.Token(chainID, token)
		if !ok {
			return 0, false
		}
		p, err := strconv.ParseFloat(tok.PriceUSD, 64)
		return p, err == nil
	}
	gas := func(uint64) (*big.Int, bool) { return big.NewInt(1e8), true }
	sender, receiver := "0x5E4de0000000000000000000000000000000a161", "0x4eCe1e0000000000000000000000000000000A16"
	var pulseCalls, arbCalls []string
	pulseURL, arbURL := rpcStandIn(t, 5e18, &pulseCalls), rpcStandIn(t, 70_000_000_000_000, &arbCalls)
	contracts := PulseContracts{Senders: map[uint64]string{42161: sender}, Receivers: map[uint64]string{42161: receiver}}
	ctx := context.Background()

	t.Run("absent without a node for 369", func(t *testing.T) {
		p, err := livePulseroute(ctx, QuoteConfig{PulseRPC: map[uint64]string{42161: arbURL}, Pulse: contracts}, nil, reg, price, gas, nil)
		if p != nil || err != nil {
			t.Fatalf("provider %v, %v; want none", p, err)
		}
	})
	t.Run("refuses a bad contract address", func(t *testing.T) {
		bad := PulseContracts{Senders: map[uint64]string{56: sender}}
		if _, err := livePulseroute(ctx, QuoteConfig{PulseRPC: map[uint64]string{369: pulseURL}, Pulse: bad}, nil, reg, price, gas, nil); err == nil ||
			!strings.Contains(err.Error(), "chain 56") {
			t.Fatalf("error %v, want the chain without a warp route named", err)
		}
	})

	agg := &stepOne{}
	cfg := QuoteConfig{PulseRPC: map[uint64]string{369: pulseURL}, Pulse: contracts}
	p, err := livePulseroute(ctx, cfg, map[uint64]string{42161: arbURL}, reg, price, gas, agg)
	if err != nil || p == nil {
		t.Fatalf("provider %v, %v", p, err)
	}
	req := func(from uint64, fromSym string, to uint64, toSym string) *quote.Request {
		ft, _ := reg.TokenBySymbol(from, fromSym)
		tt, _ := reg.TokenBySymbol(to, toSym)
		fc, _ := reg.Chain(from)
		tc, _ := reg.Chain(to)
		amount := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ft.Decimals)+3), nil)
		return &quote.Request{ID: "q-app-1", From: fc, To: tc, FromToken: ft, ToToken: tt, FromAmount: amount,
			FromAddress: "0x1111111111111111111111111111111111111111", ToAddress: "0x2222222222222222222222222222222222222222",
			Slippage: 0.005, Now: time.Unix(1_800_000_000, 0)}
	}

	// Direct inbound: the sender contract, the Arbitrum node's payment
	// (read through --evm-rpc), no sandbox tool; without a partner fee one
	// getAmountsOut prices the PulseX leg.
	r, err := p.QuoteLeg(ctx, req(42161, "USDC", 369, "PLSX"), pulseroute.LiveToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tool != "hyperlane-warp" || !strings.EqualFold(r.Tx.To, sender) || r.Tx.Value.Int64() != 70_000_000_000_000 {
		t.Errorf("direct inbound: tool %s, to %s, value %s", r.Tool, r.Tx.To, r.Tx.Value)
	}
	w, _ := pulseroute.DefaultContracts().WarpRoute(42161)
	if len(arbCalls) != 1 || !strings.EqualFold(arbCalls[0], w.Router.Hex()) || len(pulseCalls) != 1 ||
		!strings.EqualFold(pulseCalls[0], pulseroute.PulseXRouterAddress) {
		t.Errorf("reads: Arbitrum %v, PulseChain %v", arbCalls, pulseCalls)
	}
	// Multi-step: step 1 is the aggregator's transaction to the receiver.
	r, err = p.QuoteLeg(ctx, req(42161, "WETH", 369, "PLSX"), pulseroute.LiveToolWarp)
	if err != nil {
		t.Fatal(err)
	}
	if agg.asked == nil || agg.asked.ToAddress != common.HexToAddress(receiver).Hex() ||
		r.MultiStep.Steps[0].TransactionRequest.Data != "0x010203" || r.ApprovalAddress != "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE" {
		t.Errorf("multi-step: asked %+v, step 1 %+v", agg.asked, r.MultiStep.Steps[0])
	}

	// Without an aggregator there is no multi-step route, with the reason.
	p, err = livePulseroute(ctx, cfg, map[uint64]string{42161: arbURL}, reg, price, gas, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.QuoteLeg(ctx, req(42161, "WETH", 369, "PLSX"), pulseroute.LiveToolWarp)
	var nr *quote.NoRoute
	if !errors.As(err, &nr) || !strings.Contains(nr.Message, "not configured") {
		t.Errorf("multi-step without an aggregator: %v", err)
	}
}

// TestPulseRPCEntryWithoutURLIsNoNode: an entry of --pulse-rpc without a
// URL (refused by serve's settings, but a Config built in code may carry
// one) is read alike by the live-upstreams check and by live pulseroute:
// no node, so no upstream and no provider, never a node at an empty URL.
func TestPulseRPCEntryWithoutURLIsNoNode(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	price := func(uint64, string) (float64, bool) { return 1, true }
	gas := func(uint64) (*big.Int, bool) { return big.NewInt(1e8), true }
	for _, rpc := range []map[uint64]string{
		{quote.PulseChainID: ""},
		{quote.PulseChainID: "  "},
		{quote.PulseChainID: "", 42161: ""},
	} {
		c := &Config{Mode: ModeLive, Quote: QuoteConfig{PulseRPC: rpc}}
		if err := CheckLiveUpstreams(c); !errors.Is(err, ErrNoLiveUpstream) {
			t.Errorf("%v: CheckLiveUpstreams = %v, want ErrNoLiveUpstream", rpc, err)
		}
		p, err := livePulseroute(context.Background(), c.Quote, nil, reg, price, gas, nil)
		if p != nil || err != nil {
			t.Errorf("%v: livePulseroute = provider %v, error %v; want no provider, as CheckLiveUpstreams reads it", rpc, p, err)
		}
	}
}
