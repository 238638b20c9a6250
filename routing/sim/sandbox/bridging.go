package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// Ledger is what simulated bridging reads and does on the sandbox chains:
// the outcome of a source transaction, and a delivery (a mint by the
// bridge) on a chain, idempotent by reference so that a repeated poll
// never delivers twice.
type Ledger interface {
	// Outcome reports whether hash is mined on chainID, and if so whether
	// it succeeded, its revert reason and when it was mined.
	Outcome(ctx context.Context, chainID uint64, hash string) (found, succeeded bool, reason string, minedAt time.Time, err error)
	// Deliver credits amount of token to to on chainID for ref and returns
	// the delivery's transaction hash; a second call with the same ref
	// returns the first delivery.
	// A chain without a simulation (Solana, the intents chains) gets a
	// recorded delivery with a synthetic hash.
	Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (txHash string, err error)
}

// WarpLedger is what bridging reads of the warp route's relayer, where the
// ledger offers it: a swap whose source transaction dispatched a warp-route
// message (a direct pulseroute route) is delivered by the sandbox's
// Hyperlane relayer, not by bridging, which only watches for it.
type WarpLedger interface {
	// WarpArrival finds the warp-route message the transaction hash on
	// chainID dispatched, if any, and its delivery.
	WarpArrival(ctx context.Context, chainID uint64, hash string) (WarpArrival, error)
}

// WarpArrival is a warp-route message and its delivery.
type WarpArrival struct {
	// Sent: the transaction dispatched a message, to Recipient, of Amount
	// of Token (the destination's side of the route).
	Sent                     bool
	MessageID                string
	Recipient, Amount, Token string
	// Delivered: the relayer's transaction TxHash delivered it, at At.
	Delivered bool
	TxHash    string
	At        time.Time
}

// BridgingConfig tunes simulated bridging.
type BridgingConfig struct {
	// DurationScale multiplies a route's quoted execution duration: 1
	// takes as long as the quote said, 0 delivers at the first poll.
	DurationScale float64
	// FailureRate is the share of bridged swaps that fail at the bridge
	// and are refunded on the source chain (decided by the transaction
	// hash, so the same swap always ends alike).
	FailureRate float64
}

// Bridging is the sandbox's status source: it follows a swap's source
// transaction on the sandbox chain and, for a cross-chain route, delivers
// the output on the destination chain once the quoted duration has passed
// (or refunds the input on the source chain when the bridge fails). A
// route over the warp route (pulseroute's direct routes) is the relayer's
// to deliver (see warp).
type Bridging struct {
	ledger Ledger
	cfg    BridgingConfig
	now    func() time.Time
}

// NewBridging returns the sandbox status source over ledger.
func NewBridging(ledger Ledger, cfg BridgingConfig, now func() time.Time) *Bridging {
	if now == nil {
		now = time.Now
	}
	return &Bridging{ledger: ledger, cfg: cfg, now: now}
}

