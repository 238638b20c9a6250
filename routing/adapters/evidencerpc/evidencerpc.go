// Package evidencerpc connects the inbound evidence reader
// (routing/domain/inbound.EvidenceReader) to chains' JSON-RPC nodes: the
// step-1 transaction of a multi-step deposit registration is read, on a
// chain that --evm-rpc names a node for, with go-ethereum's client
// (eth_getTransactionByHash, then eth_getTransactionReceipt), and
// inbound.ReadEvidence maps the answers. The domain declares what it reads
// (inbound.TxReader) and dials nothing; this package is where the
// connections are made and closed.
package evidencerpc

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/swapgate/swapgate/routing/domain/inbound"
)

var _ inbound.TxReader = (*ethclient.Client)(nil)

// Dial connects go-ethereum's client to the JSON-RPC URL of each chain in
// urls (keyed by chain id) and returns the reader over them, each read of
// a registration's evidence bounded by timeout (--rpc-timeout); fallback
// (nil: none) serves the other chains. A URL the client cannot use (an
// unknown scheme) fails the whole dial, naming its chain, with the
// connections made so far closed. The reader's Close closes them all.
func Dial(ctx context.Context, urls map[uint64]string, timeout time.Duration, fallback inbound.EvidenceSource) (*inbound.EvidenceReader, error) {
	nodes := make(map[uint64]inbound.TxReader, len(urls))
	clients := make([]*ethclient.Client, 0, len(urls))
	closeAll := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	for id, url := range urls {
		c, err := ethclient.DialContext(ctx, url)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("evidencerpc: RPC for chain %d: %w", id, err)
		}
		nodes[id] = c
		clients = append(clients, c)
	}
	return inbound.NewEvidenceReader(nodes, fallback, timeout, closeAll), nil
}
