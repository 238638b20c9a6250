package txm_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// The manager is tested against the sandbox chains through go-ethereum's
// ethclient over their JSON-RPC node, handed requests in process: the same
// client code as against a real node.

const chainID = 42161

var (
	loadRegistry = sync.OnceValues(registry.Load)
	recipient    = common.HexToAddress("0x00000000000000000000000000000000000000b0")
	operatorKey  = common.FromHex("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
)

// inProcess hands a JSON-RPC request to the sandbox chains' node without
// a socket.
type inProcess struct {
	chains *sandboxchain.Service
	id     uint64
}

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := p.chains.JSONRPC(req.Context(), p.id, body)
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(out)), ContentLength: int64(len(out)), Request: req}, nil
}

// testWriter logs through t.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// env is a sandbox chain, a store, and the operator funded on the chain.
type env struct {
	t      testing.TB
	ctx    context.Context
	store  *pebblestore.Store
	chains *sandboxchain.Service
	node   *ethclient.Client
	signer *txm.LocalSigner
	// base is the recipient's balance before the test (a genesis
	// allocation).
	base *big.Int
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	reg, err := loadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	chains, _, err := sandboxchain.Start(ctx, reg, st, sandboxchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chains.Close)
	c, err := rpc.DialOptions(ctx, "http://sandbox.invalid/", rpc.WithHTTPClient(&http.Client{Transport: inProcess{chains, chainID}}))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := txm.NewLocalSigner(operatorKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chains.Faucet(ctx, chainID, signer.Address(), common.Address{}, big.NewInt(1e18)); err != nil {
		t.Fatal(err)
	}
	base, err := chains.Balance(ctx, chainID, recipient, common.Address{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, store: st, chains: chains, node: ethclient.NewClient(c), signer: signer, base: base}
}

func (e *env) options(node txm.Node, st txm.Store) txm.Options {
	return txm.Options{Store: st, Signer: e.signer, Nodes: map[uint64]txm.Node{chainID: node},
		Confirmations: 1, BumpAfter: time.Hour, Poll: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(testWriter{e.t}, nil))}
}

func (e *env) start(o txm.Options) *txm.Manager {
	e.t.Helper()
	m, err := txm.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := m.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(m.Stop)
	return m
}

func pay(key string, wei int64) txintent.Request {
	return txintent.Request{Purpose: "payout", Key: key, ChainID: chainID, To: recipient, Value: big.NewInt(wei), GasLimit: 21_000}
}

// waitFinal waits until every intent with keys is final and returns them.
func (e *env) waitFinal(keys ...string) []*txintent.Intent {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out []*txintent.Intent
		for _, k := range keys {
			in, err := e.store.TxIntentByKey(e.ctx, k)
			if err != nil || !in.Final() {
				break
			}
			out = append(out, in)
		}
		if len(out) == len(keys) {
			return out
		}
		if time.Now().After(deadline) {
			for _, k := range keys {
				in, err := e.store.TxIntentByKey(e.ctx, k)
				e.t.Logf("%s: %+v %v", k, in, err)
			}
			e.t.Fatal("the intents did not become final")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// balance is what the recipient received during the test, in wei.
func (e *env) balance() int64 {
	e.t.Helper()
	b, err := e.chains.Balance(e.ctx, chainID, recipient, common.Address{})
	if err != nil {
		e.t.Fatal(err)
	}
	return new(big.Int).Sub(b, e.base).Int64()
}

// minedOnce checks that exactly one of each intent's transactions is on
// the chain, successful, and the one the intent records; and that the
// operator's account sent nothing else.
func (e *env) minedOnce(ins []*txintent.Intent) {
	e.t.Helper()
	for _, in := range ins {
		if in.State != txintent.Confirmed {
			e.t.Errorf("%s (%s) is %s: %s", in.ID, in.Key, in.State, in.Reason)
			continue
		}
		mined := 0
		for _, tx := range in.Txs {
			r, err := e.node.TransactionReceipt(e.ctx, common.HexToHash(tx.Hash))
			if err == nil && r != nil {
				mined++
				if r.Status != 1 || in.MinedTx() == nil || in.MinedTx().Hash != tx.Hash {
					e.t.Errorf("%s: mined %s (status %d), recorded %+v", in.Key, tx.Hash, r.Status, in.MinedTx())
				}
			}
		}
		if mined != 1 {
			e.t.Errorf("%s: %d of its %d transactions mined", in.Key, mined, len(in.Txs))
		}
	}
	n, err := e.node.NonceAt(e.ctx, e.signer.Address(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if n != uint64(len(ins)) {
		e.t.Errorf("the operator's account sent %d transactions for %d intents", n, len(ins))
	}
}