// SwapStatus observes s.
func (b *Bridging) SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error) {
	found, ok, reason, minedAt, err := b.ledger.Outcome(ctx, s.FromChain, s.Sending.TxHash)
	switch {
	case err != nil:
		return swap.Observation{}, err
	case !found:
		return swap.Observation{Status: swap.StatusNotFound}, nil
	case !ok:
		return swap.Observation{Status: swap.StatusFailed, Substatus: failureSubstatus(reason),
			SubstatusMessage: "the source transaction reverted: " + reason, SendingTimestamp: minedAt.Unix()}, nil
	}
	sent := minedAt.Unix()
	if s.FromChain == s.ToChain {
		// A swap on one chain is done when its transaction is mined: the
		// router paid the receiver in the same transaction.
		return swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SendingTimestamp: sent,
			SubstatusMessage: "the swap is complete",
			Receiving:        swap.Leg{TxHash: s.Sending.TxHash, ChainID: s.ToChain, Amount: s.ToAmount, Token: s.ToToken, Timestamp: sent}}, nil
	}
	if wl, ok := b.ledger.(WarpLedger); ok && (s.FromChain == quote.PulseChainID || s.ToChain == quote.PulseChainID) {
		a, err := wl.WarpArrival(ctx, s.FromChain, s.Sending.TxHash)
		if err != nil {
			return swap.Observation{}, err
		}
		if a.Sent {
			return b.warp(ctx, s, sent, a)
		}
	}
	wait := time.Duration(float64(time.Duration(s.ExpectedDuration)*time.Second) * b.cfg.DurationScale)
	if s.Scenario == scenario.Slow {
		wait *= scenario.SlowFactor
	}
	if s.Scenario == scenario.Stuck || b.now().Before(minedAt.Add(wait)) {
		// A stuck bridge never delivers: the swap waits until the
		// tracker's horizon gives up on it.
		if s.Scenario == scenario.IncompleteDeposit {
			return swap.Observation{Status: swap.StatusPending, Substatus: swap.Partial, SendingTimestamp: sent,
				SubstatusMessage: "the deposit is short of the quoted amount; it is refunded unless the rest arrives before the deadline"}, nil
		}
		return swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction, SendingTimestamp: sent,
			SubstatusMessage: "the bridge is delivering to chain " + uintString(s.ToChain)}, nil
	}
	switch {
	case s.Scenario == scenario.IncompleteDeposit:
		return b.refund(ctx, s, sent, s.FromAmount, "the deposit was short of the quoted amount and was refunded on the source chain")
	case s.Scenario == scenario.Refund || b.fails(s.ID):
		return b.refund(ctx, s, sent, s.FromAmount, "the bridge failed; the input was refunded on the source chain")
	case s.Scenario == scenario.Partial:
		return b.partial(ctx, s, sent)
	}
	amount, _ := new(big.Int).SetString(s.ToAmount, 10)
	h, err := b.ledger.Deliver(ctx, s.ToChain, s.ID+"/deliver", s.ToAddress, s.ToToken, amount)
	if err != nil {
		return swap.Observation{}, err
	}
	return swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SendingTimestamp: sent,
		SubstatusMessage: "the transfer is complete",
		Receiving:        swap.Leg{TxHash: h, ChainID: s.ToChain, Amount: s.ToAmount, Token: s.ToToken, Timestamp: b.now().Unix()}}, nil
}

// warp observes a swap whose source transaction sent a warp-route message,
// which the sandbox's relayer delivers after the bridge time, whoever sent
// it: the swap waits for that delivery. When the swap's output is what the
// warp route delivers (USDCh on 369, USDC on a collateral chain), the
// relayer's transaction is the receiving one, and bridging delivers
// nothing itself. Otherwise (bridgeAndSwap into another token, whose
// USDCh arrived at the arrival desk) the swap on arrival is bridging's:
// the output paid to the user once, by the swap's delivery reference, as
// for every other route. The bridge scenarios and failure rate play on the
// simulated bridges, not on the warp route: its relayer delivers every
// message.
func (b *Bridging) warp(ctx context.Context, s *swap.Swap, sent int64, a WarpArrival) (swap.Observation, error) {
	if !a.Delivered {
		return swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction, SendingTimestamp: sent,
			SubstatusMessage: "the warp route's relayer is delivering message " + a.MessageID + " to chain " + uintString(s.ToChain)}, nil
	}
	if strings.EqualFold(a.Token, s.ToToken) {
		return swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SendingTimestamp: sent,
			SubstatusMessage: "the transfer is complete",
			Receiving:        swap.Leg{TxHash: a.TxHash, ChainID: s.ToChain, Amount: a.Amount, Token: s.ToToken, Timestamp: a.At.Unix()}}, nil
	}
	amount, _ := new(big.Int).SetString(s.ToAmount, 10)
	h, err := b.ledger.Deliver(ctx, s.ToChain, s.ID+"/deliver", s.ToAddress, s.ToToken, amount)
	if err != nil {
		return swap.Observation{}, err
	}
	return swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed, SendingTimestamp: sent,
		SubstatusMessage: "the transfer and the swap on arrival are complete",
		Receiving:        swap.Leg{TxHash: h, ChainID: s.ToChain, Amount: s.ToAmount, Token: s.ToToken, Timestamp: b.now().Unix()}}, nil
}

