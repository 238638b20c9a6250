package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/store"
)

// The transaction manager in sandbox mode (single node): its node for
// each sandbox EVM chain is go-ethereum's client over the chain's JSON-RPC
// served in process (sandboxRPC, no socket, the same client code as
// against a real node), and it signs with the operator key the store keeps
// sealed, made at the first start when there is none; the operator's
// account is funded from the faucet at each start. It sends settlement's
// payouts (payouts.go).

// operatorKeyName is the store's name of the operator's EVM key.
const operatorKeyName = "evm"

// sandboxOperatorFunds is what the faucet tops the operator's account up
// with at start, per chain: 10 of the chain's coin, for gas and native
// payouts; tokens paid out come from the account's genesis balances.
var sandboxOperatorFunds = new(big.Int).Mul(big.NewInt(10), big.NewInt(1e18))

// sandboxRPC hands an HTTP request for /rpc/{chainId} to the sandbox
// chains' JSON-RPC without a socket.
type sandboxRPC struct {
	serve func(ctx context.Context, chainID uint64, body []byte) []byte
}

func (t sandboxRPC) RoundTrip(r *http.Request) (*http.Response, error) {
	id, err := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/rpc/"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("sandbox rpc: path %q names no chain", r.URL.Path)
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	out := t.serve(r.Context(), id, body)
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)), Request: r}, nil
}

// startTxm starts the transaction manager in sandbox mode on a single
// node, and hands it the payouts planned while it was down.
func (a *App) startTxm(ctx context.Context, s *startup) error {
	intents, ok := a.stores.Backend().(store.TxIntents)
	if s.cfg.Mode != ModeSandbox || a.chains == nil || !ok {
		return nil
	}
	key, _, err := intents.CreateOperatorKey(ctx, operatorKeyName, mustOperatorKey())
	if err != nil {
		return fmt.Errorf("app: operator key: %w", err)
	}
	signer, err := txm.NewLocalSigner(key)
	if err != nil {
		return fmt.Errorf("app: operator key: %w", err)
	}
	nodes, signs := map[uint64]txm.Node{}, map[uint64]bool{}
	hc := &http.Client{Transport: sandboxRPC{serve: a.chains.JSONRPC}}
	for _, id := range a.chains.ChainIDs() {
		c, err := rpc.DialOptions(ctx, "http://sandbox/rpc/"+strconv.FormatUint(id, 10), rpc.WithHTTPClient(hc))
		if err != nil {
			return fmt.Errorf("app: sandbox node %d: %w", id, err)
		}
		nodes[id], signs[id] = ethclient.NewClient(c), true
		if _, err := a.chains.Faucet(ctx, id, signer.Address(), common.Address{}, sandboxOperatorFunds); err != nil {
			a.log.Warn("the faucet did not fund the operator", slog.Uint64("chain", id), slog.Any("err", err))
		}
	}
	m, err := txm.New(txm.Options{Store: intents, Signer: signer, Nodes: nodes, Confirmations: 1, Logger: a.log})
	if err != nil {
		return fmt.Errorf("app: transaction manager: %w", err)
	}
	a.payouts = newPayoutSender(m, func(id uint64) bool { return signs[id] }, payoutStoreOf(a.stores), a.log)
	if err := m.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("app: start the transaction manager: %w", err)
	}
	a.txm = m
	a.payouts.startPayouts(ctx)
	a.log.Info("transaction manager ready", slog.String("operator", signer.Address().Hex()), slog.Int("chains", len(nodes)))
	return nil
}

// mustOperatorKey is a new operator key, stored only when the store has
// none.
func mustOperatorKey() []byte {
	k, err := txm.NewOperatorKey()
	if err != nil {
		panic(errors.Join(errors.New("app: operator key"), err))
	}
	return k
}
