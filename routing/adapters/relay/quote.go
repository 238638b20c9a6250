package relay

import (
	"context"
	"errors"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// ExactOutputUnsupported is "": Relay sizes the input of an exact output
// itself (tradeType EXACT_OUTPUT).
func (c *Client) ExactOutputUnsupported(*quote.Request) string { return "" }

// RefundToUnsupported is "": Relay takes the refund address as refundTo.
func (c *Client) RefundToUnsupported(*quote.Request) string { return "" }

// QuoteLeg asks Relay for a quote (POST /quote/v2) and maps it to a route
// whose tool is Tool.
func (c *Client) QuoteLeg(ctx context.Context, req *quote.Request, _ string) (*quote.Route, error) {
	return nil, errors.New("relay: not implemented")
}

func isEVMAddress(s string) bool { return len(s) == 42 }
