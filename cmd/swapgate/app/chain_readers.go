package app

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/evmbalance"
	"github.com/swapgate/swapgate/routing/adapters/evmcheck"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// chainReaders are what the edge reads wallets with: GET /v1/balances's
// reader (a node where --evm-rpc names one, the sandbox chain otherwise;
// nil when there is neither) and the quotes' pre-flight checks'
// (walletReader). Both read --evm-rpc's nodes through one client a node,
// dialled here.
func (a *App) chainReaders(ctx context.Context, s *startup) (edge.BalanceReader, edge.WalletReader, error) {
	cfg := s.cfg
	nodes := make(map[uint64]*rpc.Client, len(cfg.EVMRPC))
	for id, url := range cfg.EVMRPC {
		c, err := rpc.DialContext(ctx, url)
		if err != nil {
			return nil, nil, fmt.Errorf("app: --evm-rpc for chain %d: %w", id, err)
		}
		nodes[id] = c
	}
	var balances edge.BalanceReader
	if len(nodes) > 0 || a.sandbox != nil {
		var fallback evmbalance.Source
		if a.sandbox != nil {
			fallback = a.sandbox
		}
		clients := make(map[uint64]evmbalance.Batcher, len(nodes))
		for id, c := range nodes {
			clients[id] = c
		}
		balances = evmbalance.New(s.reg, clients, fallback, cfg.RPCTimeout)
	}
	wallets, err := a.walletReader(ctx, cfg, nodes)
	if err != nil {
		return nil, nil, err
	}
	return balances, wallets, nil
}

// walletReader is what a quote's pre-flight checks read the source chain
// with: --evm-rpc's node where it names one for the chain (one batched
// JSON-RPC request, evmcheck), and in sandbox mode the sandbox chain for
// every other sandbox chain; nil when there is neither (live mode without
// --evm-rpc), so that every EVM quote says checks null and why. A single
// node's sandbox chains are read in place under the chain's lock (one
// consistent read, without the JSON-RPC round trip's ~150 µs and 270
// allocations on every quote); a cluster's, whose chains live in grains on
// other nodes, through their JSON-RPC node, in one batch as a real node's.
func (a *App) walletReader(ctx context.Context, cfg Config, nodes map[uint64]*rpc.Client) (edge.WalletReader, error) {
	clients := make(map[uint64]evmcheck.Batcher, len(nodes))
	var inPlace sandboxWallets
	if cfg.Mode == ModeSandbox {
		if v, ok := a.sandbox.(chainViewer); ok {
			inPlace = sandboxWallets{chains: v, ids: map[uint64]bool{}}
			for _, id := range v.ChainIDs() {
				inPlace.ids[id] = true
			}
		} else if chains, ok := a.sandbox.(jsonRPCChains); ok {
			for _, id := range chains.ChainIDs() {
				c, err := sandboxNode(ctx, chains, id)
				if err != nil {
					return nil, err
				}
				clients[id] = c
			}
		}
	}
	for id, c := range nodes {
		clients[id] = c // a chain's --evm-rpc node before its sandbox one
	}
	if len(clients) == 0 && inPlace.chains == nil {
		return nil, nil
	}
	reader := evmcheck.New(clients, cfg.RPCTimeout)
	if inPlace.chains == nil {
		return reader, nil
	}
	return walletReaders{nodes: reader, sandbox: inPlace}, nil
}

// chainViewer is a single node's sandbox chains, read in place.
type chainViewer interface {
	ChainIDs() []uint64
	View(ctx context.Context, chainID uint64, fn func(*simchain.Chain)) error
}

// sandboxWallets reads a wallet on a sandbox chain in place: what the
// batch of eth_getBalance and the eth_calls of balanceOf and allowance
// answer on its node, read under one lock.
type sandboxWallets struct {
	chains chainViewer
	ids    map[uint64]bool
}

func (w sandboxWallets) ReadWallet(ctx context.Context, q quote.WalletQuery) (quote.WalletState, error) {
	var st quote.WalletState
	err := w.chains.View(ctx, q.ChainID, func(c *simchain.Chain) {
		st.Native = c.Balance(common.Address{}, q.Holder)
		if !q.Native {
			st.Token = c.Balance(q.Token, q.Holder)
			if q.HasSpender {
				st.Allowance = c.Allowance(q.Token, q.Holder, q.Spender)
			}
		}
	})
	if err != nil {
		return quote.WalletState{}, fmt.Errorf("app: sandbox chain %d: %w", q.ChainID, err)
	}
	return st, nil
}

// walletReaders reads a chain through its --evm-rpc node where it has one,
// and through the sandbox chain otherwise.
type walletReaders struct {
	nodes   *evmcheck.Reader
	sandbox sandboxWallets
}

func (r walletReaders) Serves(chainID uint64) bool {
	return r.nodes.Serves(chainID) || r.sandbox.ids[chainID]
}

func (r walletReaders) ReadWallet(ctx context.Context, q quote.WalletQuery) (quote.WalletState, error) {
	if r.nodes.Serves(q.ChainID) {
		return r.nodes.ReadWallet(ctx, q)
	}
	return r.sandbox.ReadWallet(ctx, q)
}
