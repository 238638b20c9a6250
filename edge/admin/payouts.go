package admin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/address"
)

// On-chain settlement (see account.Transfer for the model). A run plans
// transfers per partner, chain and token and stores them with their
// earnings out of the pending set in one durable write (PlanPayouts); only
// then does it hand each transfer the manager can sign for to the
// PayoutSender, which stores an intent of the transaction manager keyed by
// the transfer's ID. A kill between the two leaves planned transfers
// without an intent: every run first hands every planned transfer to the
// sender again, which the intent's key makes harmless. So a transfer is
// planned once and sent at most once, whatever is killed when. The
// earnings settle in FinishTransfer, called by the manager's completion
// hook when the intent is confirmed or failed, and by `settle record` for
// a transfer paid by hand.

// PayoutStore is what on-chain settlement reads and writes: the settlement
// run's reads and the transfers (the store's Settlement and Payouts are
// one, both backends).
type PayoutStore interface {
	SettlementStore
	PlanPayouts(ctx context.Context, ecosystem string, batch *account.SettlementBatch, transfers []*account.Transfer, forgotten []*account.Activity) error
	Payout(ctx context.Context, id string) (*account.Transfer, error)
	Payouts(ctx context.Context, ecosystem, state string) ([]*account.Transfer, error)
	FinishPayout(ctx context.Context, t *account.Transfer) error
}

// PayoutSender hands transfers to the transaction manager.
type PayoutSender interface {
	// CanSign reports whether the manager signs transactions on chainID.
	CanSign(chainID uint64) bool
	// SendPayout stores the intent of t's transaction (account.Transfer's
	// Call) under t.ID, or finds it stored: durable when it returns, and
	// never a second intent for one transfer.
	SendPayout(ctx context.Context, t *account.Transfer) error
}

// SettlePayouts runs an on-chain settlement of ecosystem at now: planned
// transfers of earlier runs are handed to send again, the pending earnings
// are planned into transfers (a transfer on a chain send cannot sign on,
// or with send nil, is manual: listed for the operator to pay and record),
// stored, and handed to send. A dry run plans the same and writes nothing.
// The report lists the run's transfers and every failed transfer with its
// reason.
func SettlePayouts(ctx context.Context, st PayoutStore, send PayoutSender, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	if !account.ValidEcosystem(ecosystem) {
		return nil, invalidf("ecosystem %q is not valid", ecosystem)
	}
	now = now.UTC()
	if ecosystem != account.EcosystemEVM {
		send = nil // the manager signs EVM transactions only: every other transfer is manual
	}
	if !dryRun {
		if err := SendPlanned(ctx, st, send, ecosystem); err != nil {
			return nil, fmt.Errorf("settle %s: %w", ecosystem, err)
		}
	}
	// The failed transfers are read before the plan is stored, so that
	// nothing after the store's write can fail the run.
	stored, err := st.Payouts(ctx, ecosystem, account.TransferFailed)
	if err != nil {
		return nil, fmt.Errorf("settle %s: %w", ecosystem, err)
	}
	var failed []account.Transfer
	for _, t := range stored {
		t.Earnings = nil
		failed = append(failed, *t)
	}
	id, err := account.NewBatchID(now)
	if err != nil {
		return nil, err
	}
	var b *account.SettlementBatch
	for attempt := 1; ; attempt++ {
		b, err = planOnce(ctx, st, send, ecosystem, id, dryRun, now)
		if errors.Is(err, account.ErrSettlementConflict) && attempt < settleAttempts {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("settle %s: %w", ecosystem, err)
		}
		break
	}
	if !dryRun && send != nil {
		for i := range b.Transfers {
			if t := &b.Transfers[i]; t.State == account.TransferPlanned {
				if err := send.SendPayout(ctx, t); err != nil {
					return nil, fmt.Errorf("settle %s: send %s (planned; the next run sends it): %w", ecosystem, t.ID, err)
				}
			}
		}
	}
	b.Failed = failed
	return b, nil
}

// SendPlanned hands every planned transfer to send again (see the
// note on kills above): each run does, and the service once its
// transaction manager started, for the transfers planned while it was down.
func SendPlanned(ctx context.Context, st PayoutStore, send PayoutSender, ecosystem string) error {
	if send == nil {
		return nil
	}
	planned, err := st.Payouts(ctx, ecosystem, account.TransferPlanned)
	if err != nil {
		return err
	}
	for _, t := range planned {
		if err := send.SendPayout(ctx, t); err != nil {
			return fmt.Errorf("send %s: %w", t.ID, err)
		}
	}
	return nil
}

