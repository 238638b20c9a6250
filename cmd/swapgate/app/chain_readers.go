package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/evmbalance"
	"github.com/swapgate/swapgate/routing/adapters/evmcheck"
)

// chainReaders are what the edge reads wallets with: GET /v1/balances's
// reader (a node where --evm-rpc names one, the sandbox chain otherwise;
// nil when there is neither) and the quotes' pre-flight checks'
// (walletReader).
func (a *App) chainReaders(ctx context.Context, s *startup) (edge.BalanceReader, edge.WalletReader, error) {
	cfg := s.cfg
	var balances edge.BalanceReader
	if len(cfg.EVMRPC) > 0 || a.sandbox != nil {
		var fallback evmbalance.Source
		if a.sandbox != nil {
			fallback = a.sandbox
		}
		var err error
		if balances, err = evmbalance.Dial(ctx, s.reg, cfg.EVMRPC, cfg.RPCTimeout, fallback); err != nil {
			return nil, nil, fmt.Errorf("app: %w", err)
		}
	}
	wallets, err := a.walletReader(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return balances, wallets, nil
}

// walletReader is what a quote's pre-flight checks read the source chain
// with: --evm-rpc's node where it names one for the chain, and in sandbox
// mode the sandbox chain's node, handed requests in process, for every
// other sandbox chain; nil when there is neither (live mode without
// --evm-rpc), so that every EVM quote says checks null and why.
func (a *App) walletReader(ctx context.Context, cfg Config) (edge.WalletReader, error) {
	sandbox := map[uint64]evmcheck.Batcher{}
	if chains, ok := a.sandbox.(jsonRPCChains); ok && cfg.Mode == ModeSandbox {
		for _, id := range chains.ChainIDs() {
			c, err := rpc.DialOptions(ctx, "http://sandbox.invalid/rpc/"+strconv.FormatUint(id, 10),
				rpc.WithHTTPClient(&http.Client{Transport: inProcessNode{chains: chains, id: id}}))
			if err != nil {
				return nil, fmt.Errorf("app: sandbox node %d: %w", id, err)
			}
			sandbox[id] = c
		}
	}
	if len(cfg.EVMRPC) == 0 && len(sandbox) == 0 {
		return nil, nil
	}
	r, err := evmcheck.Dial(ctx, cfg.EVMRPC, sandbox, cfg.RPCTimeout)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	return r, nil
}
