package app

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/routing/domain/inbound"
)

// inboundChain is what the inbound runner reads and does in sandbox mode:
// the sandbox chains' ledger, except for a registration's evidence, which
// comes from the chain's node where --evm-rpc names one (the sandbox chain
// otherwise), so that a deposit made on a real chain can be registered.
// Step 2 (the bridge, the DEX leg and the deliveries on 369) stays on the
// sandbox chain. So does the quote a step-1 transaction executed, which
// the sandbox router announces: a deposit proven by a node is recorded
// without a quote or partner.
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
