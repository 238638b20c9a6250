package inbound

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/store"
)

// Step 2 is transactions of the operator's account, each an intent of the
// transaction manager keyed by the deposit and the step
// (inbound.IntentKey): one intent per key ever, so that however often the
// service is killed and restarted, each step is sent at most once. The
// deposit's record names each step's intent as soon as it is submitted and
// its hash once mined; a step whose intent is not named is looked up by
// its key before anything is decided, and every state is saved before the
// next step's intent is submitted. The steps:
//
//   - RECEIVED, on the source chain: approve(warp router) on USDC when the
//     operator account's allowance is short of the deposit, then
//     transferRemote(369, operator account, amountIn) on the warp router
//     with msg.value its quoteGasPayment(369), read from the node just
//     before. Mined: BRIDGING, with the message id of its DispatchId log
//     and 369's block number then. Reverted: FAILED with the node's
//     reason; the USDC stays with the operator account.
//   - BRIDGING: the delivery on 369 is the ProcessId(messageId) log
//     (eth_getLogs from that block on): then SWAPPING, or for outputToken
//     USDCh a USDCh transfer(toAddress, amountIn), COMPLETED. No delivery
//     within BridgeHorizon: FAILED.
//   - SWAPPING: the minimum output (the quote's toAmountMin; see minimum)
//     checked again with the PulseX router's getAmountsOut just before;
//     short: FALLBACK without swapping. Else approve(PulseX router) on
//     USDCh when short, and swapExactTokensForTokens along [USDCh,
//     outputToken] (swapExactTokensForETH along [USDCh, WPLS] for the
//     native coin) with amountOutMin the minimum, to toAddress, deadline
//     SwapDeadline ahead. Confirmed: COMPLETED with the amount of the
//     receipt's last Swap log; reverted or failed: FALLBACK.
//   - FALLBACK: USDCh transfer(toAddress, amountIn): REFUNDED_USDCH;
//     failed: FAILED.
//
// An approval is of the largest amount (2^256-1), not of the deposit:
// deposits run concurrently, and an approval of one deposit's amount would
// overwrite another's before its transferRemote or swap spent it.

// Transactions is the transaction manager as step 2 uses it; *txm.Manager
// is one.
type Transactions interface {
	Submit(ctx context.Context, r txintent.Request) (*txintent.Intent, error)
	Intent(ctx context.Context, id string) (*txintent.Intent, error)
	// IntentByKey is the intent submitted under key, or store.ErrNotFound.
	IntentByKey(ctx context.Context, key string) (*txintent.Intent, error)
	// Account is the operator's address on a chain, which signs step 2.
	Account(chainID uint64) common.Address
}

// Nodes reads the chains step 2 moves funds on (the source chains' nodes
// and 369's), each call by chain id.
type Nodes interface {
	CallContract(ctx context.Context, chainID uint64, msg ethereum.CallMsg) ([]byte, error)
	TransactionReceipt(ctx context.Context, chainID uint64, hash common.Hash) (*types.Receipt, error)
	FilterLogs(ctx context.Context, chainID uint64, q ethereum.FilterQuery) ([]types.Log, error)
	BlockNumber(ctx context.Context, chainID uint64) (uint64, error)
}

// Gas limits of step 2's transactions: generous over what the contracts
// use (an ERC-20 approve or transfer about 50k, transferRemote about 200k
// with the mailbox's dispatch, a PulseX swap about 120k a hop); the
// operator pays only what is used.
const (
	gasApprove        = 120_000
	gasTransfer       = 120_000
	gasTransferRemote = 500_000
	gasSwapPerHop     = 250_000
)

// Defaults of step 2's options.
const (
	DefaultPoll          = time.Second
	DefaultBridgeHorizon = 2 * time.Hour
	DefaultSwapDeadline  = 10 * time.Minute
	// DefaultSlippageBps is the minimum's margin under getAmountsOut for a
	// deposit without a known quote.
	DefaultSlippageBps = 50
)

