package app

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/evidencerpc"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// sourceTxs serves GET /v1/status's reads of a source chain
// (edge.SourceTxs): a transaction as the chain's reader shows it (the
// --evm-rpc node where one is configured for the chain, the sandbox chain
// otherwise in sandbox mode), and its quote by call reference, from the
// ticket keeper while the quote's ticket awaits its commit and from the
// store's reference index after.
type sourceTxs struct {
	evidence *inbound.EvidenceReader
	// sandbox says the reader falls back to the sandbox chains, which
	// serve every chain without a node.
	sandbox bool
	pending func(ref [32]byte) (string, bool)
	refs    interface {
		QuoteByRef(ctx context.Context, ref [32]byte) (string, error)
	}
}

var _ edge.SourceTxs = sourceTxs{}

// Reads reports whether chainID has a node, or the sandbox chains serve
// it.
func (s sourceTxs) Reads(chainID uint64) bool { return s.sandbox || s.evidence.HasNode(chainID) }

// SourceTx reads hash on chainID.
func (s sourceTxs) SourceTx(ctx context.Context, chainID uint64, hash string) (*swap.SourceTx, bool, error) {
	ev, err := s.evidence.Evidence(ctx, chainID, common.HexToHash(hash))
	if err != nil {
		return nil, false, fmt.Errorf("app: read %s on chain %d: %w", hash, chainID, err)
	}
	switch ev.State {
	case inbound.TxNotFound:
		return nil, false, nil
	case inbound.TxPending:
		return nil, true, nil
	}
	tx := &swap.SourceTx{ChainID: chainID, From: ev.From.Hex(), Value: ev.Value, CallRef: ev.CallRef,
		Reverted: ev.Status != types.ReceiptStatusSuccessful}
	if ev.To != (common.Address{}) {
		tx.To = ev.To.Hex()
	}
	return tx, false, nil
}

// QuoteByCallRef finds the quote whose transaction's calldata hashes to
// ref.
func (s sourceTxs) QuoteByCallRef(ctx context.Context, ref [32]byte) (string, error) {
	if id, ok := s.pending(ref); ok {
		return id, nil
	}
	return s.refs.QuoteByRef(ctx, ref)
}

// statusSources wires GET /v1/status's quoteId and fromChain into deps:
// the chains are read through the inbound registrations' reader, dialled
// here in live mode when the inbound runner did not (no inbound
// receivers); a chain it cannot read (live mode, no --evm-rpc node for
// it) is refused as fromChain, naming it.
func (a *App) statusSources(ctx context.Context, s *startup, deps *edge.Deps) error {
	deps.QuoteSwaps, deps.RetainedTickets, deps.QuoteRetention = a.stores.Swaps, a.quotes.quoter, s.cfg.Quote.QuoteRetention
	if a.evidence == nil && len(s.cfg.EVMRPC) > 0 {
		var err error
		if a.evidence, err = evidencerpc.Dial(ctx, s.cfg.EVMRPC, s.cfg.RPCTimeout, nil); err != nil {
			return fmt.Errorf("app: %w", err)
		}
	}
	if a.evidence != nil {
		deps.SourceTxs = sourceTxs{evidence: a.evidence, sandbox: a.sandbox != nil, pending: a.quotes.tickets.PendingQuoteByRef, refs: a.stores.QuoteRefs}
	}
	return nil
}
