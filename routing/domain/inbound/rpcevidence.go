package inbound

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// TxReader reads a transaction and its receipt from one chain's node, with
// go-ethereum's client's meaning of each answer (ethereum.NotFound for a
// hash the node does not know); *ethclient.Client is one. The domain dials
// nothing: the service's readers are connected by the adapter
// routing/adapters/evidencerpc, and the domain's tests read fakes.
type TxReader interface {
	TransactionByHash(ctx context.Context, hash common.Hash) (tx *types.Transaction, isPending bool, err error)
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	// BlockNumber is the chain's latest block, read after the receipt to
	// count its confirmations.
	BlockNumber(ctx context.Context) (uint64, error)
}

// ReadEvidence reads what chainID's node shows of txHash, as the Evidence
// doc comment maps ethclient's answers: unknown, pending, or mined with the
// sender recovered from the signature (not the node's "from", which a
// faulty node could state wrongly) and the receipt's status, block and
// logs. An error is a read that failed; the caller makes it ReadFailed. A
// node that answers for another transaction than txHash, or with a
// transaction signed for another chain than chainID (a URL configured for
// the wrong chain), has failed too: its answer must not register a deposit.
func ReadEvidence(ctx context.Context, node TxReader, chainID uint64, txHash common.Hash) (Evidence, error) {
	tx, pending, err := node.TransactionByHash(ctx, txHash)
	switch {
	case errors.Is(err, ethereum.NotFound):
		return Evidence{ChainID: chainID}, nil
	case err != nil:
		return Evidence{}, fmt.Errorf("inbound: chain %d: transaction %s: %w", chainID, txHash.Hex(), err)
	case tx == nil:
		return Evidence{}, fmt.Errorf("inbound: chain %d: transaction %s: the node answered no transaction and no error", chainID, txHash.Hex())
	case tx.Hash() != txHash:
		return Evidence{}, fmt.Errorf("inbound: chain %d: asked for transaction %s, the node answered %s", chainID, txHash.Hex(), tx.Hash().Hex())
	case tx.Protected() && tx.ChainId().Cmp(new(big.Int).SetUint64(chainID)) != 0:
		return Evidence{}, fmt.Errorf("inbound: chain %d: transaction %s is signed for chain %s: the node serves another chain", chainID, txHash.Hex(), tx.ChainId())
	case pending:
		return Evidence{ChainID: chainID, State: TxPending}, nil
	}
	// The signer of the chain read: a protected transaction is signed for
	// it (checked above), and an unprotected legacy one (pre-EIP-155, which
	// carries no chain id) has its sender recovered by Homestead's rules
	// by the same signer. The transaction's own chain id, 0 for the latter,
	// would make go-ethereum panic.
	if chainID == 0 {
		return Evidence{}, fmt.Errorf("inbound: transaction %s: no chain id to recover its sender with", txHash.Hex())
	}
	from, err := types.Sender(types.LatestSignerForChainID(new(big.Int).SetUint64(chainID)), tx)
	if err != nil {
		return Evidence{}, fmt.Errorf("inbound: chain %d: sender of transaction %s: %w", chainID, txHash.Hex(), err)
	}
	r, err := node.TransactionReceipt(ctx, txHash)
	if err != nil {
		// NotFound included: the node has the transaction in a block, so a
		// missing receipt is the node lagging, worth a retry, not a refusal.
		return Evidence{}, fmt.Errorf("inbound: chain %d: receipt of %s: %w", chainID, txHash.Hex(), err)
	}
	if r == nil || r.TxHash != txHash || r.BlockNumber == nil {
		return Evidence{}, fmt.Errorf("inbound: chain %d: receipt of %s: the node answered an incomplete or another transaction's receipt", chainID, txHash.Hex())
	}
	head, err := node.BlockNumber(ctx)
	if err != nil {
		return Evidence{}, fmt.Errorf("inbound: chain %d: latest block: %w", chainID, err)
	}
	ev := Mined(chainID, from, r.Status, r.BlockNumber.Uint64(), r.Logs)
	ev.Head = head
	ev.CallRef = quote.CallRef(tx.Data())
	if to := tx.To(); to != nil {
		ev.To = *to
	}
	ev.Value = tx.Value()
	return ev, nil
}

// EvidenceSource reads evidence another way than a node: the sandbox
// chain's ledger (actors/sandboxchain) is one.
type EvidenceSource interface {
	Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (Evidence, error)
}

// EvidenceReader reads a registration's evidence from the node of each
// chain that has one configured, and from its fallback (the sandbox chain)
// on the others, so that a deployment can check deposits on real chains
// while the rest of the network stays simulated. It is immutable after
// construction and safe for concurrent use.
type EvidenceReader struct {
	nodes    map[uint64]TxReader
	fallback EvidenceSource
	release  func()
	// timeout bounds each read from a node (noderead.Bound).
	timeout time.Duration
}

// NewEvidenceReader returns a reader over connected nodes, keyed by chain
// id, each read from a node bounded by timeout (--rpc-timeout; zero: the
// caller's deadline only); fallback (nil: none) serves the chains without
// a node. release (nil: nothing) is what Close calls: the adapter that
// connected the nodes (evidencerpc.Dial) passes the closing of its
// connections.
func NewEvidenceReader(nodes map[uint64]TxReader, fallback EvidenceSource, timeout time.Duration, release func()) *EvidenceReader {
	return &EvidenceReader{nodes: nodes, fallback: fallback, timeout: timeout, release: release}
}

// HasNode reports whether chainID's evidence is read from a node.
func (r *EvidenceReader) HasNode(chainID uint64) bool {
	_, ok := r.nodes[chainID]
	return ok
}

// Evidence is what chainID shows of txHash: its node's answer when it has
// one, read under the reader's timeout, the fallback's otherwise. A chain
// that neither serves cannot be read, an error (RPC_FAILURE once the
// caller makes it ReadFailed), not a transaction "not found" that would
// tell the client its hash is wrong; a node that does not answer in time
// is noderead.ErrTimeout (UPSTREAM_TIMEOUT once made ReadFailed).
func (r *EvidenceReader) Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (Evidence, error) {
	if node, ok := r.nodes[chainID]; ok {
		var ev Evidence
		err := noderead.Read(ctx, r.timeout, func(ctx context.Context) (err error) {
			ev, err = ReadEvidence(ctx, node, chainID, txHash)
			return err
		})
		return ev, err
	}
	if r.fallback == nil {
		return Evidence{}, fmt.Errorf("inbound: no node for chain %d", chainID)
	}
	return r.fallback.Evidence(ctx, chainID, txHash)
}

// Close releases the nodes' connections (the release NewEvidenceReader
// was given).
func (r *EvidenceReader) Close() {
	if r.release != nil {
		r.release()
	}
}