// maxAllowance is an approval of everything (2^256-1).
var maxAllowance = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// intent purposes, by which the transaction manager's hooks and tx list
// tell step 2's transactions apart.
const purposePrefix = "inbound."

// refusal is a step that cannot be made, for a reason the deposit
// records (the machine's failure trigger of its state).
type refusal struct{ reason string }

func (e refusal) Error() string { return e.reason }

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
			m := r.step(d)
			if m.held {
				return // held (Options.HoldReceived)
			}
			if m.wait > 0 {
				select {
				case <-r.stop:
					return
				case <-time.After(m.wait):
				}
				continue
			}
			rec := *d
			var events []webhook.Event
			if m.progress != nil {
				rec.Deposit = *m.progress
			} else {
				next, ev, err := d.Deposit.Apply(m.update)
				if err != nil {
					r.opts.Logger.Error("inbound: step refused", "txHash", hash, "err", err)
					return
				}
				rec.Deposit = next
				r.takeFound(&rec)
				if ev != nil {
					events = append(events, *ev)
				}
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

// move is what next found: a transition, the record with a step's
// transaction named (progress, saved without an event), or a wait.
type move struct {
	update   inbound.Update
	progress *inbound.Deposit
	wait     time.Duration
	held     bool
}

func (r *Runner) waitMove() move { return move{wait: r.opts.Poll} }

// next is the move that carries d on from its state.
func (r *Runner) next(d *inbound.Record) move {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if r.opts.Txs == nil || r.opts.Nodes == nil {
		return move{wait: time.Minute} // no transaction manager: the deposit waits for a start with one
	}
	dep := d.Deposit
	now := r.opts.Now()
	fail := func(t inbound.Trigger, reason string) move {
		return move{update: inbound.Update{Trigger: t, At: now, Reason: reason}}
	}
	switch dep.State {
	case inbound.Received:
		m, err := r.bridge(ctx, d, now)
		if ref := (refusal{}); errors.As(err, &ref) {
			return fail(inbound.BridgeFailed, ref.reason)
		}
		return r.orWait(m, err, d)
	case inbound.Bridging:
		m, err := r.arrive(ctx, d, now)
		if ref := (refusal{}); errors.As(err, &ref) {
			return fail(inbound.BridgeFailed, ref.reason)
		}
		return r.orWait(m, err, d)
	case inbound.Swapping:
		m, err := r.swap(ctx, d, now)
		if ref := (refusal{}); errors.As(err, &ref) {
			return fail(inbound.SwapFailed, ref.reason)
		}
		return r.orWait(m, err, d)
	case inbound.Fallback:
		m, err := r.refund(ctx, d, now)
		if ref := (refusal{}); errors.As(err, &ref) {
			return fail(inbound.FallbackFailed, ref.reason)
		}
		return r.orWait(m, err, d)
	}
	return r.waitMove()
}

// orWait is m, or a wait after a passing failure (a node or the store
// not answering), logged.
func (r *Runner) orWait(m move, err error, d *inbound.Record) move {
	if err != nil {
		r.opts.Logger.Warn("inbound: step 2", "txHash", d.Deposit.Registration.TxHash.Hex(), "state", d.Deposit.State, "err", err)
		return r.waitMove()
	}
	return m
}

// bridge runs RECEIVED: the approval where needed, then transferRemote.
func (r *Runner) bridge(ctx context.Context, d *inbound.Record, now time.Time) (move, error) {
	dep := d.Deposit
	src := dep.SourceChain
	if r.opts.BridgeFails != nil && r.opts.BridgeFails(dep.Registration.TxHash.Hex()) {
		if _, ok := dep.Tx(inbound.StepBridge); !ok {
			return move{}, refusal{"the bridge to chain 369 could not be sent (the sandbox's failing bridge); the USDC waits with the operator account on chain " +
				strconv.FormatUint(src, 10) + " for an operator"}
		}
	}
	w, ok := r.opts.Contracts.WarpRoute(src)
	if !ok || w.Synthetic {
		return move{}, refusal{fmt.Sprintf("chain %d has no collateral warp route", src)}
	}
	op := r.opts.Txs.Account(src)
	if _, started := dep.Tx(inbound.StepBridge); !started {
		st, err := r.follow(ctx, d, inbound.StepApprove, src, func(ctx context.Context) (*txintent.Request, error) {
			return r.approval(ctx, src, dep.InputToken, op, w.Router, dep.AmountIn)
		})
		if err != nil || st.pending() {
			return st.move(r), err
		}
		if st.failed() {
			return move{}, refusal{"approve of the warp router failed: " + st.in.Reason + "; the USDC waits with the operator account on chain " +
				strconv.FormatUint(src, 10) + " for an operator"}
		}
	}
	// 369's block number before the bridge is submitted: its delivery
	// cannot come earlier.
	var pulseBlock uint64
	if _, started := dep.Tx(inbound.StepBridge); !started {
		b, err := r.opts.Nodes.BlockNumber(ctx, quote.PulseChainID)
		if err != nil {
			return move{}, fmt.Errorf("chain %d block number: %w", quote.PulseChainID, err)
		}
		pulseBlock = b
	}
	st, err := r.follow(ctx, d, inbound.StepBridge, src, func(ctx context.Context) (*txintent.Request, error) {
		call, err := pulseroute.QuoteGasPaymentCall(uint32(quote.PulseChainID))
		if err != nil {
			return nil, err
		}
		ret, err := r.opts.Nodes.CallContract(ctx, src, ethereum.CallMsg{From: op, To: &w.Router, Data: call})
		if err != nil {
			return nil, fmt.Errorf("quoteGasPayment on chain %d: %w", src, err)
		}
		out, err := pulseroute.UnpackOutputs(pulseroute.MethodQuoteGasPayment, ret)
		if err != nil || len(out) != 1 {
			return nil, fmt.Errorf("quoteGasPayment on chain %d: answer %x: %v", src, ret, err)
		}
		payment, _ := out[0].(*big.Int)
		data, err := pulseroute.TransferRemote(uint32(quote.PulseChainID), op, dep.AmountIn)
		if err != nil {
			return nil, err
		}
		return &txintent.Request{ChainID: src, To: w.Router, Data: data, Value: payment, GasLimit: gasTransferRemote}, nil
	})
	if st.save != nil {
		if t, _ := st.save.Tx(inbound.StepBridge); t.PulseBlock == 0 && pulseBlock > 0 {
			t.PulseBlock = pulseBlock
			p := st.save.WithTx(t)
			st.save = &p
		}
	}
	if err != nil || st.pending() {
		return st.move(r), err
	}
	if st.failed() {
		return move{}, refusal{"transferRemote failed: " + st.in.Reason + "; the USDC waits with the operator account on chain " +
			strconv.FormatUint(src, 10) + " for an operator"}
	}
	rc, err := r.opts.Nodes.TransactionReceipt(ctx, src, st.hash)
	if err != nil {
		return move{}, fmt.Errorf("bridge receipt: %w", err)
	}
	t, _ := dep.Tx(inbound.StepBridge)
	u := inbound.Update{Trigger: inbound.BridgeSent, At: now, TxHash: st.hash, FromBlock: t.PulseBlock}
	dispatch := pulseroute.ABI().Events["DispatchId"].ID
	for _, l := range rc.Logs {
		if len(l.Topics) == 2 && l.Topics[0] == dispatch {
			u.MessageID = l.Topics[1]
		}
	}
	return move{update: u}, nil
}

// arrive runs BRIDGING: the delivery on 369, then the USDCh to toAddress
// (outputToken USDCh) or the swap.
func (r *Runner) arrive(ctx context.Context, d *inbound.Record, now time.Time) (move, error) {
	dep := d.Deposit
	usdch := r.opts.Contracts.USDCh().Token
	direct := dep.Registration.OutputToken == usdch
	if _, delivering := dep.Tx(inbound.StepDeliver); !delivering {
		arrived, err := r.arrived(ctx, dep)
		if err != nil {
			return move{}, err
		}
		if !arrived {
			if now.Sub(dep.UpdatedAt) > r.opts.BridgeHorizon {
				return move{}, refusal{fmt.Sprintf("the bridge to chain 369 did not deliver within %s (message %s); the USDC is locked in the warp route of chain %d for an operator",
					r.opts.BridgeHorizon, dep.MessageID.Hex(), dep.SourceChain)}
			}
			return r.waitMove(), nil
		}
		if !direct {
			return move{update: inbound.Update{Trigger: inbound.Bridged, At: now}}, nil
		}
	}
	st, err := r.follow(ctx, d, inbound.StepDeliver, quote.PulseChainID, r.transfer(usdch, dep.Registration.ToAddress, dep.AmountIn))
	if err != nil || st.pending() {
		return st.move(r), err
	}
	if st.failed() {
		return move{}, refusal{"the USDCh transfer to toAddress failed: " + st.in.Reason + "; the USDCh waits with the operator account on chain 369 for an operator"}
	}
	return move{update: inbound.Update{Trigger: inbound.Delivered, At: now, TxHash: st.hash, AmountOut: dep.AmountIn}}, nil
}

// arrived reports whether the bridge's message was processed on 369: its
// ProcessId log, which the warp route's delivery emits (the mailbox's on
// chain). A bridge whose receipt named no message cannot be followed and
// waits for its horizon.
func (r *Runner) arrived(ctx context.Context, dep inbound.Deposit) (bool, error) {
	if dep.MessageID == (common.Hash{}) {
		return false, nil
	}
	logs, err := r.opts.Nodes.FilterLogs(ctx, quote.PulseChainID, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(dep.DeliveryFromBlock),
		Topics:    [][]common.Hash{{pulseroute.ABI().Events["ProcessId"].ID}, {dep.MessageID}}})
	if err != nil {
		return false, fmt.Errorf("chain %d logs: %w", quote.PulseChainID, err)
	}
	for _, l := range logs {
		if !l.Removed {
			return true, nil
		}
	}
	return false, nil
}

