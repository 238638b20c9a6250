package inbound

import (
	"context"
	"errors"
	"math/big"
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
	var min *big.Int
	rec.QuoteID, rec.PartnerID, min = r.owner(ctx, src, reg.TxHash, ev)
	if !awaiting {
		if perr := inbound.CheckMinimum(src, reg, amount, min); perr != nil {
			return nil, perr
		}
	}
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
// executed, and the least USDC that step 1 delivers (the ticket's
// Step1AmountMin, nil when not known): through the quote reference the
// transaction announced (the sandbox router's), or else keccak256 of its
// calldata (ev.CallRef: a live step 1 is the aggregator's transaction,
// found by the calldata the quote gave). "" when the transaction names no
// quote the service issued; such a deposit is accepted on the USDC that
// reached the receiver alone (a quote's index entry can be lost with the
// last moments before a crash, and a user who sent step 1 by other means
// still has USDC to bridge), with no partner to tell.
func (r *Runner) owner(ctx context.Context, chainID uint64, txHash common.Hash, ev inbound.Evidence) (quoteID, partnerID string, min *big.Int) {
	ref, ok, err := r.chain.QuoteRef(ctx, chainID, txHash)
	if err != nil {
		ok = false
	}
	if !ok && ev.CallRef != ([32]byte{}) {
		ref, ok = ev.CallRef, true
	}
	if !ok {
		return "", "", nil
	}
	id, ok := "", false
	if r.opts.PendingRef != nil {
		id, ok = r.opts.PendingRef(ref)
	}
	if !ok {
		if id, err = r.store.QuoteByRef(ctx, ref); err != nil {
			return "", "", nil
		}
	}
	if r.tickets == nil {
		return id, "", nil
	}
	t, err := r.tickets.Ticket(ctx, id)
	if err != nil {
		return id, "", nil
	}
	if m, ok := new(big.Int).SetString(t.Step1AmountMin, 10); ok {
		min = m
	}
	return id, t.PartnerID, min
}

// quoteOf is a deposit's quote and partner, found on confirmation.
type quoteOf struct{ id, partner string }

// takeFound records on rec, the deposit after a step, the quote its
// confirmation found, if any.
func (r *Runner) takeFound(rec *inbound.Record) {
	key := OwnerKey(rec.Deposit.Registration.TxHash.Hex())
	r.mu.Lock()
	q, ok := r.found[key]
	delete(r.found, key)
	r.mu.Unlock()
	if ok {
		rec.QuoteID, rec.PartnerID = q.id, q.partner
	}
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

// step is the update that moves d on, or how long to wait before the next
// try (negative: stop here, the deposit is held). CONFIRMING is the
// registration's (confirm); from RECEIVED on, step 2's (next).
func (r *Runner) step(d *inbound.Record) (inbound.Update, time.Duration) {
	switch {
	case d.Deposit.State == inbound.Confirming:
		return r.confirm(d)
	case r.opts.HoldReceived && d.Deposit.State == inbound.Received:
		return inbound.Update{}, -1
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
	// Confirmed: the quote is found now (a transaction unknown at the
	// registration had no calldata to find it by), and its minimum held.
	id, partner, min := r.owner(ctx, dep.SourceChain, dep.Registration.TxHash, ev)
	if id != "" {
		// Recorded with the step (takeFound), not on d: d stays the
		// record as stored, what a fenced write compares with.
		r.mu.Lock()
		r.found[OwnerKey(dep.Registration.TxHash.Hex())] = quoteOf{id: id, partner: partner}
		r.mu.Unlock()
	}
	if perr := inbound.CheckMinimum(dep.SourceChain, dep.Registration, amount, min); perr != nil {
		return inbound.Update{Trigger: inbound.Refused, At: now, Reason: inbound.ReasonBelowMinimum + ": " + perr.Message}, 0
	}
	return inbound.Update{Trigger: inbound.Confirmed, At: now, AmountIn: amount}, 0
}
