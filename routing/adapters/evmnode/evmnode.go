// Package evmnode is a chain's node as the transaction manager uses it
// (actors/txm's Node): go-ethereum's ethclient over a JSON-RPC client, each
// call bounded by a timeout so that a node that hangs holds up one round
// of the manager's worker, not the worker. The same client code runs over
// --evm-rpc's URL in live mode and over the sandbox chains' node handed
// requests in process in sandbox mode (the composition root builds that
// rpc.Client).
package evmnode

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// DefaultTimeout bounds one call when New is given none.
const DefaultTimeout = 10 * time.Second

// Node is one chain's node.
type Node struct {
	c       *ethclient.Client
	timeout time.Duration
}

// New wraps a connected JSON-RPC client; timeout (0: DefaultTimeout)
// bounds each call.
func New(c *rpc.Client, timeout time.Duration) *Node {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Node{c: ethclient.NewClient(c), timeout: timeout}
}

// Dial connects to url and checks that the node serves chainID, so that a
// URL given for the wrong chain fails at start rather than signing for
// one chain and sending to another (which EIP-155 would refuse anyway).
func Dial(ctx context.Context, chainID uint64, url string, timeout time.Duration) (*Node, error) {
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("evmnode: chain %d: %w", chainID, err)
	}
	n := New(c, timeout)
	if err := n.Check(ctx, chainID); err != nil {
		c.Close()
		return nil, err
	}
	return n, nil
}

// Check asks the node its chain id and refuses another than chainID.
func (n *Node) Check(ctx context.Context, chainID uint64) error {
	id, err := n.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("evmnode: chain %d: eth_chainId: %w", chainID, err)
	}
	if !id.IsUint64() || id.Uint64() != chainID {
		return fmt.Errorf("evmnode: the node given for chain %d serves chain %s", chainID, id)
	}
	return nil
}

// Close closes the connection.
func (n *Node) Close() { n.c.Close() }

func (n *Node) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, n.timeout)
}

func (n *Node) ChainID(ctx context.Context) (*big.Int, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.ChainID(ctx)
}

func (n *Node) PendingNonceAt(ctx context.Context, account common.Address) (uint64, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.PendingNonceAt(ctx, account)
}

func (n *Node) NonceAt(ctx context.Context, account common.Address, block *big.Int) (uint64, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.NonceAt(ctx, account, block)
}

func (n *Node) HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.HeaderByNumber(ctx, number)
}

func (n *Node) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.SuggestGasTipCap(ctx)
}

func (n *Node) SuggestGasPrice(ctx context.Context) (*big.Int, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.SuggestGasPrice(ctx)
}

func (n *Node) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.SendTransaction(ctx, tx)
}

func (n *Node) TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.TransactionReceipt(ctx, hash)
}

func (n *Node) BlockNumber(ctx context.Context) (uint64, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.BlockNumber(ctx)
}

func (n *Node) BalanceAt(ctx context.Context, account common.Address, block *big.Int) (*big.Int, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.BalanceAt(ctx, account, block)
}

func (n *Node) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.CallContract(ctx, call, block)
}

// FilterLogs is eth_getLogs: the inbound runner finds a warp-route
// message's delivery on chain 369 with it.
func (n *Node) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	return n.c.FilterLogs(ctx, q)
}
