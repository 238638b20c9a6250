package relay

import (
	"context"
	"errors"

	"github.com/swapgate/swapgate/routing/domain/swap"
)

// SwapStatus asks Relay for the status of a swap's request
// (GET /intents/status/v3?requestId=) and maps it onto the swap's
// vocabulary.
func (c *Client) SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error) {
	return swap.Observation{}, errors.New("relay: not implemented")
}