func planOnce(ctx context.Context, st PayoutStore, send PayoutSender, ecosystem, id string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	wallets, err := st.FeeWalletsIn(ctx, ecosystem)
	if err != nil {
		return nil, err
	}
	var canSign func(uint64) bool
	if send != nil {
		canSign = send.CanSign
	}
	plan := account.NewPayoutPlan(ecosystem, id, now, wallets, canSign)
	var forgotten []*account.Activity
	err = st.PendingEarnings(ctx, ecosystem, func(a *account.Activity) error {
		if a.Earning == nil {
			return fmt.Errorf("pending record %s/%s carries no earning", a.PartnerID, a.ID)
		}
		d, err := plan.Decide(a)
		if d == account.Forget {
			forgotten = append(forgotten, a)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	b := plan.Batch(dryRun)
	if dryRun {
		return b, nil
	}
	ts := plan.Transfers()
	if err := st.PlanPayouts(ctx, ecosystem, b, ts, forgotten); err != nil {
		return nil, err
	}
	return b, nil
}

// FinishTransfer settles transfer id by txHash (confirmed true) or fails
// it for reason, at now: its earnings settle with it, or return to the
// pending set. Finishing it again the same way is a no-op, so that the
// manager's hook may run more than once.
func FinishTransfer(ctx context.Context, st PayoutStore, id string, confirmed bool, txHash, reason string, now time.Time) (*account.Transfer, error) {
	for attempt := 1; ; attempt++ {
		t, err := st.Payout(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("payout %s: %w", id, err)
		}
		var changed bool
		if confirmed {
			changed, err = t.Settle(txHash, now)
		} else {
			changed, err = t.Fail(reason, now)
		}
		if err != nil || !changed {
			return t, err
		}
		err = st.FinishPayout(ctx, t)
		if err != nil && attempt < settleAttempts && !errors.Is(err, account.ErrNotFound) {
			continue // another finisher came first: read its outcome
		}
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// RecordTransfer settles a manual transfer, paid by the operator, by the
// transaction txHash, checked with the rules of the transfer's ecosystem.
// A transfer the manager sends cannot be recorded by hand.
func RecordTransfer(ctx context.Context, st PayoutStore, id, txHash string, now time.Time) (*account.Transfer, error) {
	if !account.ValidTransferID(id) {
		return nil, invalidf("payout %q is not a payout id", id)
	}
	t, err := st.Payout(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("payout %s: %w", id, err)
	}
	if err := address.ValidateTxID(t.Ecosystem, txHash); err != nil {
		return nil, invalidf("tx %q: %v", txHash, err)
	}
	if t.State == account.TransferPlanned {
		return nil, invalidf("payout %s is sent by the transaction manager; only a manual payout is recorded", id)
	}
	t, err = FinishTransfer(ctx, st, id, true, txHash, "", now)
	if errors.Is(err, account.ErrTransferState) {
		return nil, invalidf("%v", err)
	}
	return t, err
}

// pathPayoutRecord records a manual payout: POST /admin/payouts/{id}/record?tx=HASH.
const pathPayoutRecord = "/admin/payouts/{id}/record"

// RegisterPayouts adds the on-chain settlement endpoints to s: the run
// (replacing RegisterSettle's) and the record of a manual payout. wake
// tells the running manager that intents were stored (nil: nothing to
// tell).
func RegisterPayouts(s *Server, st PayoutStore, send PayoutSender, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	err := s.Handle(fasthttp.MethodPost, pathSettle, func(ctx *fasthttp.RequestCtx) {
		eco, _ := ctx.UserValue("ecosystem").(string)
		if !account.ValidEcosystem(eco) {
			WriteError(ctx, invalidf("ecosystem %q is not valid", eco))
			return
		}
		dry := string(ctx.QueryArgs().Peek("dryRun")) == "1"
		c, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		b, err := SettlePayouts(c, st, send, eco, dry, now())
		if err != nil {
			WriteError(ctx, err)
			return
		}
		WriteJSON(ctx, fasthttp.StatusOK, b)
	})
	if err != nil {
		return err
	}
	return s.Handle(fasthttp.MethodPost, pathPayoutRecord, func(ctx *fasthttp.RequestCtx) {
		id, _ := ctx.UserValue("id").(string)
		c, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		t, err := RecordTransfer(c, st, id, string(ctx.QueryArgs().Peek("tx")), now())
		if err != nil {
			WriteError(ctx, err)
			return
		}
		WriteJSON(ctx, fasthttp.StatusOK, t)
	})
}

// RecordPayout records a manual payout through the listener of the process
// that holds the data directory.
func (c *Client) RecordPayout(ctx context.Context, id, txHash string) (*account.Transfer, error) {
	var t account.Transfer
	path := "/admin/payouts/" + url.PathEscape(id) + "/record?tx=" + url.QueryEscape(txHash)
	if err := c.Call(ctx, fasthttp.MethodPost, path, nil, &t); err != nil {
		return nil, fmt.Errorf("admin: record payout %s: %w", id, err)
	}
	return &t, nil
}
