package evmcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

var (
	holder  = common.HexToAddress("0x8ba1f109551bD432803012645Ac136ddd64DBA72")
	token   = common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	spender = common.HexToAddress("0x1111111111111111111111111111111111111111")
)

// node is a JSON-RPC node taking only batches: the coin balance 42, the
// token balance 7 and the allowance 3 (each checked for its arguments),
// or, with fail set, an error for the allowance. It records each batch's
// methods.
type node struct {
	mu      sync.Mutex
	batches [][]string
	fail    bool
	short   bool // the allowance answered with fewer than 32 bytes
}

func (n *node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var reqs []struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&reqs); err != nil {
		http.Error(w, "batch expected", http.StatusBadRequest)
		return
	}
	var methods []string
	out := make([]map[string]any, 0, len(reqs))
	for _, q := range reqs {
		res := map[string]any{"jsonrpc": "2.0", "id": q.ID}
		methods = append(methods, q.Method)
		switch q.Method {
		case "eth_getBalance":
			var who string
			_ = json.Unmarshal(q.Params[0], &who)
			if strings.EqualFold(who, holder.Hex()) {
				res["result"] = "0x2a"
			}
		case "eth_call":
			var call struct{ To, Data, Input string }
			_ = json.Unmarshal(q.Params[0], &call)
			data := strings.ToLower(call.Data + call.Input)
			h, s := strings.ToLower(holder.Hex()[2:]), strings.ToLower(spender.Hex()[2:])
			switch {
			case !strings.EqualFold(call.To, token.Hex()):
			case data == "0x70a08231"+strings.Repeat("0", 24)+h:
				res["result"] = fmt.Sprintf("0x%064x", 7)
			case data == "0xdd62ed3e"+strings.Repeat("0", 24)+h+strings.Repeat("0", 24)+s && n.fail:
				res["error"] = map[string]any{"code": 3, "message": "execution reverted"}
			case data == "0xdd62ed3e"+strings.Repeat("0", 24)+h+strings.Repeat("0", 24)+s && n.short:
				res["result"] = "0x03"
			case data == "0xdd62ed3e"+strings.Repeat("0", 24)+h+strings.Repeat("0", 24)+s:
				res["result"] = fmt.Sprintf("0x%064x", 3)
			}
		}
		if res["result"] == nil && res["error"] == nil {
			res["error"] = map[string]any{"code": -32602, "message": "unexpected call " + q.Method + " " + string(q.Params[0])}
		}
		out = append(out, res)
	}
	n.mu.Lock()
	n.batches = append(n.batches, methods)
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// TestReadWalletInOneBatch: a token input with a spender is read as one
// batch of eth_getBalance and two eth_calls; a native input as one
// eth_getBalance; a call the node refuses, or an answer that is not one
// word, fails the read; a chain without a node is refused unread.
func TestReadWalletInOneBatch(t *testing.T) {
	n := &node{}
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	r := New(map[uint64]Batcher{42161: dial(t, srv.URL)}, time.Second)
	ctx := context.Background()
	w, err := r.ReadWallet(ctx, quote.WalletQuery{ChainID: 42161, Holder: holder, Token: token, HasSpender: true, Spender: spender})
	if err != nil || w.Native.Int64() != 42 || w.Token.Int64() != 7 || w.Allowance.Int64() != 3 {
		t.Fatalf("token read: %+v %v", w, err)
	}
	w, err = r.ReadWallet(ctx, quote.WalletQuery{ChainID: 42161, Holder: holder, Native: true})
	if err != nil || w.Native.Int64() != 42 || w.Token != nil || w.Allowance != nil {
		t.Fatalf("native read: %+v %v", w, err)
	}
	if got := fmt.Sprint(n.batches); got != "[[eth_getBalance eth_call eth_call] [eth_getBalance]]" {
		t.Fatalf("batches %s", got)
	}
	n.fail = true
	if _, err := r.ReadWallet(ctx, quote.WalletQuery{ChainID: 42161, Holder: holder, Token: token, HasSpender: true, Spender: spender}); err == nil ||
		!strings.Contains(err.Error(), "execution reverted") {
		t.Fatalf("a refused call: %v", err)
	}
	n.fail, n.short = false, true
	if _, err := r.ReadWallet(ctx, quote.WalletQuery{ChainID: 42161, Holder: holder, Token: token, HasSpender: true, Spender: spender}); err == nil ||
		!strings.Contains(err.Error(), "allowance") {
		t.Fatalf("a short answer: %v", err)
	}
	if r.Serves(1) || !r.Serves(42161) {
		t.Fatal("Serves")
	}
	if _, err := r.ReadWallet(ctx, quote.WalletQuery{ChainID: 1, Holder: holder, Native: true}); err == nil {
		t.Fatal("read a chain without a node")
	}
}

// TestReadWalletTimeout: a node that never answers ends the read at the
// reader's timeout as noderead.ErrTimeout.
func TestReadWalletTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	r := New(map[uint64]Batcher{1: dial(t, srv.URL)}, 50*time.Millisecond)
	if _, err := r.ReadWallet(context.Background(), quote.WalletQuery{ChainID: 1, Holder: holder, Native: true}); !errors.Is(err, noderead.ErrTimeout) {
		t.Fatalf("read from a silent node: %v", err)
	}
}

// dial connects to a test node.
func dial(t *testing.T, url string) *rpc.Client {
	t.Helper()
	c, err := rpc.DialContext(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
