// Package evmbalance reads an address's balances of a chain's native coin
// and registry tokens from a node over JSON-RPC, in one batched request:
// eth_getBalance for the coin and an eth_call of balanceOf for each token.
package evmbalance

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Batcher sends several JSON-RPC calls in one request; go-ethereum's
// *rpc.Client is one.
type Batcher interface {
	BatchCallContext(ctx context.Context, b []rpc.BatchElem) error
}

// balanceOfSelector is ERC-20 balanceOf(address).
var balanceOfSelector = []byte{0x70, 0xa0, 0x82, 0x31}

// Source lists balances of a chain another way (the sandbox chain).
type Source interface {
	Balances(ctx context.Context, chainID uint64, holder common.Address) ([]evmtx.Balance, error)
}

// Reader reads balances over JSON-RPC on the chains that have a node, and
// from its fallback (the sandbox chain, when it runs) on the others.
type Reader struct {
	reg      *registry.Registry
	clients  map[uint64]Batcher
	fallback Source
	// timeout bounds each chain's batch (noderead.Bound).
	timeout time.Duration
}

// New returns a reader over connected clients, keyed by chain id; fallback
// (nil: none) serves the chains without a node. Each chain's read is
// bounded by timeout (--rpc-timeout; 0: only the caller's deadline), a node
// that does not answer within it being noderead.ErrTimeout.
func New(reg *registry.Registry, clients map[uint64]Batcher, fallback Source, timeout time.Duration) *Reader {
	return &Reader{reg: reg, clients: clients, fallback: fallback, timeout: timeout}
}

// Serves reports whether the reader can list balances of chainID: the
// chain has a node, or a fallback serves every EVM chain.
func (r *Reader) Serves(chainID uint64) bool {
	if _, ok := r.clients[chainID]; ok {
		return true
	}
	c, ok := r.reg.Chain(chainID)
	return r.fallback != nil && ok && c.ChainType == registry.EVM
}

// Balances lists holder's balance of the chain's native coin, then of
// every registry token of the chain, read in one batch at the latest
// block.
func (r *Reader) Balances(ctx context.Context, chainID uint64, holder common.Address) ([]evmtx.Balance, error) {
	c, ok := r.clients[chainID]
	if !ok {
		if r.fallback != nil {
			return r.fallback.Balances(ctx, chainID, holder)
		}
		return nil, fmt.Errorf("%w: no node for chain %d", evmtx.ErrUnknownChain, chainID)
	}
	toks := r.reg.Tokens(chainID)
	native := common.Address{}
	var calls []rpc.BatchElem
	var assets []evmtx.Token
	results := make([]hexutil.Big, 0, len(toks)+1)
	data := make([]hexutil.Bytes, 0, len(toks))
	results = append(results, hexutil.Big{})
	calls = append(calls, rpc.BatchElem{Method: "eth_getBalance", Args: []any{holder, "latest"}, Result: &results[0]})
	for _, t := range toks {
		addr := common.HexToAddress(t.Address)
		tok := evmtx.Token{Address: addr, Symbol: t.Symbol, Name: t.Name, Decimals: t.Decimals}
		if addr == native {
			assets = append([]evmtx.Token{tok}, assets...)
			continue
		}
		assets = append(assets, tok)
	}
	if len(assets) == 0 || assets[0].Address != native {
		return nil, fmt.Errorf("evmbalance: chain %d lists no native coin", chainID)
	}
	for _, t := range assets[1:] {
		data = append(data, nil)
		call := append(append([]byte{}, balanceOfSelector...), common.LeftPadBytes(holder.Bytes(), 32)...)
		calls = append(calls, rpc.BatchElem{Method: "eth_call",
			Args:   []any{map[string]any{"to": t.Address, "data": hexutil.Bytes(call)}, "latest"},
			Result: &data[len(data)-1]})
	}
	if err := noderead.Read(ctx, r.timeout, func(ctx context.Context) error { return c.BatchCallContext(ctx, calls) }); err != nil {
		return nil, fmt.Errorf("evmbalance: chain %d: %w", chainID, err)
	}
	out := make([]evmtx.Balance, len(assets))
	for i, call := range calls {
		if call.Error != nil {
			return nil, fmt.Errorf("evmbalance: chain %d: %s of %s: %w", chainID, call.Method, assets[i].Symbol, call.Error)
		}
		amount := new(big.Int)
		if i == 0 {
			amount = results[0].ToInt()
		} else if b := data[i-1]; len(b) >= 32 {
			amount.SetBytes(b[:32])
		}
		out[i] = evmtx.Balance{Token: assets[i], Amount: amount}
	}
	return out, nil
}
