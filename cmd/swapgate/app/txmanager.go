package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/adapters/evmnode"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/store"
)

// TxConfig is the transaction manager's settings: what signs for the
// operator's account, how deep a transaction must be, when it is replaced
// and up to what fee.
type TxConfig struct {
	// Confirmations is how many blocks, the transaction's own included,
	// make it final (--confirmations; 0: 1 in sandbox mode, 12 in live).
	Confirmations uint64
	// BumpAfter is how long a transaction waits to be mined before it is
	// replaced with both fees 12.5% higher (--tx-bump-after; 30s).
	BumpAfter time.Duration
	// FeeCapGwei is the highest maxFeePerGas per chain in gwei
	// (--tx-fee-cap CHAIN=GWEI). A chain without one has no cap: a stuck
	// transaction is replaced every BumpAfter for as long as it is stuck,
	// and live mode logs each such chain at start.
	FeeCapGwei map[uint64]float64
	// MinBalance is the least native balance, in whole coins, the
	// operator's account should keep on each chain
	// (--operator-min-balance; 0: no warning).
	MinBalance float64
}

// OperatorKeyName is the name the operator's EVM key is stored under.
const OperatorKeyName = "evm"

// DefaultTxBumpAfter is --tx-bump-after's default.
const DefaultTxBumpAfter = 30 * time.Second

// CreateOperatorKey makes the operator's key in stores unless one is
// there, and returns its address (never the
// key) and whether it was made now: what `swapgate operator-key create`
// runs. The key is sealed with the data directory's secrets.key, like
// webhook secrets, and kept in the store so that every node of a cluster
// (which shares secrets.key and the store) signs with it.
func CreateOperatorKey(ctx context.Context, stores *Stores) (common.Address, bool, error) {
	key, err := txm.NewOperatorKey()
	if err != nil {
		return common.Address{}, false, err
	}
	stored, created, err := stores.TxIntents.CreateOperatorKey(ctx, OperatorKeyName, key)
	if err != nil {
		return common.Address{}, false, fmt.Errorf("app: operator key: %w", err)
	}
	s, err := txm.NewLocalSigner(stored)
	if err != nil {
		return common.Address{}, false, err
	}
	return s.Address(), created, nil
}

// operatorSigner is the local key: made on first start in sandbox mode,
// required in live mode (nil, no error, when there is none: the manager
// does not run).
func (a *App) operatorSigner(ctx context.Context, mode string) (txm.Signer, error) {
	// --signer-url: the external signer, and no sealed key is made.
	ext, err := externalSignerFor(ctx, a.cfg.Operator, a.stores.TxIntents)
	if err != nil {
		return nil, err
	}
	if ext != nil {
		a.extSigner = ext
		return ext, nil
	}
	if mode == ModeSandbox {
		if _, _, err := CreateOperatorKey(ctx, a.stores); err != nil {
			return nil, err
		}
	}
	key, err := a.stores.TxIntents.OperatorKey(ctx, OperatorKeyName)
	if errors.Is(err, store.ErrNotFound) {
		a.log.Warn("no operator key: the transaction manager does not run (swapgate operator-key create)")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("app: operator key: %w", err)
	}
	return txm.NewLocalSigner(key)
}

// txNodes is each chain's node: sandbox mode's chains answered in process
// (the same ethclient code as against a real node), live mode's --evm-rpc
// URLs.
func (a *App) txNodes(ctx context.Context, s *startup) (map[uint64]txm.Node, error) {
	nodes := map[uint64]txm.Node{}
	if s.cfg.Mode == ModeSandbox {
		chains, ok := a.sandbox.(jsonRPCChains) // the chains, or a cluster's grains through the Remote
		if !ok {
			return nodes, nil
		}
		for _, id := range chains.ChainIDs() {
			c, err := sandboxNode(ctx, chains, id)
			if err != nil {
				return nil, err
			}
			nodes[id] = evmnode.New(c, s.cfg.RPCTimeout)
		}
		return nodes, nil
	}
	for id, url := range s.cfg.EVMRPC {
		n, err := evmnode.Dial(ctx, id, url, s.cfg.RPCTimeout)
		if err != nil {
			return nil, fmt.Errorf("app: --evm-rpc: %w", err)
		}
		nodes[id] = n
	}
	// Chain 369's node may be named by --pulse-rpc alone: step 2 of a
	// multi-step deposit signs its swap or fallback there.
	if url, ok := pulseNodes(s.cfg.Quote)[quote.PulseChainID]; ok && nodes[quote.PulseChainID] == nil {
		n, err := evmnode.Dial(ctx, quote.PulseChainID, url, s.cfg.RPCTimeout)
		if err != nil {
			return nil, fmt.Errorf("app: --pulse-rpc: %w", err)
		}
		nodes[quote.PulseChainID] = n
	}
	return nodes, nil
}

