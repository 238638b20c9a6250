package pulserpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// reservesRecording is one file of testdata/reserves: an eth_call (call)
// or another method's answer.
type reservesRecording struct {
	Method string `json:"method"`
	Source string `json:"source"`
	Call   *struct {
		To    string `json:"to"`
		Input string `json:"input"`
	} `json:"call"`
	Response json.RawMessage `json:"response"`
}

// recordedNode answers JSON-RPC requests, single or batched, from
// recordings, and counts them by eth_call target function (selector) or
// method; anything else is an error.
type recordedNode struct {
	recs  []reservesRecording
	mu    sync.Mutex
	calls map[string]int
}

func (n *recordedNode) answer(raw json.RawMessage) string {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(raw, &req)
	reply := func(payload string) string { return `{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + payload + `}` }
	members := func(resp json.RawMessage) string {
		s := strings.TrimSpace(string(resp))
		return s[1 : len(s)-1]
	}
	var call struct{ To, Input, Data string }
	if req.Method == "eth_call" && len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params[0], &call)
		if call.Input == "" {
			call.Input = call.Data
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, rec := range n.recs {
		switch {
		case rec.Call == nil && rec.Method == req.Method:
			n.calls[req.Method]++
			return reply(members(rec.Response))
		case rec.Call != nil && req.Method == "eth_call" && strings.EqualFold(rec.Call.To, call.To) && strings.EqualFold(rec.Call.Input, call.Input):
			n.calls[call.Input[:10]]++
			return reply(members(rec.Response))
		}
	}
	return reply(`"error":{"code":-32000,"message":"no recording for this call"}`)
}

func (n *recordedNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	if s := strings.TrimSpace(string(body)); strings.HasPrefix(s, "[") {
		var batch []json.RawMessage
		_ = json.Unmarshal(body, &batch)
		out := make([]string, len(batch))
		for i, req := range batch {
			out[i] = n.answer(req)
		}
		_, _ = io.WriteString(w, "["+strings.Join(out, ",")+"]")
		return
	}
	_, _ = io.WriteString(w, n.answer(body))
}

func (n *recordedNode) count(key string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[key]
}

// selector is a function's selector as the recorded node counts it.
func selector(method string) string {
	return hexutil.Encode(pulseroute.ABI().Methods[method].ID)
}

// TestReservesAgainstRecordedAnswers reads a snapshot from recorded node
// answers (testdata/reserves, each file's source says what it stands for:
// the factory's getPair, the pairs' token0 and getReserves, and the
// router's getAmountsOut and getAmountsIn computed from those reserves
// apart from this code) and holds every amount the snapshot prices equal to
// the router's recorded answer: pools whose USDCh is token0 and token1,
// one and two hops, forwards and backwards, and the router's reverts (no
// pair, more than the pool holds) as ErrNoPair. The snapshot costs one
// getPair per pair and one token0 and getReserves per existing pair, and
// no router call; a pair the factory did not answer for is left out of it
// (its paths go to the router) without holding back the others.
func TestReservesAgainstRecordedAnswers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reserves", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("recordings: %v", err)
	}
	node := &recordedNode{calls: map[string]int{}}
	var router []reservesRecording
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec reservesRecording
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if rec.Source == "" {
			t.Errorf("%s names no source", f)
		}
		node.recs = append(node.recs, rec)
		if rec.Call != nil && strings.EqualFold(rec.Call.To, pulseroute.PulseXRouterAddress) {
			router = append(router, rec)
		}
	}
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	contracts := pulseroute.DefaultContracts()
	chain, err := Dial(ctx, contracts, map[uint64]string{quote.PulseChainID: srv.URL}, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	usdch := contracts.USDCh().Token
	wbtc := common.HexToAddress("0xb17D901469B9208B17d916112988A3FeD19b5cA1")
	wanted := []pulseroute.Pair{
		{A: contracts.PulseX().WPLS, B: usdch},
		{A: common.HexToAddress("0xefD766cCb38EaF1dfd701853BFCe31359239F305"), B: usdch}, // DAI
		{A: common.HexToAddress("0x2b591e99afE9f32eAA6214f7B7629768c40Eeb39"), B: usdch}, // HEX: no pair
		// WBTC: the node answers no getPair for it (no recording): the
		// snapshot leaves the pair out, and its paths go to the router.
		{A: wbtc, B: usdch},
	}
	res, err := DialReserves(ctx, srv.URL, contracts, wanted, chain, ReservesConfig{MaxAge: time.Minute, Poll: 5 * time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := res.Start(ctx)
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := res.Age(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot from the recorded answers")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(router) < 8 {
		t.Fatalf("%d router recordings", len(router))
	}
	for _, rec := range router {
		t.Run(rec.Source, func(t *testing.T) {
			method, args, err := pulseroute.Decode(hexutil.MustDecode(rec.Call.Input))
			if err != nil {
				t.Fatal(err)
			}
			amount, path := args[0].(*big.Int), args[1].([]common.Address)
			var got []*big.Int
			switch method {
			case pulseroute.MethodGetAmountsOut:
				got, err = res.AmountsOut(ctx, amount, path)
			case pulseroute.MethodGetAmountsIn:
				got, err = res.AmountsIn(ctx, amount, path)
			default:
				t.Fatalf("router recording of %s", method)
			}
			var resp struct {
				Result hexutil.Bytes
				Error  *struct{ Message string }
			}
			if err := json.Unmarshal(rec.Response, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Error != nil {
				if !errors.Is(err, pulseroute.ErrNoPair) {
					t.Fatalf("the router reverts (%s); from reserves %v, %v", resp.Error.Message, got, err)
				}
				return
			}
			out, uerr := pulseroute.UnpackOutputs(method, resp.Result)
			if uerr != nil {
				t.Fatal(uerr)
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(out[0]) {
				t.Fatalf("from reserves %v, %v; the router answers %v", got, err, out[0])
			}
		})
	}
	if n := res.Fallbacks(); n != 0 {
		t.Errorf("%d fallbacks to the router", n)
	}
	if _, err := res.AmountsOut(ctx, big.NewInt(1_000_000), []common.Address{usdch, wbtc}); err == nil || res.Fallbacks() != 1 {
		t.Errorf("a path through a pair the factory did not answer for: %v, %d fallbacks; want the router's (unrecorded) answer", err, res.Fallbacks())
	}
	stop()
	if n := node.count(selector(pulseroute.MethodGetAmountsOut)) + node.count(selector(pulseroute.MethodGetAmountsIn)); n != 0 {
		t.Errorf("%d router calls with a current snapshot", n)
	}
	for method, want := range map[string]int{pulseroute.MethodGetPair: 3, pulseroute.MethodToken0: 2, pulseroute.MethodGetReserves: 2} {
		if got := node.count(selector(method)); got != want {
			t.Errorf("%d %s calls for one block, want %d", got, method, want)
		}
	}
}
