package inbound

import (
	"context"
	"errors"

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
// inbound receiver. The same body again returns the same deposit; another
// body for a registered txHash is refused.
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
	if perr != nil {
		return nil, perr
	}
	d, event, err := inbound.NewDeposit(r.opts.Contracts, src, reg, amount, r.opts.Now())
	if err != nil {
		return nil, apierr.From(err)
	}
	rec := &inbound.Record{Deposit: d}
	rec.QuoteID, rec.PartnerID = r.owner(ctx, src, reg.TxHash)
	stored, created, err := r.store.CreateInboundDeposit(ctx, rec, []webhook.Event{event})
	if err != nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "could not record the deposit; retry").Wrap(err)
	}
	if !created {
		if e := inbound.SameRegistration(stored.Deposit.Registration, reg); e != nil {
			return nil, e
		}
		return stored, nil
	}
	r.published(1)
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