// swap runs SWAPPING: the minimum checked again, the approval where needed
// and the swap; or the fallback.
func (r *Runner) swap(ctx context.Context, d *inbound.Record, now time.Time) (move, error) {
	dep := d.Deposit
	usdch := r.opts.Contracts.USDCh().Token
	px := r.opts.Contracts.PulseX()
	op := r.opts.Txs.Account(quote.PulseChainID)
	native := dep.Registration.OutputToken == (common.Address{})
	path := []common.Address{usdch, dep.Registration.OutputToken}
	if native {
		path[1] = px.WPLS
	}
	if _, started := dep.Tx(inbound.StepSwap); !started {
		// A swap submitted before a restart is followed, never decided
		// again.
		if in, err := r.opts.Txs.IntentByKey(ctx, inbound.IntentKey(dep.Registration.TxHash, inbound.StepSwap)); err == nil {
			p := dep.WithTx(inbound.StepTx{Step: inbound.StepSwap, ChainID: quote.PulseChainID, IntentID: in.ID})
			return move{progress: &p}, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return move{}, err
		}
		st, err := r.follow(ctx, d, inbound.StepSwapApprove, quote.PulseChainID, func(ctx context.Context) (*txintent.Request, error) {
			return r.approval(ctx, quote.PulseChainID, usdch, op, px.Router, dep.AmountIn)
		})
		if err != nil || st.pending() {
			return st.move(r), err
		}
		if st.failed() {
			return move{}, refusal{"approve of the PulseX router failed: " + st.in.Reason}
		}
	}
	st, err := r.follow(ctx, d, inbound.StepSwap, quote.PulseChainID, func(ctx context.Context) (*txintent.Request, error) {
		out, err := r.amountsOut(ctx, dep.AmountIn, path)
		if err != nil {
			return nil, err
		}
		min, err := r.minimum(ctx, d, out)
		if err != nil {
			return nil, err
		}
		if out.Cmp(min) < 0 {
			return nil, refusal{fmt.Sprintf("PulseX getAmountsOut gives %s, under the quote's minimum output %s", out, min)}
		}
		deadline := big.NewInt(now.Add(r.opts.SwapDeadline).Unix())
		var data []byte
		if native {
			data, err = pulseroute.ABI().Pack(pulseroute.MethodSwapExactTokensForETH, dep.AmountIn, min, path, dep.Registration.ToAddress, deadline)
		} else {
			data, err = pulseroute.SwapExactTokensForTokens(dep.AmountIn, min, path, dep.Registration.ToAddress, deadline)
		}
		if err != nil {
			return nil, err
		}
		return &txintent.Request{ChainID: quote.PulseChainID, To: px.Router, Data: data, GasLimit: gasSwapPerHop * uint64(len(path)-1)}, nil
	})
	if err != nil || st.pending() {
		return st.move(r), err
	}
	if st.failed() {
		return move{}, refusal{"the PulseX swap failed: " + st.in.Reason}
	}
	amount, err := r.swapped(ctx, st, dep.Registration.ToAddress)
	if err != nil {
		return move{}, err
	}
	return move{update: inbound.Update{Trigger: inbound.Swapped, At: now, TxHash: st.hash, AmountOut: amount}}, nil
}