// refund pays amount of the input back on the source chain, to the swap's
// refund destination, and observes the swap DONE / REFUNDED.
func (b *Bridging) refund(ctx context.Context, s *swap.Swap, sent int64, amount, message string) (swap.Observation, error) {
	a, _ := new(big.Int).SetString(amount, 10)
	h, err := b.ledger.Deliver(ctx, s.FromChain, s.ID+"/refund", refundAddress(s), s.FromToken, a)
	if err != nil {
		return swap.Observation{}, err
	}
	return swap.Observation{Status: swap.StatusDone, Substatus: swap.Refunded, SendingTimestamp: sent,
		SubstatusMessage: message,
		Receiving:        swap.Leg{TxHash: h, ChainID: s.FromChain, Amount: amount, Token: s.FromToken, Timestamp: b.now().Unix()}}, nil
}

// partial fills half of a swap (the partial scenario): half the quoted
// output delivered on the destination chain, the unfilled half of the
// input refunded on the source chain, DONE / PARTIAL.
func (b *Bridging) partial(ctx context.Context, s *swap.Swap, sent int64) (swap.Observation, error) {
	out, _ := new(big.Int).SetString(s.ToAmount, 10)
	in, _ := new(big.Int).SetString(s.FromAmount, 10)
	out.Rsh(out, 1)
	back := new(big.Int).Sub(in, new(big.Int).Rsh(in, 1))
	h, err := b.ledger.Deliver(ctx, s.ToChain, s.ID+"/deliver", s.ToAddress, s.ToToken, out)
	if err != nil {
		return swap.Observation{}, err
	}
	if _, err := b.ledger.Deliver(ctx, s.FromChain, s.ID+"/refund", refundAddress(s), s.FromToken, back); err != nil {
		return swap.Observation{}, err
	}
	return swap.Observation{Status: swap.StatusDone, Substatus: swap.Partial, SendingTimestamp: sent,
		SubstatusMessage: "half of the input was filled; the other " + back.String() + " was refunded on the source chain",
		Receiving:        swap.Leg{TxHash: h, ChainID: s.ToChain, Amount: out.String(), Token: s.ToToken, Timestamp: b.now().Unix()}}, nil
}

// refundAddress is where a refund goes on the source chain: the quote's
// refundTo, or the address that sent the input when it named none.
func refundAddress(s *swap.Swap) string { return s.RefundAddress() }

// fails decides, by the swap's hash, whether its bridge fails.
func (b *Bridging) fails(id string) bool { return BridgeFails(b.cfg.FailureRate, id) }

// BridgeFails decides whether the sandbox bridge of the transfer named key
// (a swap's or a multi-step deposit's source transaction hash) fails, when
// rate is the share of sandbox bridges that fail. The decision is a hash of
// key mapped to [0,1), not a draw, so that a transfer polled again, resumed
// after a restart or replayed by a test always ends alike, and a rate of 1
// fails every bridge.
func BridgeFails(rate float64, key string) bool {
	if rate <= 0 {
		return false
	}
	sum := sha256.Sum256([]byte("bridge-failure/" + key))
	return float64(binary.BigEndian.Uint64(sum[:8])>>11)/(1<<53) < rate
}

// failureSubstatus maps a revert reason to LI.FI's failure substatus.
func failureSubstatus(reason string) string {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "allowance"):
		return swap.InsufficientAllowance
	case strings.Contains(r, "balance") || strings.Contains(r, "insufficient funds"):
		return swap.InsufficientBalance
	case strings.Contains(r, "out of gas"):
		return swap.OutOfGas
	case strings.Contains(r, "slippage") || strings.Contains(r, "min"):
		return swap.SlippageExceeded
	}
	return swap.UnknownFailedError
}

func uintString(v uint64) string { return new(big.Int).SetUint64(v).String() }
