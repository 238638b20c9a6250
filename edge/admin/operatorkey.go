package admin

import (
	"context"
	"fmt"

	"github.com/valyala/fasthttp"
)

// pathOperatorKey answers the operator account's address:
// GET /admin/operator-key. The key itself is never served: the listener
// has no route that reads it, and the answer holds only the address.
const pathOperatorKey = "/admin/operator-key"

// OperatorKeyView is what `swapgate operator-key show` prints.
type OperatorKeyView struct {
	Address string `json:"address"`
	// Signer is "sealed" (the key in the store) or "external" (the
	// server signs through --signer-url); the CLI on a store says sealed.
	Signer string `json:"signer"`
}

// RegisterOperatorKey adds the operator's address to s, so that
// `swapgate operator-key show` answers while a server holds the data
// directory. show says which account the server signs with; an error
// wrapping account.ErrNotFound is 404.
func RegisterOperatorKey(s *Server, show func(ctx context.Context) (OperatorKeyView, error)) error {
	return s.Handle(fasthttp.MethodGet, pathOperatorKey, func(ctx *fasthttp.RequestCtx) {
		c, cancel := opContext()
		defer cancel()
		v, err := show(c)
		respond(ctx, fasthttp.StatusOK, v, err)
	})
}

// OperatorKey asks the listener for the operator's address.
func (c *Client) OperatorKey(ctx context.Context) (OperatorKeyView, error) {
	var v OperatorKeyView
	if err := c.Call(ctx, fasthttp.MethodGet, pathOperatorKey, nil, &v); err != nil {
		return v, fmt.Errorf("admin: operator key: %w", err)
	}
	return v, nil
}
