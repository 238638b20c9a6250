// Package evmcheck reads what a quote's pre-flight checks need from a
// chain's node over JSON-RPC, in one batched request: eth_getBalance of
// the wallet, and eth_call of the input token's balanceOf(wallet) and
// allowance(wallet, spender) where the input is a token and the route
// names a spender. It reads --evm-rpc's nodes, and in a sandbox cluster
// the sandbox chains' JSON-RPC node handed requests in process (the
// composition root builds those clients; a single node's sandbox chains
// are read in place).
package evmcheck

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Batcher sends several JSON-RPC calls in one request; go-ethereum's
// *rpc.Client is one.
type Batcher interface {
	BatchCallContext(ctx context.Context, b []rpc.BatchElem) error
}

// The ERC-20 selectors read: balanceOf(address), allowance(address,address).
var (
	balanceOfSelector = []byte{0x70, 0xa0, 0x82, 0x31}
	allowanceSelector = []byte{0xdd, 0x62, 0xed, 0x3e}
)

// Reader reads wallets on the chains it has a client for.
type Reader struct {
	clients map[uint64]Batcher
	// timeout bounds each batch (noderead.Bound); the caller's context
	// (the quote's deadline) bounds it too.
	timeout time.Duration
}

// New returns a reader over connected clients, keyed by chain id (the
// --evm-rpc nodes, and in a sandbox cluster the chains' in-process
// nodes); timeout
// (--rpc-timeout; 0: only the caller's deadline) bounds each read.
func New(clients map[uint64]Batcher, timeout time.Duration) *Reader {
	return &Reader{clients: clients, timeout: timeout}
}

// Serves reports whether the reader has a node for chainID.
func (r *Reader) Serves(chainID uint64) bool {
	_, ok := r.clients[chainID]
	return ok
}

// ReadWallet reads q in one batch at the latest block. A call the node
// answered with an error, or a malformed answer, fails the whole read.
func (r *Reader) ReadWallet(ctx context.Context, q quote.WalletQuery) (quote.WalletState, error) {
	c, ok := r.clients[q.ChainID]
	if !ok {
		return quote.WalletState{}, fmt.Errorf("evmcheck: no node for chain %d", q.ChainID)
	}
	var native hexutil.Big
	var balance, allowance hexutil.Bytes
	calls := []rpc.BatchElem{{Method: "eth_getBalance", Args: []any{q.Holder, "latest"}, Result: &native}}
	holder := common.LeftPadBytes(q.Holder.Bytes(), 32)
	call := func(data []byte, out *hexutil.Bytes) rpc.BatchElem {
		return rpc.BatchElem{Method: "eth_call", Args: []any{map[string]any{"to": q.Token, "data": hexutil.Bytes(data)}, "latest"}, Result: out}
	}
	if !q.Native {
		calls = append(calls, call(append(append([]byte{}, balanceOfSelector...), holder...), &balance))
		if q.HasSpender {
			data := append(append(append([]byte{}, allowanceSelector...), holder...), common.LeftPadBytes(q.Spender.Bytes(), 32)...)
			calls = append(calls, call(data, &allowance))
		}
	}
	if err := noderead.Read(ctx, r.timeout, func(ctx context.Context) error { return c.BatchCallContext(ctx, calls) }); err != nil {
		return quote.WalletState{}, fmt.Errorf("evmcheck: chain %d: %w", q.ChainID, err)
	}
	for _, call := range calls {
		if call.Error != nil {
			return quote.WalletState{}, fmt.Errorf("evmcheck: chain %d: %s: %w", q.ChainID, call.Method, call.Error)
		}
	}
	w := quote.WalletState{Native: native.ToInt()}
	var err error
	if !q.Native {
		if w.Token, err = word(balance); err != nil {
			return quote.WalletState{}, fmt.Errorf("evmcheck: chain %d: balanceOf: %w", q.ChainID, err)
		}
		if q.HasSpender {
			if w.Allowance, err = word(allowance); err != nil {
				return quote.WalletState{}, fmt.Errorf("evmcheck: chain %d: allowance: %w", q.ChainID, err)
			}
		}
	}
	return w, nil
}

// word is a uint256 return value: exactly one 32-byte word (a token that
// returns nothing, or more, is not an ERC-20 this can judge).
func word(b []byte) (*big.Int, error) {
	if len(b) != 32 {
		return nil, fmt.Errorf("the call returned %d bytes, not one 32-byte word", len(b))
	}
	return new(big.Int).SetBytes(b), nil
}
