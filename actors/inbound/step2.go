package inbound

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// run carries a deposit's step 2 to a terminal state on its own goroutine,
// working on its own copy of the record, unless it runs already or
// another node owns it; it stops early when the node no longer owns it or
// another node moved it (a clustered runner).
func (r *Runner) run(rec inbound.Record) {
	d := &rec
	hash := d.Deposit.Registration.TxHash.Hex()
	key := OwnerKey(hash)
	if d.Deposit.State.Terminal() || !r.owns(hash) {
		return
	}
	r.mu.Lock()
	if r.running[key] {
		r.mu.Unlock()
		return
	}
	r.running[key] = true
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.running, key)
			r.mu.Unlock()
		}()
		for !d.Deposit.State.Terminal() {
			if !r.owns(hash) {
				return
			}
			u, wait := r.next(d)
			if wait > 0 {
				select {
				case <-r.stop:
					return
				case <-time.After(wait):
				}
				continue
			}
			next, ev, err := d.Deposit.Apply(u)
			if err != nil {
				r.opts.Logger.Error("inbound: step refused", "txHash", d.Deposit.Registration.TxHash.Hex(), "err", err)
				return
			}
			rec := *d
			rec.Deposit = next
			var events []webhook.Event
			if ev != nil {
				events = append(events, *ev)
			}
			if err := r.save(d, &rec, events); err != nil {
				return
			}
			*d = rec
			r.published(len(events))
		}
	}()
}

// save persists a step from prev, the deposit as this runner holds it,
// retrying until it is stored or the runner stops. In a cluster the write
// is fenced by prev, and another node's move (store.ErrStale) stops
// the deposit here: its owner's scan resumes it from the stored state.
func (r *Runner) save(prev, d *inbound.Record, events []webhook.Event) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if r.fenced != nil {
			err = r.fenced.SaveInboundDepositFrom(ctx, prev, d, events)
		} else {
			err = r.store.SaveInboundDeposit(ctx, d, events)
		}
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, store.ErrStale) {
			r.opts.Logger.Info("inbound: deposit moved by another node", "txHash", d.Deposit.Registration.TxHash.Hex())
			return err
		}
		r.opts.Logger.Warn("inbound: save step", "txHash", d.Deposit.Registration.TxHash.Hex(), "err", err)
		select {
		case <-r.stop:
			return err
		case <-time.After(time.Second):
		}
	}
}

// next is the update that moves d on, or how long to wait before the next
// try.
func (r *Runner) next(d *inbound.Record) (inbound.Update, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dep := d.Deposit
	now := r.opts.Now()
	ref := dep.Registration.TxHash.Hex()
	to := dep.Registration.ToAddress.Hex()
	usdch := r.opts.Contracts.USDCh().Token
	switch dep.State {
	case inbound.Received:
		// The inbound receiver's transferRemote to 369; the sandbox names it
		// by the deposit it carries.
		return inbound.Update{Trigger: inbound.BridgeSent, At: now,
			TxHash: crypto.Keccak256Hash([]byte("bridge/" + ref))}, 0
	case inbound.Bridging:
		if wait := dep.UpdatedAt.Add(r.opts.BridgeDelay).Sub(now); wait > 0 {
			return inbound.Update{}, wait
		}
		if r.opts.BridgeFails != nil && r.opts.BridgeFails(ref) {
			// Nothing arrived on 369: the USDC stays where step 1 left it,
			// for an operator, as FAILED promises.
			return inbound.Update{Trigger: inbound.BridgeFailed, At: now,
				Reason: "the bridge to chain 369 did not deliver; the USDC waits on chain " +
					strconv.FormatUint(dep.SourceChain, 10) + " for an operator"}, 0
		}
		if dep.Registration.OutputToken == usdch {
			h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/bridge", to, usdch.Hex(), dep.AmountIn)
			if err != nil {
				return inbound.Update{}, time.Second
			}
			return inbound.Update{Trigger: inbound.Delivered, At: now, TxHash: common.HexToHash(h), AmountOut: dep.AmountIn}, 0
		}
		return inbound.Update{Trigger: inbound.Bridged, At: now}, 0
	case inbound.Swapping:
		out, err := r.swapOut(ctx, dep.AmountIn, usdch, dep.Registration.OutputToken)
		if err != nil {
			return inbound.Update{Trigger: inbound.SwapFailed, At: now, Reason: "the DEX leg on 369 failed: " + err.Error()}, 0
		}
		h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/swap", to, dep.Registration.OutputToken.Hex(), out)
		if err != nil {
			return inbound.Update{}, time.Second
		}
		return inbound.Update{Trigger: inbound.Swapped, At: now, TxHash: common.HexToHash(h), AmountOut: out}, 0
	case inbound.Fallback:
		h, err := r.chain.Deliver(ctx, quote.PulseChainID, ref+"/fallback", to, usdch.Hex(), dep.AmountIn)
		if err != nil {
			return inbound.Update{}, time.Second
		}
		return inbound.Update{Trigger: inbound.Refunded, At: now, TxHash: common.HexToHash(h), AmountOut: dep.AmountIn}, 0
	}
	return inbound.Update{}, time.Second
}

// swapOut prices the DEX leg from USDCh into out on 369: directly, or
// through WPLS (the native coin, the zero address, is WPLS unwrapped).
func (r *Runner) swapOut(ctx context.Context, amount *big.Int, usdch, out common.Address) (*big.Int, error) {
	if r.opts.DEX == nil {
		return nil, errors.New("no DEX on chain 369")
	}
	wpls := r.opts.Contracts.PulseX().WPLS
	target := out
	if out == (common.Address{}) {
		target = wpls
	}
	paths := [][]common.Address{{usdch, target}}
	if target != wpls {
		paths = append(paths, []common.Address{usdch, wpls, target})
	}
	var lastErr error
	for _, p := range paths {
		amounts, err := r.opts.DEX.AmountsOut(ctx, amount, p)
		if err == nil && len(amounts) == len(p) && amounts[len(amounts)-1].Sign() > 0 {
			return amounts[len(amounts)-1], nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = errors.New("no liquidity")
	}
	return nil, lastErr
}
