package relay

import (
	"context"
	"errors"

	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Chains fetches Relay's chains (GET /chains) and returns the ids of the
// registry's chains among them that Relay has not disabled, sorted.
func (c *Client) Chains(ctx context.Context) ([]uint64, error) {
	return nil, errors.New("relay: not implemented")
}

// LoadChains fetches the chains and remembers them for Serves and Tools.
func (c *Client) LoadChains(ctx context.Context) error {
	return errors.New("relay: not implemented")
}

// Serves reports whether Relay can carry a swap from one chain to another.
func (c *Client) Serves(fromChain, toChain uint64) bool { return false }

// Tools is Relay's one tool, a bridge on the chains it serves, for the
// catalog.
func (c *Client) Tools() []tools.Tool { return nil }
