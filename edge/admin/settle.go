package admin

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// pathSettle runs a settlement: POST /admin/settle/{ecosystem}[?dryRun=1].
const pathSettle = "/admin/settle/{ecosystem}"

// settleTimeout bounds one settlement run on the server side; a run touches
// every pending row of an ecosystem, so it gets longer than partner edits.
const settleTimeout = 4 * time.Minute

// Settler runs settlements; *persistence.Store is one.
type Settler interface {
	Settle(ctx context.Context, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error)
}

// RegisterSettle adds the settlement endpoint to s, so `swapgate settle` can
// run while a server holds the data directory. now is the clock stamped on
// the batch; nil means time.Now.
func RegisterSettle(s *Server, st Settler, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	return s.Handle(fasthttp.MethodPost, pathSettle, func(ctx *fasthttp.RequestCtx) {
		eco, _ := ctx.UserValue("ecosystem").(string)
		if !account.ValidID(eco) {
			WriteError(ctx, invalidf("ecosystem %q is not valid", eco))
			return
		}
		dry := string(ctx.QueryArgs().Peek("dryRun")) == "1"
		c, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		b, err := st.Settle(c, eco, dry, now())
		if err != nil {
			WriteError(ctx, err)
			return
		}
		WriteJSON(ctx, fasthttp.StatusOK, b)
	})
}

// Settle runs a settlement through the listener of the process that holds
// the data directory.
func (c *Client) Settle(ctx context.Context, ecosystem string, dryRun bool) (*account.SettlementBatch, error) {
	if !account.ValidID(ecosystem) {
		return nil, invalidf("ecosystem %q is not valid", ecosystem)
	}
	path := "/admin/settle/" + url.PathEscape(ecosystem)
	if dryRun {
		path += "?dryRun=1"
	}
	var b account.SettlementBatch
	if err := c.Call(ctx, fasthttp.MethodPost, path, nil, &b); err != nil {
		return nil, fmt.Errorf("admin: settle %s: %w", ecosystem, err)
	}
	return &b, nil
}
