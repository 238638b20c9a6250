package inbound

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Register checks a registration body and records the deposit: the body
// has exactly the six fields, the signature is the EIP-712 RegisterDeposit
// of fromAddress on the source chain, and the source chain shows txHash as
// a successful transaction from fromAddress that delivered USDC to the
// inbound receiver, in at least Options.Confirmations blocks. A
// transaction the chain does not show yet (unknown to the node, pending)
// or not with its confirmations is not refused: the deposit is recorded in
// CONFIRMING, without an event, and the runner reads the chain again
// (confirm) until the horizon. The same body again returns the same
// deposit; another body for a registered txHash is refused.
func (r *Runner) Register(ctx context.Context, body []byte) (*inbound.Record, *apierr.Error) {
	reg, perr := inbound.Parse(body)
	if perr != nil {
		return nil, perr
	}
	if old, err := r.store.InboundDepositByHash(ctx, reg.TxHash.Hex()); err == nil {
		if e := inbound.SameRegistration(old.Deposit.Registration, reg); e != nil {
			return nil, e
		}
		return old, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, apierr.From(err)
	}
	src, perr := inbound.SourceChain(reg, r.opts.Contracts.SenderChains())
	if perr != nil {
		return nil, perr
	}
	ev, err := r.chain.Evidence(ctx, src, reg.TxHash)
	if err != nil {
		return nil, inbound.ReadFailed(src, err)
	}
	amount, perr := inbound.CheckDeposit(r.opts.Contracts, src, reg, ev)
	_, awaiting := inbound.Awaiting(ev, r.opts.Confirmations)
	if perr != nil && (!awaiting || ev.State == inbound.TxMined || !waitable(perr)) {
		// A mined transaction is judged at once, confirmed or not: what it
		// shows does not change with depth (a reorganisation dropping it
		// leaves it unknown, and the registration fails at its horizon).
		return nil, perr
	}
	var d inbound.Deposit
	var events []webhook.Event
	if awaiting {
		d, err = inbound.NewPendingDeposit(r.opts.Contracts, src, reg, r.opts.Now())
	} else {
		var event webhook.Event
		d, event, err = inbound.NewDeposit(r.opts.Contracts, src, reg, amount, r.opts.Now())
		events = append(events, event)
	}
	if err != nil {
		return nil, apierr.From(err)
	}
	rec := &inbound.Record{Deposit: d}
	rec.QuoteID, rec.PartnerID = r.owner(ctx, src, reg.TxHash)
	stored, created, err := r.store.CreateInboundDeposit(ctx, rec, events)
	if err != nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "could not record the deposit; retry").Wrap(err)
	}
	if !created {
		if e := inbound.SameRegistration(stored.Deposit.Registration, reg); e != nil {
			return nil, e
		}
		return stored, nil
	}
	r.published(len(events))
	r.run(*stored)
	return stored, nil
}

// owner finds the quote (and so the partner) whose step 1 the transaction
// executed, through the quote reference its calldata carried; "" when the
// transaction names no quote the service issued.
func (r *Runner) owner(ctx context.Context, chainID uint64, txHash common.Hash) (quoteID, partnerID string) {
	ref, ok, err := r.chain.QuoteRef(ctx, chainID, txHash)
	if err != nil || !ok {
		return "", ""
	}
	id, ok := "", false
	if r.opts.PendingRef != nil {
		id, ok = r.opts.PendingRef(ref)
	}
	if !ok {
		if id, err = r.store.QuoteByRef(ctx, ref); err != nil {
			return "", ""
		}
	}
	t, err := r.tickets.Ticket(ctx, id)
	if err != nil {
		return id, ""
	}
	return id, t.PartnerID
}

// waitable reports whether a CheckDeposit refusal is one a CONFIRMING
// deposit waits out: the transaction unknown or pending.
func waitable(e *apierr.Error) bool {
	r, _ := e.Details["reason"].(string)
	return r == inbound.ReasonNotFound || r == inbound.ReasonPending
}

// DefaultHorizon bounds how long a CONFIRMING deposit is read again when
// Options.Horizon is unset: the tracker's default horizon.
const DefaultHorizon = 6 * time.Hour

// DefaultConfirmPoll paces the reads of a CONFIRMING deposit's
// transaction.
const DefaultConfirmPoll = 2 * time.Second

// step is the move that carries d on (held: stop here, the deposit is
// held). CONFIRMING is the registration's (confirm); from RECEIVED on,
// step 2's (next, step2.go).
func (r *Runner) step(d *inbound.Record) move {
	switch {
	case d.Deposit.State == inbound.Confirming:
		u, wait := r.confirm(d)
		return move{update: u, wait: wait}
	case r.opts.HoldReceived && d.Deposit.State == inbound.Received:
		return move{held: true}
	}
	return r.next(d)
}

// confirm reads a CONFIRMING deposit's transaction again: confirmed and
// accepted by CheckDeposit → RECEIVED with its amount (deposit.received
// then, not at registration); mined but refused by CheckDeposit (reverted,
// another sender, no USDC to the receiver) → FAILED with the refusal's
// reason; still awaited past the horizon → FAILED, NOT_CONFIRMED. A read
// that fails is tried again at the next poll, up to the horizon.
func (r *Runner) confirm(d *inbound.Record) (inbound.Update, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dep := d.Deposit
	now := r.opts.Now()
	chain := "chain " + strconv.FormatUint(dep.SourceChain, 10)
	expired := !now.Before(dep.CreatedAt.Add(r.opts.Horizon))
	ev, err := r.chain.Evidence(ctx, dep.SourceChain, dep.Registration.TxHash)
	if err != nil {
		r.opts.Logger.Warn("inbound: read a confirming deposit", "txHash", dep.Registration.TxHash.Hex(), "err", err)
		if expired {
			return inbound.Update{Trigger: inbound.Refused, At: now, Reason: inbound.ReasonHorizon +
				": " + chain + " could not be read before the deposit's horizon: " + err.Error()}, 0
		}
		return inbound.Update{}, r.opts.ConfirmPoll
	}
	amount, perr := inbound.CheckDeposit(r.opts.Contracts, dep.SourceChain, dep.Registration, ev)
	reason, awaiting := inbound.Awaiting(ev, r.opts.Confirmations)
	switch {
	case perr != nil && (!awaiting || ev.State == inbound.TxMined || !waitable(perr)):
		why, _ := perr.Details["reason"].(string)
		return inbound.Update{Trigger: inbound.Refused, At: now, Reason: why + ": " + perr.Message}, 0
	case awaiting && expired:
		return inbound.Update{Trigger: inbound.Refused, At: now, Reason: inbound.ReasonHorizon + ": transaction " +
			dep.Registration.TxHash.Hex() + " was not confirmed on " + chain + " before the deposit's horizon (" + reason + ")"}, 0
	case awaiting:
		return inbound.Update{}, r.opts.ConfirmPoll
	}
	return inbound.Update{Trigger: inbound.Confirmed, At: now, AmountIn: amount}, 0
}