// jsonRPCChains is the sandbox chains as JSON-RPC nodes.
type jsonRPCChains interface {
	ChainIDs() []uint64
	JSONRPC(ctx context.Context, chainID uint64, body []byte) []byte
}

// sandboxNode is a JSON-RPC client of a sandbox chain's node, its
// requests handed over in process (inProcessNode): the same client code
// as against a real node, without a socket.
func sandboxNode(ctx context.Context, chains jsonRPCChains, id uint64) (*rpc.Client, error) {
	c, err := rpc.DialOptions(ctx, "http://sandbox.invalid/rpc/"+strconv.FormatUint(id, 10),
		rpc.WithHTTPClient(&http.Client{Transport: inProcessNode{chains: chains, id: id}}))
	if err != nil {
		return nil, fmt.Errorf("app: sandbox node %d: %w", id, err)
	}
	return c, nil
}

// inProcessNode hands a JSON-RPC request to the sandbox chains' node
// without a socket.
type inProcessNode struct {
	chains jsonRPCChains
	id     uint64
}

func (p inProcessNode) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := p.chains.JSONRPC(req.Context(), p.id, body)
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(out)), ContentLength: int64(len(out)), Request: req}, nil
}

// txOptions turns the settings into the manager's options. In a cluster
// each account is worked by the node that owns it.
func (a *App) txOptions(cfg Config, signer txm.Signer, nodes map[uint64]txm.Node) txm.Options {
	o := txm.Options{Store: a.stores.TxIntents, Signer: signer, Nodes: nodes, Confirmations: cfg.Tx.Confirmations,
		BumpAfter: cfg.Tx.BumpAfter, FeeCap: map[uint64]*big.Int{}, Logger: a.log}
	if a.node != nil {
		o.Owner = a.node
	}
	if o.Confirmations == 0 {
		o.Confirmations = 1
		if cfg.Mode == ModeLive {
			o.Confirmations = 12
		}
	}
	for id, gwei := range cfg.Tx.FeeCapGwei {
		o.FeeCap[id] = gweiToWei(gwei)
	}
	if cfg.Tx.MinBalance > 0 {
		o.MinBalance = gweiToWei(cfg.Tx.MinBalance * 1e9)
	}
	return o
}

func gweiToWei(gwei float64) *big.Int {
	w, _ := new(big.Float).Mul(big.NewFloat(gwei), big.NewFloat(1e9)).Int(nil)
	return w
}

// fundOperator tops the operator's account up from the faucet on every
// sandbox chain, in the native coin and the registry's USDC, when it holds
// under half its genesis allocation (every sandbox address starts with
// one): ten times that allocation is added. An account at its genesis
// allocation (a first start) is left as it is, so that the chains mine
// nothing the operator did not ask for.
func fundOperator(ctx context.Context, chains *sandboxchain.Service, reg *registry.Registry, op common.Address) error {
	ids := chains.ChainIDs()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		rc, ok := reg.Chain(id)
		if !ok {
			continue
		}
		native, err := sandboxnet.GenesisNative(rc)
		if err != nil {
			return fmt.Errorf("app: fund the operator on chain %d: %w", id, err)
		}
		tokens, allocs := []common.Address{{}}, []*big.Int{native}
		if usdc, ok := reg.TokenBySymbol(id, "USDC"); ok {
			unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(usdc.Decimals)), nil)
			tokens, allocs = append(tokens, common.HexToAddress(usdc.Address)), append(allocs, unit.Mul(unit, big.NewInt(simchain.GenesisTokenUnits)))
		}
		for i, token := range tokens {
			genesis := allocs[i]
			have, err := chains.Balance(ctx, id, op, token)
			if err != nil || have.Cmp(new(big.Int).Div(genesis, big.NewInt(2))) >= 0 {
				continue
			}
			if _, err := chains.Faucet(ctx, id, op, token, new(big.Int).Mul(genesis, big.NewInt(10))); err != nil {
				return fmt.Errorf("app: fund the operator on chain %d: %w", id, err)
			}
		}
	}
	return nil
}
