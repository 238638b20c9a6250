package pulserpc

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// recording is one file of testdata/rpc.
type recording struct {
	ChainID uint64 `json:"chainId"`
	Call    struct {
		To    string `json:"to"`
		Input string `json:"input"`
	} `json:"call"`
	Response json.RawMessage `json:"response"`
}

// rpcNode serves the recordings of one chain as a JSON-RPC node: eth_call
// answers the recording whose call matches, anything else is an error. It
// counts the calls it answered.
type rpcNode struct {
	mu    sync.Mutex
	recs  []recording
	calls int
}

func (n *rpcNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	reply := func(payload string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,`+payload+`}`)
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Method != "eth_call" || len(req.Params) == 0 {
		reply(`"error":{"code":-32601,"message":"unexpected request"}`)
		return
	}
	var call struct {
		To    string `json:"to"`
		Input string `json:"input"`
		Data  string `json:"data"`
	}
	_ = json.Unmarshal(req.Params[0], &call)
	input := call.Input
	if input == "" {
		input = call.Data
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, rec := range n.recs {
		if strings.EqualFold(rec.Call.To, call.To) && strings.EqualFold(rec.Call.Input, input) {
			n.calls++
			resp := strings.TrimSpace(string(rec.Response))
			reply(resp[1 : len(resp)-1]) // the response object's members
			return
		}
	}
	reply(`"error":{"code":-32000,"message":"no recording for this call"}`)
}

// serveRecordings starts one node per chain of the recordings.
func serveRecordings(t *testing.T) (map[uint64]string, map[uint64]*rpcNode) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "rpc", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("recordings: %v", err)
	}
	nodes := map[uint64]*rpcNode{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec recording
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if nodes[rec.ChainID] == nil {
			nodes[rec.ChainID] = &rpcNode{}
		}
		nodes[rec.ChainID].recs = append(nodes[rec.ChainID].recs, rec)
	}
	urls := map[uint64]string{}
	for id, n := range nodes {
		srv := httptest.NewServer(n)
		t.Cleanup(srv.Close)
		urls[id] = srv.URL
	}
	return urls, nodes
}

// TestReaderAgainstRecordedAnswers drives Dial's reader against recorded
// node answers: the warp routes' quoteGasPayment on a source chain and on
// 369, PulseX getAmountsOut and getAmountsIn, reverted paths (no pair, not
// enough in the pool) and a call to an address without code.
func TestReaderAgainstRecordedAnswers(t *testing.T) {
	urls, nodes := serveRecordings(t)
	contracts := pulseroute.DefaultContracts()
	ctx := context.Background()
	chain, err := Dial(ctx, contracts, urls, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	usdch, wpls := contracts.USDCh().Token, contracts.PulseX().WPLS
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	million := big.NewInt(1_000_000)
	wantOut, _ := new(big.Int).SetString("29850000000000000000000", 10)

	tests := []struct {
		name    string
		read    func() ([]*big.Int, error)
		want    []*big.Int
		wantErr func(error) bool
	}{
		{"inbound gas payment on Arbitrum", func() ([]*big.Int, error) {
			v, err := chain.QuoteGasPayment(ctx, 42161, 369)
			return []*big.Int{v}, err
		}, []*big.Int{big.NewInt(70_000_000_000_000)}, nil},
		{"outbound gas payment on 369", func() ([]*big.Int, error) {
			v, err := chain.QuoteGasPayment(ctx, quote.PulseChainID, 42161)
			return []*big.Int{v}, err
		}, []*big.Int{new(big.Int).Mul(big.NewInt(5), big.NewInt(1e18))}, nil},
		{"PulseX USDCh to WPLS", func() ([]*big.Int, error) {
			return chain.AmountsOut(ctx, million, []common.Address{usdch, wpls})
		}, []*big.Int{million, wantOut}, nil},
		{"PulseX backwards, USDCh for 29,850 WPLS", func() ([]*big.Int, error) {
			return chain.AmountsIn(ctx, wantOut, []common.Address{usdch, wpls})
		}, []*big.Int{big.NewInt(1_000_001), wantOut}, nil},
		{"PulseX backwards, more than the pool holds", func() ([]*big.Int, error) {
			return chain.AmountsIn(ctx, new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil), []common.Address{usdch, plsx})
		}, nil, func(err error) bool { return errors.Is(err, pulseroute.ErrNoPair) }},
		{"PulseX path without a pair", func() ([]*big.Int, error) {
			return chain.AmountsOut(ctx, million, []common.Address{usdch, plsx, wpls})
		}, nil, func(err error) bool { return errors.Is(err, pulseroute.ErrNoPair) }},
		{"no node for Base", func() ([]*big.Int, error) {
			v, err := chain.QuoteGasPayment(ctx, 8453, 369)
			return []*big.Int{v}, err
		}, nil, func(err error) bool { return errors.Is(err, pulseroute.ErrNoNode) }},
		{"no contract at the address", func() ([]*big.Int, error) {
			ec, err := ethclient.DialContext(ctx, urls[42161])
			if err != nil {
				return nil, err
			}
			v, err := QuoteGasPayment(ctx, ec, common.HexToAddress("0x000000000000000000000000000000000000dEaD"), 369)
			return []*big.Int{v}, err
		}, nil, func(err error) bool {
			var ae *apierr.Error
			return errors.As(err, &ae) && ae.Code == apierr.RPCFailure
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.read()
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].Cmp(tt.want[i]) != 0 {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	for id, n := range nodes {
		if n.calls != len(n.recs) {
			t.Errorf("chain %d: %d of %d recordings were asked for", id, n.calls, len(n.recs))
		}
	}
}