// refund runs FALLBACK: the bridged USDCh to toAddress. A swap intent
// that is not failed (submitted by a node that still ran the deposit when
// another decided the fallback, in a cluster's handover) is waited for,
// and one that paid stops the fallback: the user is paid once.
func (r *Runner) refund(ctx context.Context, d *inbound.Record, now time.Time) (move, error) {
	dep := d.Deposit
	if _, started := dep.Tx(inbound.StepFallback); !started {
		in, err := r.opts.Txs.IntentByKey(ctx, inbound.IntentKey(dep.Registration.TxHash, inbound.StepSwap))
		switch {
		case err == nil && !in.Final():
			return r.waitMove(), nil
		case err == nil && in.State != txintent.Failed:
			return move{}, refusal{"the swap " + minedHash(in).Hex() + " paid toAddress after the fallback was decided; no fallback"}
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return move{}, err
		}
	}
	st, err := r.follow(ctx, d, inbound.StepFallback, quote.PulseChainID, r.transfer(r.opts.Contracts.USDCh().Token, dep.Registration.ToAddress, dep.AmountIn))
	if err != nil || st.pending() {
		return st.move(r), err
	}
	if st.failed() {
		return move{}, refusal{"the fallback's USDCh transfer to toAddress failed: " + st.in.Reason + "; the USDCh waits with the operator account on chain 369 for an operator"}
	}
	return move{update: inbound.Update{Trigger: inbound.Refunded, At: now, TxHash: st.hash, AmountOut: dep.AmountIn}}, nil
}

