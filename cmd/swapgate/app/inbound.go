package app

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// inboundChain is what the inbound runner reads of a source chain in
// sandbox mode: a registration's evidence from the chain's node where
// --evm-rpc names one (the sandbox chain otherwise), so that a deposit
// made on a real chain can be registered, and the quote a step-1
// transaction executed, which the sandbox router announces (a deposit
// proven by a node is recorded without a quote or partner). Step 2 is the
// operator's transactions through the transaction manager in both modes
// (stepTransactions, stepNodes).
type inboundChain struct {
	*sandboxchain.Ledger
	evidence *inbound.EvidenceReader
}

var _ inboundrun.Chain = inboundChain{}

// Evidence is what the source chain shows of a step-1 transaction: its
// node's answer where it has one, the sandbox chain's otherwise.
func (c inboundChain) Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (inbound.Evidence, error) {
	return c.evidence.Evidence(ctx, chainID, txHash)
}

// operator is the operator's signer, read once: the first part that needs
// it (the sandbox's inbound receivers, then the transaction manager) makes
// or loads it. Nil, no error, in live mode without a key.
func (s *startup) operator(ctx context.Context, a *App) (txm.Signer, error) {
	if !s.signerRead {
		signer, err := a.operatorSigner(ctx, s.cfg.Mode)
		if err != nil {
			return nil, err
		}
		s.signer, s.signerRead = signer, true
	}
	return s.signer, nil
}

// sandboxReceivers makes, in sandbox mode, the operator's account the
// inbound receiver of every source chain the sandbox carries step 1 on,
// before the quotes and the chains read the contracts: step 1 of a
// sandbox multi-step quote then delivers the USDC to the account whose
// transactions carry step 2, as an operator sets it up in live mode
// (--pulse-inbound-receiver). A chain whose step 1 is read from a node
// (--evm-rpc) keeps the sandbox's default receiver, the address such a
// deposit was made to; its step 2 on the sandbox chains bridges the
// operator's own sandbox USDC.
func (a *App) sandboxReceivers(ctx context.Context, s *startup) error {
	if s.cfg.Mode != ModeSandbox {
		return nil
	}
	signer, err := s.operator(ctx, a)
	if err != nil || signer == nil {
		return err
	}
	receivers := map[uint64]common.Address{}
	for _, id := range s.contracts.SenderChains() {
		if _, fromNode := s.cfg.EVMRPC[id]; !fromNode {
			receivers[id] = signer.Address()
		}
	}
	if s.contracts, err = pulseroute.NewContracts(pulseroute.Config{InboundReceivers: receivers}); err != nil {
		return fmt.Errorf("app: the operator as inbound receiver: %w", err)
	}
	return nil
}

// stepTransactions is the transaction manager as step 2 takes it: nil,
// not a typed nil, when none runs.
func (a *App) stepTransactions() inboundrun.Transactions {
	if a.txm == nil {
		return nil
	}
	return a.txm
}

// stepNode is what step 2 reads of one chain's node; evmnode.Node is one.
type stepNode interface {
	CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error)
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	BlockNumber(ctx context.Context) (uint64, error)
}

// stepNodes are the transaction manager's nodes by chain (the sandbox
// chains' in process, live mode's --evm-rpc and --pulse-rpc), which step 2
// reads; nil when the manager does not run.
type stepNodes map[uint64]stepNode

func newStepNodes(nodes map[uint64]txm.Node) inboundrun.Nodes {
	if len(nodes) == 0 {
		return nil
	}
	out := stepNodes{}
	for id, n := range nodes {
		if sn, ok := n.(stepNode); ok {
			out[id] = sn
		}
	}
	return out
}

var _ inboundrun.Nodes = stepNodes{}

func (n stepNodes) node(chainID uint64) (stepNode, error) {
	if node, ok := n[chainID]; ok {
		return node, nil
	}
	return nil, fmt.Errorf("%w: %d", txm.ErrUnknownChain, chainID)
}

func (n stepNodes) CallContract(ctx context.Context, chainID uint64, msg ethereum.CallMsg) ([]byte, error) {
	node, err := n.node(chainID)
	if err != nil {
		return nil, err
	}
	return node.CallContract(ctx, msg, nil)
}

func (n stepNodes) TransactionReceipt(ctx context.Context, chainID uint64, hash common.Hash) (*types.Receipt, error) {
	node, err := n.node(chainID)
	if err != nil {
		return nil, err
	}
	return node.TransactionReceipt(ctx, hash)
}

func (n stepNodes) FilterLogs(ctx context.Context, chainID uint64, q ethereum.FilterQuery) ([]types.Log, error) {
	node, err := n.node(chainID)
	if err != nil {
		return nil, err
	}
	return node.FilterLogs(ctx, q)
}

func (n stepNodes) BlockNumber(ctx context.Context, chainID uint64) (uint64, error) {
	node, err := n.node(chainID)
	if err != nil {
		return 0, err
	}
	return node.BlockNumber(ctx)
}

// stepPoll paces step 2's reads: the sandbox chains answer in process and
// mine at once; a live node is asked every two seconds.
func stepPoll(cfg Config) time.Duration {
	if cfg.Mode == ModeSandbox {
		return 250 * time.Millisecond
	}
	return 2 * time.Second
}
