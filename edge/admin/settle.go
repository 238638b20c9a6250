package admin

import (
	"context"
	"errors"
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

// SettlementStore is the store a settlement run reads and applies to;
// the store's Settlement is one (both backends). The store decides nothing: the run (Settle)
// reads the ecosystem's pending earnings and the fee wallets, lets
// account.Settlement decide each earning, and hands the decisions back to
// be applied at once.
type SettlementStore interface {
	// FeeWalletsIn returns partner ID → fee wallet address in ecosystem.
	FeeWalletsIn(ctx context.Context, ecosystem string) (map[string]string, error)
	// PendingEarnings calls fn with a copy of the record of every earning
	// pending in ecosystem, stopping at fn's first error.
	PendingEarnings(ctx context.Context, ecosystem string, fn func(*account.Activity) error) error
	// ApplySettlement stores paid records, drops paid and forgotten ones
	// from the pending set and records batch (when it has an ID), all or
	// nothing, durably; a record no longer pending fails it with
	// account.ErrSettlementConflict and nothing applied.
	ApplySettlement(ctx context.Context, ecosystem string, batch *account.SettlementBatch, paid, forgotten []*account.Activity) error
}

// settleAttempts bounds the runs Settle makes when a concurrent run takes
// some of its earnings first: each retry reads again and finds only what
// the other left, so a second attempt is the usual end.
const settleAttempts = 3

// Settle runs a settlement of ecosystem at now (see account.Settlement for
// the rules): it reads the fee wallets registered at this moment and the
// ecosystem's pending earnings, decides each, and applies the decisions in
// one durable batch (paid records rewritten as settled and removed from
// the pending set, stale entries removed, the batch recorded when it paid
// something). A second run finds nothing new. A dry run decides the same
// and writes nothing. When a concurrent run settled some of the earnings
// first, the run is read and decided again, so that two runs at once end
// as two runs one after the other.
func Settle(ctx context.Context, st SettlementStore, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	if !account.ValidID(ecosystem) {
		return nil, invalidf("ecosystem %q is not valid", ecosystem)
	}
	now = now.UTC()
	id, err := account.NewBatchID(now)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		b, err := settleOnce(ctx, st, ecosystem, id, dryRun, now)
		if errors.Is(err, account.ErrSettlementConflict) && attempt < settleAttempts {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("settle %s: %w", ecosystem, err)
		}
		return b, nil
	}
}

// settleOnce reads, decides and applies once.
func settleOnce(ctx context.Context, st SettlementStore, ecosystem, id string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	wallets, err := st.FeeWalletsIn(ctx, ecosystem)
	if err != nil {
		return nil, err
	}
	run := account.NewSettlement(ecosystem, id, now, wallets)
	var paid, forgotten []*account.Activity
	err = st.PendingEarnings(ctx, ecosystem, func(a *account.Activity) error {
		if a.Earning == nil {
			return fmt.Errorf("pending record %s/%s carries no earning", a.PartnerID, a.ID)
		}
		switch run.Decide(a) {
		case account.Pay:
			paid = append(paid, a)
		case account.Forget:
			forgotten = append(forgotten, a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	batch := run.Batch(dryRun)
	if dryRun {
		return batch, nil
	}
	if err := st.ApplySettlement(ctx, ecosystem, batch, paid, forgotten); err != nil {
		return nil, err
	}
	return batch, nil
}

// RegisterSettle adds the settlement endpoint to s, so `swapgate settle` can
// run while a server holds the data directory. now is the clock stamped on
// the batch; nil means time.Now.
func RegisterSettle(s *Server, st SettlementStore, now func() time.Time) error {
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
		b, err := Settle(c, st, eco, dry, now())
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