// minimum is the output the swap must give: the quote's toAmountMin, when
// the deposit's quote is known (its ticket, even expired). A deposit whose
// step 1 named no quote the service issued (a transfer to the inbound
// receiver made without one) has none: its minimum is what PulseX gives
// now, out, less DefaultSlippageBps.
func (r *Runner) minimum(ctx context.Context, d *inbound.Record, out *big.Int) (*big.Int, error) {
	if d.QuoteID != "" && r.tickets != nil {
		t, err := r.tickets.Ticket(ctx, d.QuoteID)
		if err == nil {
			if min, ok := new(big.Int).SetString(t.ToAmountMin, 10); ok && min.Sign() > 0 {
				return min, nil
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("quote %s: %w", d.QuoteID, err)
		}
	}
	min := new(big.Int).Mul(out, big.NewInt(10_000-DefaultSlippageBps))
	return min.Div(min, big.NewInt(10_000)), nil
}

// amountsOut is the PulseX router's getAmountsOut's last amount; a
// revert (no pair, no liquidity) is a refusal.
func (r *Runner) amountsOut(ctx context.Context, amount *big.Int, path []common.Address) (*big.Int, error) {
	call, err := pulseroute.GetAmountsOutCall(amount, path)
	if err != nil {
		return nil, err
	}
	router := r.opts.Contracts.PulseX().Router
	ret, err := r.opts.Nodes.CallContract(ctx, quote.PulseChainID, ethereum.CallMsg{To: &router, Data: call})
	if err != nil {
		if strings.Contains(err.Error(), "revert") {
			return nil, refusal{"PulseX getAmountsOut reverted: " + err.Error()}
		}
		return nil, fmt.Errorf("getAmountsOut: %w", err)
	}
	outs, err := pulseroute.UnpackOutputs(pulseroute.MethodGetAmountsOut, ret)
	if err != nil || len(outs) != 1 {
		return nil, fmt.Errorf("getAmountsOut answer %x: %v", ret, err)
	}
	amounts, _ := outs[0].([]*big.Int)
	if len(amounts) != len(path) {
		return nil, fmt.Errorf("getAmountsOut answered %d amounts for a path of %d", len(amounts), len(path))
	}
	return amounts[len(amounts)-1], nil
}

// swapped is what the swap paid toAddress: the output of the receipt's
// last Swap log (the last hop's pair), or the output token's Transfer to
// toAddress; else the swap's amountOutMin, which the router guaranteed.
func (r *Runner) swapped(ctx context.Context, st stepState, to common.Address) (*big.Int, error) {
	rc, err := r.opts.Nodes.TransactionReceipt(ctx, quote.PulseChainID, st.hash)
	if err != nil {
		return nil, fmt.Errorf("swap receipt: %w", err)
	}
	ev := pulseroute.ABI().Events
	var out *big.Int
	for _, l := range rc.Logs {
		if len(l.Topics) == 3 && l.Topics[0] == ev["Swap"].ID && len(l.Data) == 128 {
			a0 := new(big.Int).SetBytes(l.Data[64:96])
			out = a0.Add(a0, new(big.Int).SetBytes(l.Data[96:128]))
		}
	}
	if out != nil && out.Sign() > 0 {
		return out, nil
	}
	transfer := common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
	for _, l := range rc.Logs {
		if len(l.Topics) == 3 && l.Topics[0] == transfer && common.BytesToAddress(l.Topics[2].Bytes()) == to {
			out = new(big.Int).SetBytes(l.Data)
		}
	}
	if out != nil && out.Sign() > 0 {
		return out, nil
	}
	_, args, err := pulseroute.Decode(st.in.Data)
	if err != nil || len(args) < 2 {
		return nil, fmt.Errorf("swap %s: no output in its receipt: %v", st.hash.Hex(), err)
	}
	min, _ := args[1].(*big.Int)
	return min, nil
}

// transfer builds an ERC-20 transfer on 369 from the operator account.
func (r *Runner) transfer(token, to common.Address, amount *big.Int) func(context.Context) (*txintent.Request, error) {
	return func(context.Context) (*txintent.Request, error) {
		data, err := pulseroute.ABI().Pack(pulseroute.MethodTransfer, to, amount)
		if err != nil {
			return nil, err
		}
		return &txintent.Request{ChainID: quote.PulseChainID, To: token, Data: data, GasLimit: gasTransfer}, nil
	}
}

// approval is approve(spender, 2^256-1) on token when owner's allowance is
// short of amount; nil (no transaction) when it is not.
func (r *Runner) approval(ctx context.Context, chainID uint64, token, owner, spender common.Address, amount *big.Int) (*txintent.Request, error) {
	call, err := pulseroute.ABI().Pack(pulseroute.MethodAllowance, owner, spender)
	if err != nil {
		return nil, err
	}
	ret, err := r.opts.Nodes.CallContract(ctx, chainID, ethereum.CallMsg{From: owner, To: &token, Data: call})
	if err != nil {
		return nil, fmt.Errorf("allowance on chain %d: %w", chainID, err)
	}
	if len(ret) == 32 && new(big.Int).SetBytes(ret).Cmp(amount) >= 0 {
		return nil, nil
	}
	data, err := pulseroute.ABI().Pack(pulseroute.MethodApprove, spender, maxAllowance)
	if err != nil {
		return nil, err
	}
	return &txintent.Request{ChainID: chainID, To: token, Data: data, GasLimit: gasApprove}, nil
}

// stepState is where one step's intent is.
type stepState struct {
	// in is the intent (nil: none needed, or a progress to save first).
	in *txintent.Intent
	// hash is its mined transaction's.
	hash common.Hash
	// save is the deposit with the step's intent or hash named, to save
	// before going on.
	save *inbound.Deposit
	// wait: the intent is not final yet.
	wait bool
}

func (s stepState) pending() bool { return s.save != nil || s.wait }

func (s stepState) failed() bool { return s.in != nil && s.in.State == txintent.Failed }

func (s stepState) move(r *Runner) move {
	if s.save != nil {
		return move{progress: s.save}
	}
	return r.waitMove()
}

// follow moves one step's intent on: submitted when neither the deposit
// nor the transaction manager knows one (build makes its request; nil
// means the step needs no transaction), its id saved in the deposit, then
// read until final, its mined hash saved. A refusal from build ends the
// step's state.
func (r *Runner) follow(ctx context.Context, d *inbound.Record, step string, chainID uint64,
	build func(context.Context) (*txintent.Request, error)) (stepState, error) {
	dep := d.Deposit
	key := inbound.IntentKey(dep.Registration.TxHash, step)
	rec, known := dep.Tx(step)
	var in *txintent.Intent
	var err error
	switch {
	case known && rec.IntentID == "":
		return stepState{}, nil // no transaction was needed
	case known:
		if in, err = r.opts.Txs.Intent(ctx, rec.IntentID); err != nil {
			return stepState{}, fmt.Errorf("intent %s: %w", rec.IntentID, err)
		}
	default:
		in, err = r.opts.Txs.IntentByKey(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			req, err := build(ctx)
			if err != nil {
				return stepState{}, err
			}
			if req == nil {
				p := dep.WithTx(inbound.StepTx{Step: step, ChainID: chainID})
				return stepState{save: &p}, nil
			}
			req.Purpose, req.Key = purposePrefix+step, key
			if in, err = r.opts.Txs.Submit(ctx, *req); err != nil {
				return stepState{}, fmt.Errorf("submit %s: %w", key, err)
			}
		} else if err != nil {
			return stepState{}, fmt.Errorf("intent %s: %w", key, err)
		}
		p := dep.WithTx(inbound.StepTx{Step: step, ChainID: chainID, IntentID: in.ID})
		return stepState{save: &p}, nil
	}
	if !in.Final() {
		return stepState{in: in, wait: true}, nil
	}
	h := minedHash(in)
	if h != (common.Hash{}) && rec.TxHash != h {
		rec.TxHash = h
		p := dep.WithTx(rec)
		return stepState{save: &p}, nil
	}
	return stepState{in: in, hash: h}, nil
}

// minedHash is the hash of the intent's transaction that was mined (a
// confirmed one, or a reverted one), zero when none was.
func minedHash(in *txintent.Intent) common.Hash {
	for _, t := range in.Txs {
		if t.BlockNumber != 0 {
			return common.HexToHash(t.Hash)
		}
	}
	return common.Hash{}
}
